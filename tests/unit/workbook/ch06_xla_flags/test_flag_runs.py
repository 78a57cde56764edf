"""Chapter 6: flags in child processes, per-compilation options, and the
registry of the book's flags."""

import pandas as pd
import pytest

from helpers.workbook.ch03_launches import on_gpu
from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.xla import crosscompile, flag_registry, fresh_process, known_flags

OWN_FUSIONS = "--xla_cpu_experimental_ynn_fusion_type="


@pytest.mark.slow
def test_a_flag_in_a_child_changes_the_compiled_module():
    default = flag_runs.in_child("reduction", "", {"JAX_PLATFORMS": "cpu"})
    own = flag_runs.in_child("reduction", OWN_FUSIONS,
                             {"JAX_PLATFORMS": "cpu"})
    assert "kCustom" in default["fusion kinds"]
    assert "kCustom" not in own["fusion kinds"]
    assert own["fusion kinds"].get("kLoop", 0) >= 1
    assert own["median s"] > 0 and own["compile s"] > 0


@pytest.mark.slow
def test_an_unknown_flag_kills_only_the_child():
    made_up = "--xla_" + "no_such_flag=1"
    with pytest.raises(fresh_process.ChildFailed) as err:
        flag_runs.in_child("reduction", made_up)
    assert err.value.returncode != 0 and "Unknown flag" in err.value.output


@pytest.mark.slow
def test_automatic_pgle_compiles_the_program_a_second_time():
    # JAX profiles the first JAX_PGLE_PROFILING_RUNS calls, then compiles
    # again; the evidence chapter 6 shows, measurable on a CPU
    without = fresh_process.call(flag_runs.measure_jit, "small_kernels", 4, 3)
    with_pgle = fresh_process.call(flag_runs.measure_jit, "small_kernels",
                                   4, 3, env=flag_runs.PGLE)
    assert (without["compilations"], with_pgle["compilations"]) == (1, 2)
    assert with_pgle["pgle"] and not without["pgle"]
    with pytest.raises(ValueError, match="must exceed"):
        flag_runs.measure_jit("small_kernels", calls=2)


@pytest.mark.slow
def test_the_gpu_measurement_runs_here_as_a_dry_run():
    # every child of the GPU recording, on this CPU at its small sizes: XLA
    # parses the GPU flags here too, so no code path is new on the GPU
    out = flag_runs.measure_on_gpu({"reduction": ["", "--xla_gpu_autotune_"
                                              "level=0", "--xla_made_up=1"]},
                               repeat=3)
    rows = out["rows"]
    assert [r["flags"] for r in rows][:2] == ["(none)", flag_runs.AGAIN]
    assert all(r["median s"] > 0 and r["wall s"] > 0 for r in rows[:3])
    # the same program in two processes compiles to the same module
    assert rows[0]["module"] == rows[1]["module"]
    assert "Unknown flag" in rows[3]["error"]  # one bad row, not a crash
    assert out["auto_pgle"]["with"]["compilations"] == 2
    assert set(out["auto_pgle"]) == {"without", "without, again", "with"}


def test_a_module_digest_ignores_metadata_but_not_the_program():
    one = ('%a = f32[2] add(%x, %y), metadata={op_name="jit(f)/add" '
           'source_file="a.py"}')
    other = ('%a = f32[2] add(%x, %y), metadata={op_name="jit(g)/add" '
             'source_file="b.py"}')
    assert flag_runs.module_digest(one) == flag_runs.module_digest(other)
    assert flag_runs.module_digest(one) != flag_runs.module_digest(
        one.replace("add(", "multiply("))


def test_unknown_programs_are_named():
    with pytest.raises(ValueError, match="choose one of"):
        flag_runs.in_child("no such program")


@pytest.mark.slow
def test_every_program_measures_here():
    for name in flag_runs.PROGRAMS:
        result = flag_runs.measure(name, repeat=3)
        assert result["program"] == name and result["kernels"] >= 1


@pytest.mark.slow
def test_printed_defaults_include_some_flags():
    printed = known_flags.printed_defaults()
    assert printed.get("--xla_backend_optimization_level") == "3"


def test_registry_table_and_unlisted_flags():
    table = flag_registry.table(read_installed=False)
    assert set(table.index) == set(flag_registry.FLAGS)
    assert (table["what it does"].str.len() > 10).all()
    documented = table[table["documented"] != ""]
    assert documented["source"].str.startswith("https://").all()
    assert flag_registry.unlisted(["--xla_dump_to=/tmp",
                                   "--xla_made_up"]) == ["--xla_made_up"]
    # the chapters column is read from the chapters' text
    assert "03" in table.loc["--xla_gpu_graph_min_graph_size", "chapters"]
    assert "07" in table.loc[
        "--xla_gpu_all_reduce_combine_threshold_bytes", "chapters"]


