"""The field guide's sentence about each before/after names what was
measured, on this machine, with readable numbers; each outcome and its
opposite read as they should."""

import pytest

from helpers.workbook.ch10_field_guide import cases, readings

TIME = {"measure": "median time", "unit": "ms"}


def test_every_case_has_its_own_wording():
    assert set(readings.WORDING) == set(cases.CASES)
    ties = [w.tie for n, w in readings.WORDING.items()
            if cases.CASES[n].measure == "time" and not
            cases.CASES[n].pallas_fix]
    assert all(ties) and len(set(ties)) == len(ties)


@pytest.mark.parametrize("name, size", [
    ("float64", 2**20), ("sort-64-bit", 2**20),
    ("scatter-contention", 2**20), ("host-callback", 2**16),
    ("random-in-loop", 64), ("host-round-trip", 64)])
def test_the_sizes_named_are_the_cases_own(name, size):
    first = cases.CASES[name].arguments()[-1 if name == "random-in-loop"
                                          else 0]
    assert first.size == size
    assert f"{size:,}" in readings.WORDING[name].measured


def test_a_tie_says_what_this_machine_does_not_pay_for():
    text = readings.verdict("sort-64-bit", dict(TIME, slow=95.1, fixed=93.2),
                            "CPU")
    assert text == ("On this machine (CPU), argsort of 1,048,576 keys took "
                    "95.1 ms with int64 keys and 93.2 ms with int32 keys, "
                    "within 10% of each other: 64-bit keys sort as fast as "
                    "32-bit ones here.")


def test_a_reason_that_holds_only_on_a_cpu_is_given_only_there():
    tie = dict(TIME, slow=1.0, fixed=1.02)
    here = readings.verdict("host-callback", tie, "CPU")
    assert here.endswith("handing work to NumPy costs nothing measurable "
                         "here, since the device is the host and the "
                         "callback copies nothing between memories.")
    there = readings.verdict("host-callback", tie, "T4")
    assert there.endswith("handing work to NumPy costs nothing measurable "
                          "here.")
    assert "On this machine (T4)" in there


def test_a_faster_fix_and_a_slower_one_read_differently():
    faster = readings.verdict("float64", dict(TIME, slow=5.88, fixed=1.4),
                              "CPU")
    assert faster.endswith("in float32: the fixed version runs 4.2 times "
                           "faster.")
    assert "On this machine (CPU)" in faster
    slower = readings.verdict("random-in-loop",
                              dict(TIME, slow=0.1, fixed=0.3), "CPU")
    assert "the fix takes 3 times as long" in slower
    assert "within 10%" not in slower and "faster" not in slower


def test_a_pallas_fix_off_a_gpu_decides_nothing():
    text = readings.verdict("launches-per-step", dict(
        TIME, slow=2.0, fixed=900.0, interpreted=True), "CPU")
    assert ("took 2 ms as a scan, and 900 ms as one Pallas kernel in "
            "Pallas's interpreter, a simulation") in text
    assert "faster" not in text and "times" not in text


def test_memory_reads_in_bytes_when_small_and_without_a_bare_ratio():
    gone = readings.verdict("no-donation", {
        "measure": "temporaries + outputs", "unit": "MiB", "slow": 4.0,
        "fixed": 16 / 2**20}, "CPU")
    assert "4 MiB" in gone and "16 bytes" in gone and "almost none" in gone
    assert "e-05" not in gone and "times" not in gone
    halved = readings.verdict("large-temporaries", {
        "measure": "temporaries + outputs", "unit": "MiB", "slow": 256.0,
        "fixed": 16.0}, "CPU")
    assert halved == (
        "For the column sums of a sorted 8192 x 8192 outer product, XLA's "
        "memory analysis of the program compiled on this machine (CPU) "
        "counts 256 MiB of temporaries and new outputs when the whole "
        "product is sorted at once, and 16 MiB when 512 columns are sorted "
        "at a time: 16 times less.")


def test_compilations_are_counted_in_words():
    text = readings.verdict("retracing", {
        "measure": "compilations", "unit": "", "slow": 8, "fixed": 1},
        "CPU")
    assert text == ("Called with vectors of 8 lengths, 100 to 107, the "
                    "function compiled 8 times as they came and once "
                    "padded to 128.")


def test_amounts_never_use_an_exponent():
    assert readings.amount(0.000152, "ms") == "0.152 µs"
    assert readings.amount(1234.5, "ms") == "1,234 ms"
    assert readings.amount(0.5, "MiB") == "512 KiB"
    assert readings.amount(3, "") == "3"


@pytest.mark.parametrize("measured, on", [
    (dict(TIME, slow=2.0, fixed=1.0), True),
    ({"measure": "compilations", "unit": "", "slow": 8, "fixed": 1}, False),
])
def test_the_before_after_names_its_machine_by_its_short_name(
        monkeypatch, measured, on):
    from IPython import display as ipython_display

    from helpers.measuring import machine
    from helpers.workbook.ch10_field_guide import guide

    shown = []
    monkeypatch.setattr(ipython_display, "display", shown.append)
    monkeypatch.setattr(guide, "before_after", lambda case: measured)
    monkeypatch.setattr(machine, "describe",
                        lambda: {"device": "NVIDIA H100 80GB HBM3"})
    assert guide.show_measured(cases.CASES["float64"]) is None
    table, sentence = shown
    row = table.data.iloc[0].to_dict()
    # a time is this machine's; a count of compilations is every machine's
    assert row.get("measured on") == ("H100" if on else None)
    assert "NVIDIA" not in sentence.data
    assert ("On this machine (H100)" in sentence.data) == on
