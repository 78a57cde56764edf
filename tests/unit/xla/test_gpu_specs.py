"""The GPUs the deviceless compiler targets: each description reaches the
plugin's config text, a GPU is chosen by name, and `run` keeps each GPU's
results apart (no child process here: they are stood in for)."""

import json

import pytest

from helpers.workbook.ch02_fusion import reductions
from helpers.xla import crosscompile, fresh_process, gpu_specs


@pytest.mark.parametrize("gpu, capability, sms, name", [
    ("H100", (9, 0), 132, "NVIDIA H100 80GB HBM3"),
    ("A100", (8, 0), 108, "NVIDIA A100-SXM4-40GB"),
    ("L4", (8, 9), 58, "NVIDIA L4"),
    ("T4", (7, 5), 40, "Tesla T4")])
def test_each_gpus_config_text_has_its_capability_and_sms(gpu, capability,
                                                           sms, name):
    text = gpu_specs.target_config(gpu)
    major, minor = capability
    assert (f"cuda_compute_capability {{ major: {major} minor: {minor} }}"
            in text)
    assert f"  core_count: {sms}\n" in text
    assert f'device_description_str: "{name}"' in text
    assert text.count("threads_per_warp: 32") == 1
    # by any case, and from the description itself
    assert gpu_specs.target_config(gpu.lower()) == text
    assert gpu_specs.target_config(gpu_specs.GPUS[gpu]) == text


def test_every_description_has_every_field_in_plausible_units():
    for name, spec in gpu_specs.GPUS.items():
        assert tuple(spec) == gpu_specs.FIELDS, name
        assert 1e11 < spec["memory_bandwidth"] < 1e13, name  # bytes/s
        assert 1 < spec["clock_rate_ghz"] < 3, name
        assert spec["shared_memory_per_block"] \
            <= spec["shared_memory_per_block_optin"] \
            <= spec["shared_memory_per_core"], name
        assert 2**30 < spec["device_memory_size"] < 2**37, name


def test_the_a100_is_xlas_own_description():
    # xla/backends/gpu/target_config/specs/a100_sxm_40.txtpb
    a100 = gpu_specs.A100_SXM4_40GB
    assert (a100["memory_bandwidth"], a100["l2_cache_size"],
            a100["shared_memory_per_block_optin"],
            a100["device_memory_size"]) == (1555200000000, 41943040,
                                            166912, 42331013120)


def test_an_unknown_gpu_says_which_are_known():
    with pytest.raises(ValueError, match="H100, A100, L4, T4"):
        gpu_specs.target_config("V100")
    with pytest.raises(ValueError, match="no GPU named 'A10'"):
        crosscompile.run(reductions.kinds_for_gpu, [25], gpu="A10")
    with pytest.raises(ValueError, match="lacks core_count"):
        gpu_specs.spec({k: v for k, v in gpu_specs.T4.items()
                        if k != "core_count"})
    with pytest.raises(TypeError, match="a name"):
        gpu_specs.spec(75)


def test_the_label_and_the_explanation_name_the_gpu(tmp_path, monkeypatch,
                                                    capsys):
    assert crosscompile.label().startswith("compiled for the H100 by")
    assert crosscompile.label("T4").startswith("compiled for the T4 by")
    assert crosscompile.label("a100").startswith("compiled for the A100")
    monkeypatch.setattr(crosscompile, "_plugin_importable", lambda: False)
    monkeypatch.setenv(crosscompile.PLUGIN_FOLDER_ENV, str(tmp_path))
    for gpu, named in (("L4", "an L4"), ("T4", "a T4")):
        assert crosscompile.run_or_explain(reductions.kinds_for_gpu, [25],
                                           gpu=gpu) is None
        said = capsys.readouterr().out
        assert said.startswith(f"Not compiled for {named} here:")


def _children(monkeypatch):
    """Stand in for `run`'s children: each call's GPU, as its child's
    environment gives it."""
    gpus = []

    def call(fn, *args, env=None, **kwargs):
        spec = json.loads(env[crosscompile.TARGET_ENV])
        gpus.append(spec["device_description_str"])
        return {"args": list(args)}

    monkeypatch.setattr(fresh_process, "call", call)
    monkeypatch.setattr(crosscompile, "why_unavailable", lambda: None)
    return gpus


def test_each_gpu_is_compiled_for_and_kept_apart(tmp_path, monkeypatch):
    gpus = _children(monkeypatch)
    monkeypatch.setenv(crosscompile.CACHE_ENV, str(tmp_path))
    for gpu in ("H100", "T4", "T4", "L4", "A100", "a100"):
        crosscompile.run(reductions.kinds_for_gpu, [25], gpu=gpu)
    crosscompile.run(reductions.kinds_for_gpu, [25])  # the H100's, kept
    assert gpus == ["NVIDIA H100 80GB HBM3", "Tesla T4", "NVIDIA L4",
                    "NVIDIA A100-SXM4-40GB"]
    assert len(list(tmp_path.glob("*.json"))) == 4


def test_the_child_reads_its_gpu(monkeypatch):
    monkeypatch.delenv(crosscompile.TARGET_ENV, raising=False)
    assert crosscompile.target_spec() == gpu_specs.H100_SXM
    monkeypatch.setenv(crosscompile.TARGET_ENV,
                       json.dumps(gpu_specs.L4))
    assert crosscompile.target_spec() == gpu_specs.L4  # capability a tuple


def test_a_named_backend_too_new_for_the_target_says_so(monkeypatch):
    from helpers.pallas import backends
    monkeypatch.setenv(crosscompile.CHILD_ENV, "1")
    monkeypatch.setenv(crosscompile.TARGET_ENV, json.dumps(gpu_specs.T4))
    with pytest.raises(NotImplementedError,
                       match=r"triton backend needs compute capability 8\.0"
                       r" or newer \(Ampere\) and the Tesla T4"):
        backends.choose("triton", None)
    # unnamed, the T4 gets what a T4 runs: the interpreter, with a warning
    if backends.triton_available():
        with pytest.warns(UserWarning, match="interpreter"):
            assert backends.choose(None, None) == ("triton", True)
    monkeypatch.setenv(crosscompile.TARGET_ENV,
                       json.dumps(gpu_specs.A100_SXM4_40GB))
    with pytest.raises(NotImplementedError, match=r"9\.0 or newer \(Hopper"):
        backends.choose("mosaic", None)
    assert backends.choose("triton", None) == ("triton", False)
