"""Chapter 6's computed sentences: each flips with the data behind it."""

import pytest

import first_visit
from helpers.workbook.ch06_xla_flags import flag_runs, verdicts

GPU = "NVIDIA H100 80GB HBM3"


def row(flag, seconds, module="aaa", program="matmul_epilogue",
        compile_s=1.0):
    return {"flags": flag, "program": program, "median s": seconds,
            "compile s": compile_s, "module": module,
            "fusion kinds": {"kCustom": 1}, "custom calls": {},
            "kernels": 2}


def effects(again, setting, module="aaa", compile_s=1.0):
    return {"rows": [row("(none)", 1.0), row(flag_runs.AGAIN, again),
                     row("--flag", setting, module, compile_s=compile_s)]}


def test_the_first_recording_does_not_judge_what_it_could_not():
    data = first_visit.load("06_xla_flags/effects")["data"]
    text = verdicts.setting(data, "matmul_epilogue",
                            "--xla_gpu_triton_gemm_any=false")
    assert "0.96 times the default's time" in text
    # no verdict of its own: the caveat below says why, once
    assert "effect" not in text and "noise" not in text
    assert verdicts.noise(data, "matmul_epilogue") is None
    caveat = verdicts.unjudged(data, "matmul_epilogue")
    assert "ran the default once" in caveat and "no digest" in caveat
    assert verdicts.unjudged(effects(1.02, 1.0), "matmul_epilogue") is None


@pytest.mark.parametrize("again, setting, module, says", [
    (1.02, 1.01, "aaa", "changed nothing measurable"),
    (1.02, 1.50, "aaa", "acts after the HLO"),
    (1.02, 1.50, "bbb", "compiled a different program. A real effect."),
    (1.30, 1.10, "bbb", "within the noise (30.0%: the same program's"),
])
def test_a_setting_is_real_only_beyond_the_noise(again, setting, module,
                                                 says):
    text = verdicts.setting(effects(again, setting, module),
                            "matmul_epilogue", "--flag")
    assert says in text


def test_a_difference_inside_the_spread_of_a_run_is_no_effect():
    data = effects(1.002, 1.011, "bbb")
    assert "A real effect" in verdicts.setting(data, "matmul_epilogue",
                                               "--flag")
    for entry in data["rows"]:
        entry["spread"] = 0.078  # IQR over median of each run's times
    text = verdicts.setting(data, "matmul_epilogue", "--flag")
    assert "within the noise (7.8%: the spread of the times within a run)" \
        in text and text.endswith("No effect shown.")
    assert verdicts.threshold(data, "matmul_epilogue", "--flag") == 0.078


def test_missing_rows_give_no_sentence():
    assert verdicts.setting({"rows": []}, "matmul_epilogue", "--x") is None
    assert verdicts.autotuning({"rows": []}, GPU) is None
    assert verdicts.pgle({"rows": []}, GPU) is None


def test_autotuning_is_worth_it_or_not():
    data = first_visit.load("06_xla_flags/effects")["data"]
    text = verdicts.autotuning(data, GPU)
    assert "20.2 times as long" in text and "worth its compile time" in text
    cheap = {"rows": [row("(none)", 1.0, compile_s=3.0),
                      row("--xla_gpu_autotune_level=0", 1.05)]}
    assert "bought little" in verdicts.autotuning(cheap, GPU)


def pgle(without, again, with_pgle, compilations=2):
    return {"rows": [], "auto_pgle": {
        "without": {"median s": without, "compilations": 1},
        "without, again": {"median s": again, "compilations": 1},
        "with": {"median s": with_pgle, "compilations": compilations}}}


def test_pgle_is_judged_against_a_second_process():
    assert "a real effect" in verdicts.pgle(pgle(1.0, 1.01, 0.8), GPU)
    assert "no effect shown" in verdicts.pgle(pgle(1.0, 1.2, 0.9), GPU)
    assert "no recompilation" in verdicts.pgle(pgle(1.0, 1.01, 0.8, 1),
                                               GPU)
    first = first_visit.load("06_xla_flags/effects")["data"]
    text = verdicts.pgle(first, GPU)
    assert "differed by 20%" in text and "no effect shown" in text


def test_the_settings_table_reads_as_words_not_dicts():
    data = {"rows": [
        {"program": "p", "flags": "(none)", "median s": 1e-3,
         "compile s": 1.0, "kernels": 2, "fusion kinds": {"kLoop": 1},
         "custom calls": {}},
        {"program": "p", "flags": "--xla_gpu_autotune_level=0",
         "median s": 2e-3, "compile s": 0.5, "kernels": 2,
         "fusion kinds": {"kLoop": 1, "kCustom": 1}, "custom calls": {}}]}
    shown = verdicts.table(data)
    assert list(shown.columns) == ["ms", "kernels",
                                   "fusions"]  # no empty column
    row = shown.loc[("p", "autotune_level=0")]
    assert row["ms"] == 2.0
    assert row["fusions"] == "kLoop 1, kCustom 1"


def test_a_setting_is_decided_only_with_the_noise_and_the_digests():
    first = first_visit.load("06_xla_flags/effects")["data"]
    assert not verdicts.decided(first, "matmul_epilogue",
                                "--xla_gpu_triton_gemm_any=false")
    assert verdicts.decided(effects(1.02, 1.5, "bbb"), "matmul_epilogue",
                            "--flag")


def test_a_span_longer_than_the_call_sends_the_reader_to_the_wall_clock():
    data = effects(1.0, 1.0)
    for entry, wall in zip(data["rows"], (0.64, 0.66, 0.63)):
        entry["wall s"] = wall  # the spans (1 s) are 1.56 times the call
    text = verdicts.profiler_inflation(data, GPU)
    assert "1.56 times its whole unprofiled call" in text
    assert "`--flag` took 0.98 times the default's" in text
    assert "differed from its first by 3.1%" in text
    for entry in data["rows"]:
        entry["wall s"] = 1.2  # spans inside their calls: nothing to say
    assert verdicts.profiler_inflation(data, GPU) is None
