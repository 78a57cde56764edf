import json

import pytest

from helpers.measuring import capability, environment, machine

from book_paths import ROOT


def test_describe_has_provenance_and_is_json():
    info = machine.describe()
    for key in ("backend", "device", "compute_capability", "memory_bytes",
                "driver", "jax", "jaxlib", "xla_flags", "colab", "date"):
        assert key in info
    assert info["backend"] == "cpu"
    assert info["driver"] is None and info["compute_capability"] is None
    assert info["date"].endswith("+00:00")
    json.dumps(info)


def test_the_host_cpu_is_named_with_its_cores(monkeypatch, tmp_path):
    import os
    from pathlib import Path

    assert machine.describe()["cpu"] == machine.cpu_model()
    real_read = Path.read_text
    cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core " \
        "Processor\nflags\t: fpu\n"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: cpuinfo
                        if str(self) == "/proc/cpuinfo"
                        else real_read(self, *a, **k))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2},
                        raising=False)
    assert machine.cpu_model() == "AMD EPYC 9654 96-Core Processor, 3 cores"


def test_describe_reads_xla_flags(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    assert machine.describe()["xla_flags"] == "--xla_dump_to=/tmp/x"


def test_summary_is_one_line_with_versions():
    import jax

    line = machine.summary()
    assert "\n" not in line
    assert f"jax {jax.__version__}" in line
    assert f"{len(jax.devices())} device" in line


def test_format_provenance_of_a_gpu():
    info = {"device": "NVIDIA H100 80GB HBM3", "backend": "gpu",
            "compute_capability": "9.0", "memory_bytes": 63763906560,
            "total_memory_bytes": 81559 * 2**20,
            "device_count": 1, "driver": "550.54", "jax": "0.11.0",
            "jaxlib": "0.11.0", "xla_flags": "", "colab": False,
            "date": "2026-11-22T00:00:00+00:00"}
    line = machine.format_provenance(info)
    # the device's memory, and the 75% of it JAX's allocator may use
    assert line.startswith("NVIDIA H100 80GB HBM3 (gpu, sm_90, 79.6 GiB, "
                           "JAX may use 59.4 GiB)")
    assert "driver 550.54" in line and line.endswith("2026-11-22")
    assert machine.device_slug(info) == "nvidia-h100-80gb-hbm3"
    del info["total_memory_bytes"]  # nvidia-smi gave no total: the limit
    line = machine.format_provenance(info)
    assert "(gpu, sm_90, JAX may use 59.4 GiB)" in line


def test_on_cpu_there_is_no_gpu():
    assert machine.on_gpu() is False
    assert machine.gpu_arch() is None


def test_sizes_picks_the_cpu_value():
    assert machine.sizes(gpu=2**28, cpu=2**10) == 2**10


def test_sizes_needs_both():
    with pytest.raises(ValueError, match="needs both"):
        machine.sizes(gpu=None, cpu=3)


def test_colab_setup_does_nothing_outside_colab(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert machine.in_colab() is False
    assert machine.colab_setup() == []


def test_colab_setup_installs_missing(monkeypatch, capsys):
    calls = []
    monkeypatch.setenv("COLAB_RELEASE_TAG", "test")
    monkeypatch.setattr(machine.subprocess, "run",
                        lambda cmd, check: calls.append(cmd))
    installed = machine.colab_setup({"json": "json",
                                 "surely_not_a_module_xyz": "xyz-pkg"})
    assert installed == ["xyz-pkg"]
    assert calls and calls[0][-1] == "xyz-pkg"
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("Installing xyz-pkg, which Colab lacks")
    assert said[1] == ("To keep your edits, save a copy: File > Save a "
                       "copy in Drive.")
    # once a runtime: the next chapter's setup finds it and says only how
    # to keep the edits
    assert machine.colab_setup({"json": "json"}) == []
    assert capsys.readouterr().out.splitlines() == said[1:]


def test_missing_packages():
    assert machine.missing_packages({"json": "json"}) == []
    assert machine.missing_packages({"no_such_mod_q": "q"}) == ["q"]


def test_capabilities_by_architecture():
    t4 = capability.capabilities((7, 5))
    assert not t4["bf16 tensor cores"]
    assert str(t4["bf16 tensor cores"]).startswith(
        "no: needs compute capability 8.0")
    assert t4["bf16 tensor cores"].needs == (8, 0)
    assert t4["Pallas (Mosaic GPU backend)"].reason.endswith("this is 7.5")
    assert t4["Pallas (Mosaic GPU backend)"].needs == (9, 0)
    h100 = capability.capabilities((9, 0))
    assert h100["Pallas (Mosaic GPU backend)"]
    assert str(h100["Pallas (Mosaic GPU backend)"]) == "yes"
    assert not capability.capabilities((8, 6))["Pallas (Mosaic GPU backend)"]
    here = capability.capabilities()["bf16 tensor cores"]
    assert str(here) == "no: no CUDA GPU here" and here.needs is None


def test_what_a_gpu_lacks_is_one_reason_or_nothing():
    assert capability.lacking("Pallas (Triton backend)", (7, 5)) == (
        "needs compute capability 8.0 (Ampere) or newer; this is 7.5")
    assert capability.lacking("Pallas (Mosaic GPU backend)", (8, 0)) == (
        "needs compute capability 9.0 (Hopper) or newer; this is 8.0")
    assert capability.lacking("bf16 tensor cores", (9, 0)) == ""
    # off a GPU, with no capability named, every kernel runs in Pallas's
    # interpreter: nothing is left out
    assert capability.lacking("Pallas (Mosaic GPU backend)") == ""
    with pytest.raises(ValueError, match="name one of"):
        capability.lacking("Pallas (Mosaic)", (9, 0))


def test_jax_minimum_is_the_one_pyproject_asks_for():
    import tomllib

    project = tomllib.loads((ROOT /
                             "pyproject.toml").read_text())["project"]
    needed = ".".join(map(str, machine.JAX_MINIMUM))
    assert f"jax>={needed}" in project["dependencies"]


def test_an_old_jax_is_named_with_the_fix():
    problem = machine.jax_version_problem("0.4.32")
    assert "JAX 0.4.32 is older than the book needs" in problem
    assert "pip install -U" in problem and "restart" in problem.lower()
    assert machine.jax_version_problem("0.10.0") is None
    assert machine.jax_version_problem("0.10.2.dev20261101") is None
    assert machine.jax_version_problem("1.0") is None


def test_colab_setup_stops_on_an_old_jax(monkeypatch):
    import jax

    monkeypatch.setattr(jax, "__version__", "0.4.26")
    with pytest.raises(RuntimeError, match="older than the book needs"):
        machine.colab_setup()


def test_the_environment_table_names_every_fact_in_words(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    table = environment.table()["value"]
    assert set(environment.DESCRIBED_AS.values()) <= set(table.index)
    assert not any("_" in name for name in table.index
                   if name != "XLA_FLAGS")
    assert table["XLA_FLAGS"] == "none set"
    assert table["on Colab"] in ("yes", "no")
    assert "Pallas (Triton backend)" in table
