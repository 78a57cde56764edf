"""Chapter 6's readings of its flag runs: each flips with the data."""

import pytest

from helpers.measuring import recorded
from helpers.workbook.ch06_xla_flags import clocks, flag_runs, verdicts

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


def test_a_default_that_ran_once_judges_nothing():
    data = effects(1.02, 1.5, "aaa")
    # the default's second process failed: no noise to judge against
    data["rows"][1] = {"flags": flag_runs.AGAIN, "program": "matmul_epilogue",
                       "error": "the child process failed"}
    numbers = verdicts.settings_numbers(data)
    assert numbers["judged"] is False and numbers["noise"] is None
    assert numbers["moved_after"] == []
    assert verdicts.noise(data, "matmul_epilogue") is None
    assert verdicts.digests_agree(data, "matmul_epilogue") is None
    assert verdicts.settings_numbers(effects(1.02, 1.0))["judged"] is True
    shown = verdicts.settings_table(data)
    assert set(shown["ran"]) == {"—"}
    # the digests still say whether the setting kept the default's module
    assert set(shown["same HLO"]) == {"yes"}


@pytest.mark.parametrize("again, setting, module, moved", [
    (1.02, 1.01, "aaa", "the same"),
    (1.02, 1.50, "aaa", "slower"),
    (1.02, 0.50, "bbb", "faster"),
    (1.30, 1.10, "bbb", "the same"),
])
def test_a_setting_is_real_only_beyond_the_noise(again, setting, module,
                                                 moved):
    data = effects(again, setting, module)
    assert verdicts.outcome(data, "matmul_epilogue", "--flag") == moved
    row = verdicts.settings_table(data).loc[("matmul_epilogue", "--flag")]
    assert row["ran"] == moved.removeprefix("the ")
    assert row["same HLO"] == ("yes" if module == "aaa" else "no")
    # a setting that moved although its module is the default's acts
    # after the HLO
    assert (verdicts.settings_numbers(data)["moved_after"] == ["--flag"]) \
        == (moved != "the same" and module == "aaa")


def test_the_table_puts_the_prediction_beside_the_measurement():
    data = effects(1.02, 1.50, "bbb")
    shown = verdicts.settings_table(
        data, {("matmul_epilogue", "--flag"): "the same"})
    assert list(shown.columns) == ["× default", "noise", "ran",
                                   "predicted", "same HLO"]
    assert shown.iloc[0]["predicted"] == "same"
    assert shown.iloc[0]["ran"] == "slower"
    unmade = verdicts.settings_table(data, {("matmul_epilogue",
                                             "--flag"): None})
    assert unmade.iloc[0]["predicted"] == "none made"
    assert "predicted" not in verdicts.settings_table(data).columns


def test_the_noise_of_every_setting_is_one_range():
    data = effects(1.02, 1.01)
    data["rows"].append(row("--other", 2.0, "ccc"))
    numbers = verdicts.settings_numbers(data)
    assert numbers["noise"] == pytest.approx((0.02, 0.02))
    assert numbers["ratio"] == {"--flag": 1.01, "--other": 2.0}
    assert numbers["ran"] == {"--flag": "the same", "--other": "slower"}
    shown = verdicts.settings_table(data)
    assert list(shown["noise"]) == ["2.0%", "2.0%"]
    assert list(shown["× default"]) == ["1.01", "2.00"]
    assert list(shown["ran"]) == ["same", "slower"]


def test_digests_that_differ_between_two_defaults_tell_nothing():
    data = effects(1.0, 1.0, "bbb")
    data["rows"][1]["module"] = "zzz"  # the default's second process
    assert verdicts.digests_agree(data, "matmul_epilogue") is False
    assert verdicts.settings_numbers(data)["unstable"] == [
        "matmul_epilogue"]
    assert verdicts.settings_table(data).iloc[0][
        "same HLO"] == "unknown"
    assert verdicts.digests_agree(effects(1.0, 1.0), "matmul_epilogue")
    assert verdicts.settings_numbers(effects(1.0, 1.0))["unstable"] == []


def test_a_difference_inside_the_spread_of_a_run_is_no_effect():
    data = effects(1.002, 1.011, "bbb")
    assert verdicts.outcome(data, "matmul_epilogue", "--flag") == "slower"
    for entry in data["rows"]:
        entry["spread"] = 0.078  # IQR over median of each run's times
    assert verdicts.settings_numbers(data)["noise"] == (0.078, 0.078)
    assert verdicts.outcome(data, "matmul_epilogue", "--flag") == "the same"
    assert verdicts.threshold(data, "matmul_epilogue", "--flag") == 0.078


def test_durations_read_in_ms_or_us():
    assert [verdicts.duration(s) for s in (1.004e-3, 2.88e-4, 6.25e-5,
                                           0.0088)] == [
        "1.00 ms", "288 µs", "62.5 µs", "8.80 ms"]
    assert [verdicts.times(r) for r in (1.004, 41.52)] == ["1.00", "41.5"]


