"""Compiling for an H100 without one: the target description, the child
process, and the errors a reader meets when the plugin is missing."""

import json
import os

import pytest

from helpers.workbook.ch02_fusion import reductions
from helpers.xla import crosscompile, fresh_process, gpu_export, gpu_specs

needs_plugin = pytest.mark.skipif(not crosscompile.available(),
                                  reason=str(crosscompile.why_unavailable()))


def test_ci_has_the_plugin():
    # CI runs `make test`, which installs it: the GPU compilations must run
    # there, not skip
    if os.environ.get("CI"):
        assert crosscompile.available(), crosscompile.why_unavailable()


def test_target_config_describes_an_h100():
    text = gpu_specs.target_config()
    assert "cuda_compute_capability { major: 9 minor: 0 }" in text
    assert "core_count: 132" in text and "threads_per_warp: 32" in text
    assert 'device_description_str: "NVIDIA H100 80GB HBM3"' in text


def test_a_missing_plugin_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setattr(crosscompile, "_plugin_importable", lambda: False)
    monkeypatch.setenv(crosscompile.PLUGIN_FOLDER_ENV, str(tmp_path))
    assert not crosscompile.available()
    assert "make install" in crosscompile.why_unavailable()
    with pytest.raises(RuntimeError, match="cannot compile for a GPU"):
        crosscompile.run(reductions.kinds_for_gpu, [25])
    # a plugin of another jaxlib is refused too
    (tmp_path / "jax_cuda12_plugin-0.0.1.dist-info").mkdir()
    assert "is 0.0.1 but jaxlib is" in crosscompile.why_unavailable()


def test_a_mac_or_windows_is_sent_to_colab(monkeypatch):
    monkeypatch.setattr(crosscompile, "_plugin_importable", lambda: False)
    for system in ("darwin", "win32"):
        monkeypatch.setattr(crosscompile.sys, "platform", system)
        said = crosscompile.why_unavailable()
        assert said.startswith("JAX's CUDA plugin is built for Linux only")
        assert "pip install" not in said and "make" not in said


def test_a_function_no_child_can_import_is_refused():
    with pytest.raises(ValueError, match="top level of a module"):
        crosscompile.run(lambda: 1)


def test_run_or_explain_says_why_in_one_sentence(tmp_path, monkeypatch,
                                                 capsys):
    monkeypatch.setattr(crosscompile, "_plugin_importable", lambda: False)
    monkeypatch.setenv(crosscompile.PLUGIN_FOLDER_ENV, str(tmp_path))
    assert crosscompile.run_or_explain(reductions.kinds_for_gpu, [25]) is None
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    assert printed[0].startswith("Not compiled for an H100 here:")
    assert "make install" in printed[0]


@needs_plugin
def test_a_failing_child_reports_its_error(capsys):
    with pytest.raises(fresh_process.ChildFailed,
                       match="JSONDecodeError") as err:
        crosscompile.run(json.loads, "{")
    assert err.value.target == "json:loads"
    assert "Traceback" in err.value.output  # the whole output travels
    assert crosscompile.run_or_explain(json.loads, "{") is None
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("Not compiled for an H100 here: XLA:GPU "
                              "failed in json:loads (json.decoder."
                              "JSONDecodeError")


@pytest.mark.slow
@needs_plugin
def test_the_child_compiles_with_the_xla_flags_it_is_given(monkeypatch):
    monkeypatch.delenv(crosscompile.CACHE_ENV, raising=False)  # no reuse
    # this process's XLA_FLAGS (its simulated devices) never reach a child
    monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_enable_triton_gemm=false")
    plain = crosscompile.run(crosscompile.options_for_gpu)["overrides"]
    assert "xla_gpu_enable_triton_gemm" not in plain
    flags = "--xla_gpu_enable_triton_gemm=false"
    for keep_alive in (False, True):  # a new child, and a worker per flags
        given = crosscompile.run(crosscompile.options_for_gpu,
                                 xla_flags=flags, keep_alive=keep_alive)
        assert given["overrides"]["xla_gpu_enable_triton_gemm"] == "false"


@pytest.mark.slow
@needs_plugin
def test_kernels_and_buffers_come_from_xla_gpu():
    facts = crosscompile.run(crosscompile.self_check)
    # compile-only devices of the GPU platform, and XLA:GPU sized the output
    assert facts["platform"] == "gpu"
    assert facts["devices"] == 8
    assert facts["output_bytes"] == 4 * 1024 * 1024