def test_the_page_shows_four_columns_and_cpu_only_where_it_differs():
    registry = pd.DataFrame({
        "effective, XLA:GPU (H100)": ["3", "A,B", "true"],
        "effective, XLA:CPU": ["3", "A", "true"],
        "documented": ["", "A,B", "false"],
        "document agrees": ["", "yes", "no"],
        "chapters": ["06", "03", ""]},
        index=["--xla_level", "--xla_kinds", "--xla_any"])
    page = flag_registry.for_the_page(registry)
    assert list(page.columns) == ["default (XLA:GPU, H100)", "XLA:CPU",
                                  "documented", "chapters"]
    assert list(page["XLA:CPU"]) == ["same", "A", "same"]
    assert page.loc["--xla_kinds", "default (XLA:GPU, H100)"] == "A, B"
    assert list(page["documented"]) == ["", "A, B (agrees)",
                                        "false (differs)"]


def test_a_flags_defaults_read_in_words():
    registry = pd.DataFrame({
        "effective, XLA:GPU (H100)": ["3", "A,B"],
        "effective, XLA:CPU": ["2", "X,Y"],
        "documented": ["3", ""], "document agrees": ["yes", ""],
        "chapters": ["06", ""]},
        index=["--xla_level", "--xla_cpu_kinds"])
    assert flag_registry.default_words(registry, "--xla_level") == \
        "default `3`; XLA:CPU `2`; documented 3 (agrees)"
    assert flag_registry.default_words(registry, "--xla_cpu_kinds") == \
        "default `X, Y`"


def test_the_chapters_using_a_flag_come_from_their_text(tmp_path):
    (tmp_path / "01_one.md").write_text("Set `--xla_dump_to=/tmp/x`.")
    (tmp_path / "02_two.md").write_text(
        "XLA_FLAGS='--xla_dump_to=/y --xla_gpu_autotune_level=0'")
    (tmp_path / "notes.md").write_text("--xla_made_up is not a chapter")
    assert flag_registry.chapters_using(tmp_path) == {
        "--xla_dump_to": ("01", "02"), "--xla_gpu_autotune_level": ("02",)}
    assert flag_registry.chapters_using(tmp_path / "missing") == {}


needs_plugin = pytest.mark.skipif(not crosscompile.available(),
                                  reason=str(crosscompile.why_unavailable()))


@pytest.mark.slow
@needs_plugin
def test_effective_defaults_are_read_from_xla_itself():
    # the facts the expert review corrected, read from this jaxlib's dump;
    # each of the book's earlier statements fails here
    kinds = flag_registry.effective("--xla_gpu_enable_command_buffer")
    assert "CONDITIONAL" in kinds.split(",")  # not "must be added"
    assert "WHILE" not in kinds.split(",")
    assert flag_registry.effective("--xla_gpu_triton_gemm_any") == "true"
    assert flag_registry.effective(
        "--xla_gpu_all_reduce_combine_threshold_bytes") != "256"
    assert flag_registry.effective(
        "xla_gpu_collective_combine_threshold_count").isdigit()
    assert flag_registry.effective(
        "--xla_enable_command_buffers_during_profiling") in ("false",
                                                             "(unset)")


@needs_plugin
def test_the_table_flags_documents_that_disagree():
    table = flag_registry.table()
    agrees = table["document agrees"]
    assert agrees["--xla_gpu_triton_gemm_any"] == "no"
    assert agrees["--xla_gpu_memory_limit_slop_factor"] == "yes"
    # XLA:CPU: the same built-in defaults plus JAX's own CPU settings
    assert table.loc["--xla_backend_optimization_level",
                     "effective, XLA:CPU"] == "3"


def test_effective_names_its_backends():
    with pytest.raises(ValueError, match="'gpu' or 'cpu'"):
        flag_registry.effective("--xla_dump_to", "tpu")


def test_command_buffer_settings_add_only_while():
    settings = on_gpu.graph_settings("FUSION,CONDITIONAL")
    assert settings["default + WHILE"] == {
        "xla_gpu_enable_command_buffer": "FUSION,CONDITIONAL,WHILE"}
    assert settings["smallest graphs"] == {"xla_gpu_graph_min_graph_size": 1}
    assert settings["graphs off"] == {"xla_gpu_enable_command_buffer": ""}
    assert settings["default"] == {}
    assert on_gpu.graph_settings("(no CUDA plugin here)")[
        "default + WHILE"] is None
    with pytest.raises(ValueError, match="not known"):
        on_gpu.measure_command_buffers("(no CUDA plugin here)", [])


@pytest.mark.slow
def test_autotune_levels_are_described_as_xla_describes_them():
    # levels add care (buffer checks), not search effort: XLA's own help
    help_text = known_flags.printed_descriptions().get(
        "--xla_gpu_autotune_level")
    if help_text is None:
        pytest.skip("this jaxlib's --help no longer prints the flag")
    assert "0 = off; 1 = on" in help_text and "WRONG_RESULT" in help_text
    meaning = flag_registry.FLAGS["--xla_gpu_autotune_level"][0]
    assert "0: no autotuning" in meaning and "1: autotune" in meaning
    assert "skip candidates with wrong results" in meaning


@pytest.mark.slow
@needs_plugin
def test_the_small_kernel_loop_is_read_as_an_h100_launches_it():
    # the fact chapter 6's graphs-off prediction rests on: a body of fewer
    # operations than a graph needs is launched kernel by kernel
    body = crosscompile.run(flag_runs.loop_body_for_gpu, "small_kernels")
    assert body["body operations"] >= 1 and body["fewest in a graph"] >= 1
    assert body["body is a CUDA graph"] == (
        body["body operations"] >= body["fewest in a graph"])
