"""helpers.xla.fresh_process: a function called in a fresh process, JSON both
ways."""

import json
import math
import os

import pytest

from helpers.xla import fresh_process


def test_the_result_comes_back_as_json():
    assert fresh_process.call(math.hypot, 3, 4) == 5.0


def test_the_child_sees_the_environment_it_is_given(monkeypatch):
    monkeypatch.setenv("BOOK_TEST_DROPPED", "here")
    assert fresh_process.call(os.getenv, "BOOK_TEST_SET",
                      env={"BOOK_TEST_SET": "yes"}) == "yes"
    assert fresh_process.call(os.getenv, "BOOK_TEST_DROPPED",
                      drop_env=("BOOK_TEST_DROPPED",)) is None


def test_a_failure_carries_the_childs_output_and_its_reason():
    with pytest.raises(fresh_process.ChildFailed) as err:
        fresh_process.call(json.loads, "{")
    assert err.value.returncode == 1
    assert err.value.reason.startswith("json.decoder.JSONDecodeError")
    assert "Traceback" in err.value.output
    assert isinstance(err.value, RuntimeError)  # callers may catch that


@pytest.mark.parametrize("fn", [lambda: 1, fresh_process.ChildFailed.__init__])
def test_functions_no_child_can_import_are_refused(fn):
    with pytest.raises(ValueError, match="top level of a module"):
        fresh_process.call(fn)


def test_a_non_function_is_refused():
    with pytest.raises(TypeError, match="expected a function"):
        fresh_process.target_of(42)