@pytest.mark.slow
@needs_plugin
def test_any_function_compiles_for_the_h100_through_export():
    import jax
    import jax.numpy as jnp

    from helpers.xla import hlo

    # a lambda no child could import, at a size no CPU would allocate
    a = jax.ShapeDtypeStruct((1000, 1000, 3, 25), jnp.float32)
    b = jax.ShapeDtypeStruct((1000, 1000, 25, 1), jnp.float32)
    text = gpu_export.compiled_text(lambda a, b: a @ b, a, b)
    assert [(f.kind, f.root_op) for f in hlo.fusions(text)] == [
        ("kLoop", "reduce")]


class _Children(list):
    """The children `run` started, by function and arguments, with the
    environment each was given (``envs``)."""

    def __init__(self):
        super().__init__()
        self.envs = []


def _counted_children(monkeypatch, result=None, error=None):
    """Stand in for the child processes of `run`, counting them."""
    calls = _Children()

    def call(fn, *args, **kwargs):
        calls.append((fresh_process.target_of(fn), args))
        calls.envs.append(kwargs.get("env", {}))
        if error:
            raise error
        return result if result is not None else {"args": list(args)}

    monkeypatch.setattr(fresh_process, "call", call)
    monkeypatch.setattr(crosscompile, "why_unavailable", lambda: None)
    return calls


def test_the_flags_a_child_is_given_are_its_own_and_key_its_result(
        tmp_path, monkeypatch):
    calls = _counted_children(monkeypatch)
    monkeypatch.setenv(crosscompile.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    flags = "--xla_gpu_enable_triton_gemm=false"
    crosscompile.run(reductions.kinds_for_gpu, [25])
    crosscompile.run(reductions.kinds_for_gpu, [25], xla_flags=flags)
    crosscompile.run(reductions.kinds_for_gpu, [25], xla_flags=flags)
    assert len(calls) == 2  # other flags, another result; the same, kept
    assert "XLA_FLAGS" not in calls.envs[0]  # never this process's
    assert calls.envs[1]["XLA_FLAGS"] == flags


def test_a_kept_result_answers_the_same_call_again(tmp_path, monkeypatch):
    calls = _counted_children(monkeypatch)
    tmp_path = tmp_path / "made when first needed"
    monkeypatch.setenv(crosscompile.CACHE_ENV, str(tmp_path))
    first = crosscompile.run(reductions.kinds_for_gpu, [25])
    assert crosscompile.run(reductions.kinds_for_gpu, [25]) == first
    assert len(calls) == 1
    crosscompile.run(reductions.kinds_for_gpu, [26])  # other arguments
    crosscompile.run(reductions.reduce_kinds_for_gpu, [25])  # another function
    monkeypatch.setenv("JAX_ENABLE_X64", "1")  # other JAX settings
    crosscompile.run(reductions.kinds_for_gpu, [25])
    assert len(calls) == 4
    assert len(list(tmp_path.glob("*.json"))) == 4
    assert not list(tmp_path.glob("*.part"))


def test_an_edit_to_the_helpers_is_not_answered_from_before(tmp_path,
                                                            monkeypatch):
    calls = _counted_children(monkeypatch)
    monkeypatch.setenv(crosscompile.CACHE_ENV, str(tmp_path))
    for source in ("before the edit", "after the edit"):
        monkeypatch.setattr(crosscompile, "_source_digest",
                            lambda source=source: source)
        crosscompile.run(reductions.kinds_for_gpu, [25])
    assert len(calls) == 2


def test_without_a_cache_folder_each_call_starts_a_child(monkeypatch):
    calls = _counted_children(monkeypatch)
    monkeypatch.delenv(crosscompile.CACHE_ENV, raising=False)
    crosscompile.run(reductions.kinds_for_gpu, [25])
    crosscompile.run(reductions.kinds_for_gpu, [25])
    assert len(calls) == 2


def test_a_failed_compilation_is_not_kept(tmp_path, monkeypatch):
    failure = fresh_process.ChildFailed(
        "helpers.workbook.ch02_fusion.reductions:kinds_for_gpu", 1,
                                "RuntimeError: out of memory")
    calls = _counted_children(monkeypatch, error=failure)
    monkeypatch.setenv(crosscompile.CACHE_ENV, str(tmp_path))
    for _ in range(2):
        with pytest.raises(fresh_process.ChildFailed, match="out of memory"):
            crosscompile.run(reductions.kinds_for_gpu, [25])
    assert len(calls) == 2 and not list(tmp_path.iterdir())


def test_the_test_run_shares_one_cache_folder():
    # conftest.py makes it before any worker starts; they all inherit it
    folder = os.environ.get(crosscompile.CACHE_ENV)
    assert folder and os.path.isdir(folder)
