"""Chapter 6's predictions held against a run: each outcome flips with
the data, and a run that cannot judge says nothing."""

import copy

from helpers.workbook.ch06_xla_flags import flag_runs, predictions

GPU = "NVIDIA H100 80GB HBM3"


def run(ratios, again=1.002):
    """A recording of both programs: the default twice (0.2% apart), and
    each setting at ``ratios[flag]`` times the default's time."""
    rows = []
    for program, flags in flag_runs.GPU_SETTINGS.items():
        rows += [{"program": program, "flags": "(none)", "median s": 1.0},
                 {"program": program, "flags": flag_runs.AGAIN,
                  "median s": again}]
        rows += [{"program": program, "flags": flag, "median s":
                  ratios.get(flag, 1.0)} for flag in flags if flag]
    return {"rows": rows}


AS_PREDICTED = {"--xla_gpu_autotune_level=0": 40.0,
                "--xla_gpu_enable_command_buffer=": 1.3}


def test_a_run_as_predicted_holds_them_all():
    assert predictions.held(run(AS_PREDICTED), GPU) == \
        f"On the {GPU}, all 4 predictions held."


def test_a_setting_that_moved_otherwise_is_named():
    ratios = {**AS_PREDICTED, "--xla_gpu_enable_command_buffer=": 0.8,
              "--xla_gpu_triton_gemm_any=false": 1.5}
    text = predictions.held(run(ratios), GPU)
    assert text.startswith(f"On the {GPU}, 2 of the 4 predictions held; ")
    assert ("`--xla_gpu_enable_command_buffer=` on *small_kernels* was "
            "predicted slower and ran faster") in text
    assert "predicted the same and ran slower" in text


def test_within_the_noise_is_the_same_and_without_it_nothing_is_said():
    data = run({**AS_PREDICTED, "--xla_gpu_autotune_level=0": 1.001})
    assert predictions.outcome(data, "matmul_epilogue",
                               "--xla_gpu_autotune_level=0") == "the same"
    once = copy.deepcopy(data)
    once["rows"] = [r for r in once["rows"] if r["flags"] != flag_runs.AGAIN]
    assert predictions.held(once, GPU) is None


def test_every_prediction_names_a_setting_the_chapter_runs():
    for p in predictions.PREDICTIONS:
        assert p.flag in flag_runs.GPU_SETTINGS[p.program]
        assert p.expected in ("slower", "faster", "the same")
    assert predictions.as_markdown().count("\n- ") == \
        len(predictions.PREDICTIONS) - 1
