"""Chapter 6: flags in child processes, per-compilation options, and the
registry of the book's flags."""

import pytest

from helpers import flag_registry, xla_flags
from helpers.workbook import flags

OWN_FUSIONS = "--xla_cpu_experimental_ynn_fusion_type="


def test_a_flag_in_a_child_changes_the_compiled_module():
    default = flags.in_child("reduction", "", {"JAX_PLATFORMS": "cpu"})
    own = flags.in_child("reduction", OWN_FUSIONS, {"JAX_PLATFORMS": "cpu"})
    assert "kCustom" in default["fusion kinds"]
    assert "kCustom" not in own["fusion kinds"]
    assert own["fusion kinds"].get("kLoop", 0) >= 1
    assert own["median s"] > 0 and own["compile s"] > 0


def test_an_unknown_flag_kills_only_the_child():
    made_up = "--xla_" + "no_such_flag=1"
    out = flags.in_child("reduction", made_up)
    assert out["returncode"] != 0 and "Unknown flag" in out["error"]


def test_unknown_programs_are_named():
    with pytest.raises(ValueError, match="choose one of"):
        flags.in_child("no such program")


def test_every_program_measures_here():
    for name in flags.PROGRAMS:
        result = flags.measure(name, repeat=3)
        assert result["program"] == name and result["kernels"] >= 1


def test_printed_defaults_include_some_flags():
    printed = xla_flags.printed_defaults()
    assert printed.get("--xla_backend_optimization_level") == "3"


def test_registry_table_and_unlisted_flags():
    table = flag_registry.table(read_installed=False)
    assert set(table.index) == set(flag_registry.FLAGS)
    assert (table["what it does"].str.len() > 10).all()
    documented = table[table["default (documented)"] != ""]
    assert documented["source"].str.startswith("https://").all()
    assert flag_registry.unlisted(["--xla_dump_to=/tmp",
                                   "--xla_made_up"]) == ["--xla_made_up"]
