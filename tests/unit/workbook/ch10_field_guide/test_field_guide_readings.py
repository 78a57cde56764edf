"""The field guide's row for each before/after names what was measured,
on this machine, with readable numbers."""

import pytest

from helpers.workbook.ch10_field_guide import cases, readings

TIME = {"measure": "median time", "unit": "ms"}


def test_every_case_has_its_own_wording():
    assert set(readings.WORDING) == set(cases.CASES)
    assert all(w.slow != w.fixed for w in readings.WORDING.values())


@pytest.mark.parametrize("name, size", [
    ("float64", 2**20), ("sort-64-bit", 2**20),
    ("scatter-contention", 2**20), ("host-callback", 2**16),
    ("random-in-loop", 64), ("host-round-trip", 64)])
def test_the_sizes_named_are_the_cases_own(name, size):
    first = cases.CASES[name].arguments()[-1 if name == "random-in-loop"
                                          else 0]
    assert first.size == size
    assert f"{size:,}" in readings.WORDING[name].measured


def test_a_time_reads_with_its_versions_words_and_ratio():
    shown = readings.row("sort-64-bit", dict(TIME, slow=95.1, fixed=93.2),
                         "CPU")
    assert shown == {"what": "argsort of 1,048,576 keys",
                     "measure": "median time",
                     "slow version": "95.1 ms with int64 keys",
                     "fixed version": "93.2 ms with int32 keys",
                     "slow against fixed": "1.02×", "measured on": "CPU"}
    slower = readings.row("random-in-loop", dict(TIME, slow=0.1, fixed=0.3),
                          "CPU")
    assert slower["slow against fixed"] == "0.333×"


def test_a_pallas_fix_off_a_gpu_has_no_ratio():
    shown = readings.row("launches-per-step", dict(
        TIME, slow=2.0, fixed=900.0, interpreted=True), "CPU")
    assert shown["fixed version"] == "900 ms as one Pallas kernel " \
        "(interpreted)"
    assert "slow against fixed" not in shown


def test_memory_reads_in_bytes_when_small():
    gone = readings.row("no-donation", {
        "measure": "temporaries + outputs", "unit": "MiB", "slow": 4.0,
        "fixed": 16 / 2**20}, "CPU")
    assert gone["slow version"] == "4 MiB without donation"
    assert gone["fixed version"] == "16 bytes with the parameters donated"
    assert gone["slow against fixed"] == "4 MiB more"
    nothing = readings.row("no-donation", {
        "measure": "temporaries + outputs", "unit": "MiB", "slow": 4.0,
        "fixed": 0.0}, "CPU")
    assert nothing["slow against fixed"] == "no fixed cost"


def test_compilations_name_no_machine():
    shown = readings.row("retracing", {
        "measure": "compilations", "unit": "", "slow": 8, "fixed": 1}, "CPU")
    assert shown["slow version"] == "8 as they came"
    assert shown["fixed version"] == "1 padded to 128"
    assert "measured on" not in shown


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
    table, = shown
    row = table.data.iloc[0].to_dict()
    # a time is this machine's; a count of compilations is every machine's
    assert row.get("measured on") == ("H100" if on else None)
    assert "NVIDIA" not in table.to_html()
