"""A sentence's check against the data: it fails the build on a GPU's
data that contradict it, passes on a dry run's, and on a GPU visit notes
the claim and lets the chapter measure on."""

import pytest

from helpers.measuring.results import Result
from helpers.page import claims

RECORDED = Result("01_measuring/summary", "recorded", {}, {})
DRY_RUN = Result("01_measuring/summary", "dry run", {}, None)


def test_a_gpus_data_that_contradict_a_claim_fail_the_build(monkeypatch):
    monkeypatch.delenv(claims.LOG_VARIABLE, raising=False)
    claims.check(RECORDED, "two is more than one", 2 > 1)
    with pytest.raises(claims.ClaimContradicted,
                       match="'one is more than two'.*rewrite"):
        claims.check(RECORDED, "one is more than two", 1 > 2)
    # a claim comparing two recordings is checked only when both are a
    # GPU's, and a function is not called on a dry run's numbers
    claims.check((RECORDED, DRY_RUN), "one is more than two", 1 > 2)
    claims.check(DRY_RUN, "never read", lambda: 1 / 0 > 0)


def test_a_visit_notes_each_contradicted_claim_and_goes_on(
        monkeypatch, tmp_path, capsys):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv(claims.LOG_VARIABLE, str(log))
    assert claims.contradicted(log) == []
    claims.check(RECORDED, "two is more than one", 2 > 1)
    claims.check(RECORDED, "one is more than two", 1 > 2)
    claims.check((RECORDED, RECORDED), "three is less than two", 3 < 2)
    claims.check(DRY_RUN, "not a GPU's data", 1 > 2)
    assert claims.contradicted(log) == [
        {"claim": "one is more than two",
         "recordings": "01_measuring/summary"},
        {"claim": "three is less than two",
         "recordings": "01_measuring/summary, 01_measuring/summary"}]
    assert "noted for the visit" in capsys.readouterr().err
    # check_here's data are the same on every machine: a visit never
    # sees them contradicted first, so it still stops
    with pytest.raises(claims.ClaimContradicted):
        claims.check_here("three is less than two", 3 < 2)


def test_a_claim_needs_its_words():
    with pytest.raises(ValueError, match="in words"):
        claims.check(RECORDED, "", True)
