"""Chapters 1 and 2 beside other recorded GPUs: the numbers their
sentences quote flip with the data, and only other GPUs' recordings are
found."""

import copy

import pytest

from helpers.measuring import recorded, results
from helpers.workbook.ch01_measuring import across_gpus as ch1
from helpers.workbook.ch01_measuring import recording as ch1_recording
from helpers.workbook.ch02_fusion import across_gpus as ch2
from helpers.workbook.ch02_fusion import numbers, reductions, verdicts
from made_up import H100_PROVENANCE, device_recording
from made_up import fusion_sweep as fixes_recording

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"


def test_other_gpus_finds_every_recording_but_the_references(
        tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path))
    recorded.save("01_measuring/summary", {"n": 1},
                  provenance=H100_PROVENANCE)
    assert results.other_gpus("01_measuring/summary") == []
    recorded.save("01_measuring/summary", {"n": 2},
                  provenance={**H100_PROVENANCE, "device": H200})
    recorded.save("02_fusion/fixes", {"n": 3},
                  provenance={**H100_PROVENANCE, "device": "Tesla T4"})
    others = results.other_gpus("01_measuring/summary")
    assert [(r.device, r.data) for r in others] == [(H200, {"n": 2})]
    with pytest.raises(ValueError, match="<chapter>/<result>"):
        results.other_gpus("summary")


def faster(data, copy_times=1.0, matmul_times=1.0, added_us=None):
    """``data`` as a GPU with ``copy_times`` the bandwidth (its copy and
    large kernel that much shorter) and ``matmul_times`` the rate; a call
    back to back adds ``added_us`` to the large span (unchanged: None)."""
    data = copy.deepcopy(data)
    ceilings = data["ceilings"]
    ceilings["copy_bytes_per_s"] *= copy_times
    for key in ceilings["matmul_flops_per_s"]:
        ceilings["matmul_flops_per_s"][key] *= matmul_times
    profile = data["profile"]
    old_added = profile["back_to_back_us"][-1] - profile["span_us"][-1]
    profile["span_us"][-1] /= copy_times
    profile["back_to_back_us"][-1] = profile["span_us"][-1] + (
        old_added if added_us is None else added_us)
    return data


def test_only_a_faster_memory_shows_as_such():
    reference = device_recording()
    memory = ch1.comparison_numbers(reference, faster(reference, 1.4))
    assert memory["copy_ratio"] == pytest.approx(1.4)
    assert memory["matmul_ratio"] == pytest.approx(1.0)
    assert memory["floor_share"] == pytest.approx(1 / 1.4)
    both = ch1.comparison_numbers(reference, faster(reference, 1.4, 1.5))
    assert both["matmul_ratio"] == pytest.approx(1.5)


def test_the_goal_on_each_gpu_is_decided_by_its_own_calls():
    reference = device_recording()  # adds 7 µs to 705 µs: within 5%
    same = ch1.comparison_numbers(reference, faster(reference, 1.4))
    assert same["added_ratio"] == pytest.approx(1.0)
    assert abs(same["other_agreement"] - 1) <= 0.05
    doubled = ch1.comparison_numbers(reference,
                                     faster(reference, 1.4, added_us=40.0))
    assert abs(doubled["other_agreement"] - 1) > 0.05
    assert doubled["added_ratio"] == pytest.approx(40 / 7)
    table = ch1.table([results.Result("x", "recorded", d,
                                       {"device": name})
                       for d, name in ((reference, H100),
                                       (faster(reference, 2.0), H200))])
    # rows named as the text names each GPU after naming it once
    assert table.loc["H200", "copy GB/s"] == pytest.approx(
        2 * table.loc["H100", "copy GB/s"])


def ms_at(share, copy_gbps, dtype, k):
    """The time in ms that moves a (1000 x 1000) batch at ``share`` of
    ``copy_gbps``."""
    moved = reductions.bytes_moved(10**6, k, 8 if dtype == "float64" else 4)
    return moved / (share * copy_gbps * 1e9) * 1e3


def fixes(share, copy_gbps, best="batch-minor", other_share=0.3):
    """A fixes recording where ``best`` reaches ``share`` at every K and
    ``a @ b`` reaches ``other_share``."""
    times = {(version, dtype, k): ms_at(s, copy_gbps, dtype, k)
             for version, s in ((best, share), ("a @ b", other_share))
             for dtype in ch2.DTYPES for k in (10, 25, 35, 50)}
    return fixes_recording(times, versions=("a @ b", best),
                           copy_gbps=copy_gbps)


def test_the_goal_on_another_gpu_and_whether_the_arrays_can_reach_it():
    reference = fixes(0.9, 3000.0)
    kept_up = numbers.other_gpu(reference, fixes(0.9, 4200.0))
    assert kept_up["met"] and kept_up["copy_ratio"] == pytest.approx(1.4)
    lagged = numbers.other_gpu(reference, fixes(0.9 * 3000 / 4200, 4200.0))
    assert not lagged["met"]
    assert lagged["top_share"] < 0.85  # no version reached the goal there
    # another version streams at the ceiling: the arrays are large enough
    reachable = numbers.other_gpu(reference,
                                  fixes(0.64, 4200.0, other_share=0.95))
    assert (reachable["top_version"], reachable["top_share"]) == \
        ("a @ b", pytest.approx(0.95))


def test_the_goal_table_shows_each_gpus_own_share():
    recordings = [results.Result("02_fusion/fixes", "recorded", data,
                                 {"device": name})
                  for data, name in ((fixes(0.9, 3000.0), H100),
                                     (fixes(0.6, 4200.0), H200))]
    table = ch2.goal_table(recordings)
    assert table.loc[("H100", "float32"), "share at its slowest K"] == \
        pytest.approx(0.9)
    assert table.loc[("H200", "float64"), "meets 85%"] == "no"
    over = ch2.goal_table([results.Result(
        "02_fusion/fixes", "recorded", fixes(1.3, 3000.0), {"device": H100})])
    assert over.loc[("H100", "float32"), "share at its slowest K"] == \
        verdicts.ABOVE_COPY


def test_exercise_2_1s_target_is_read_from_each_recording():
    def result(pad_ms, name):
        data = fixes_recording({("a @ b", "float32", 25): 1.0,
                                ("pad K", "float32", 25): pad_ms},
                               versions=("a @ b", "pad K"))
        return results.Result("02_fusion/fixes", "recorded", data,
                               {"device": name})

    assert numbers.exercise_target([result(0.98, H100), result(1.0, H200)]
                                   ) == {"H100": pytest.approx(0.98),
                                         "H200": pytest.approx(1.0)}


def test_each_fixes_ceiling_is_set_beside_chapter_1s():
    ch1_h100 = device_recording()
    ch1_gbps = ch1_recording.copy_rates(ch1_h100).device
    result = results.Result("02_fusion/fixes", "recorded",
                            fixes(0.9, ch1_gbps * 1.01), {"device": H100})
    summary = results.Result("01_measuring/summary", "recorded", ch1_h100,
                             {"device": H100})
    pairs = numbers.ceilings_against_chapter_1([result], [summary])
    assert pairs == {"H100": (pytest.approx(ch1_gbps * 1.01),
                              pytest.approx(ch1_gbps))}
    other = results.Result("02_fusion/fixes", "recorded",
                           fixes(0.9, 4000.0), {"device": H200})
    assert numbers.ceilings_against_chapter_1([other], [summary]) == {}