def test_missing_rows_give_no_sentence():
    assert verdicts.settings_numbers({"rows": []}) is None
    assert verdicts.autotuning_numbers({"rows": []}) is None
    assert clocks.pgle_numbers({"rows": []}) is None


def test_autotuning_numbers_give_compile_saved_and_run_cost():
    data = recorded.load("06_xla_flags/effects")["data"]
    got = verdicts.autotuning_numbers(data)
    assert got["compile"] == pytest.approx(2.98, abs=0.005)
    assert got["run"] > 2
    cheap = {"rows": [row("(none)", 1.0, compile_s=3.0),
                      row("--xla_gpu_autotune_level=0", 1.05)]}
    assert verdicts.autotuning_numbers(cheap)["run"] == pytest.approx(1.05)

def pgle(without, again, with_pgle, compilations=2):
    return {"rows": [], "auto_pgle": {
        "without": {"median s": without, "compilations": 1},
        "without, again": {"median s": again, "compilations": 1},
        "with": {"median s": with_pgle, "compilations": compilations}}}


def test_the_settings_table_reads_as_words_not_dicts():
    data = {"rows": [
        {"program": "p", "flags": "(none)", "median s": 1e-3,
         "compile s": 1.0, "kernels": 2, "fusion kinds": {"kLoop": 1},
         "custom calls": {}},
        {"program": "p", "flags": "--xla_gpu_autotune_level=0",
         "median s": 2e-3, "compile s": 0.5, "kernels": 2,
         "fusion kinds": {"kLoop": 1, "kCustom": 1}, "custom calls": {}}]}
    shown = verdicts.table(data)
    # no empty column; the kernels, the same in both, beside the program
    assert list(shown.columns) == ["span ms", "fusions"]
    row = shown.loc[("p, 2 kernels a call", "autotune_level=0")]
    assert row["span ms"] == 2.0
    assert row["fusions"] == "kLoop 1, kCustom 1"
    data["rows"][1]["kernels"] = 3
    assert "kernels" in verdicts.table(data).columns


def test_a_setting_is_decided_only_with_the_noise_and_the_digests():
    assert verdicts.decided(effects(1.02, 1.5, "bbb"), "matmul_epilogue",
                            "--flag")
    once = effects(1.02, 1.5, "bbb")
    del once["rows"][1]  # the default ran in one process only
    assert not verdicts.decided(once, "matmul_epilogue", "--flag")
    unstable = effects(1.02, 1.5, "bbb")
    unstable["rows"][1]["module"] = "zzz"  # the default's digest moved
    assert not verdicts.decided(unstable, "matmul_epilogue", "--flag")
    assert not verdicts.decided(effects(1.02, 1.5), "matmul_epilogue",
                                "--other")


def test_a_span_longer_than_the_call_sends_the_reader_to_the_wall_clock():
    data = effects(1.0, 1.0)
    for entry, wall in zip(data["rows"], (0.64, 0.66, 0.63)):
        entry["wall s"] = wall  # the spans (1 s) are 1.56 times the call
    got = clocks.inflated_programs(data)
    loop = got[data["rows"][0]["program"]]
    assert loop["ratio"] == pytest.approx(1 / 0.64)
    assert loop["apart"] == pytest.approx(0.66 / 0.64 - 1)
    assert loop["beyond"] == []
    data["rows"][2]["wall s"] = 0.70  # 9% slower by the wall clock
    assert clocks.inflated_programs(data)[
        data["rows"][0]["program"]]["beyond"] == ["--flag"]
    for entry in data["rows"]:
        entry["wall spread"] = 0.12  # the wall times spread more than 9%
    assert clocks.inflated_programs(data)[
        data["rows"][0]["program"]]["beyond"] == []
    for entry in data["rows"]:
        entry["wall s"] = 1.2  # spans inside their calls: nothing to say
    assert clocks.inflated_programs(data) == {}


def test_pgle_runs_longer_under_the_profiler_are_read_by_the_wall_clock():
    data = pgle(1.56, 1.55, 1.55)
    data["rows"] = [row("(none)", 1.56, program="small_kernels")]
    data["rows"][0]["kernels"] = 302
    for label, wall in (("without", 0.977), ("without, again", 0.996),
                        ("with", 1.040)):
        data["auto_pgle"][label]["wall s"] = wall
    got = clocks.pgle_numbers(data)
    assert got["kernels"] == 302
    assert got["span_over_call"] == pytest.approx(1.56 / 0.977)
    assert got["pgle_over_without"] == pytest.approx(1.040 / 0.977)
    assert got["apart"] == pytest.approx(0.996 / 0.977 - 1)

