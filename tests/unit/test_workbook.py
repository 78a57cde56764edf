"""Every reference solution passes its check; every starter fails it with
the intended hint. The exercises are the workshop kit's list, so a new
exercise is tested as soon as it is listed there."""

import functools

import pytest

from helpers import env, workshop
from helpers.workbook import fusion, measuring

# The hint each untouched starter must produce, by answer name.
STARTER_HINTS = {
    "rms": "Square first",
    "time_call": "block_until_ready",
    "matmul_floor": "Count every byte",
    "which_bound": "Compare the two times",
    "bmv": "rows of at least 32",
    "predict": "powers of two",
    "problem_bytes": "both inputs and the output",
    "fast": "does not depend on the momentum",
    "filter_step": "matrix product or a mask",
    "make_loop": "static_argnums=2",
    "decide": "",
    "significant": "",
    "scope_totals": "do not average",
    "mean_of_first": "mask the entries beyond n",
    "make_step": "donate_argnums=0",
    "batched_loss": "jax.vmap maps",
    "options": "flag_registry.table()",
    "fusions_under": "in a new process",
    "known": "helpers.xla_flags.unknown",
    "block_specs": "w_out by its rows",
    "pass_along": "edge 3 -> 0",
    "ring_psum": "No psum",
}
ENTRIES = workshop.entries()
# The exercises that time the learner's code on a GPU
# (tests/gpu/test_workshop_on_gpu.py checks those criteria run there).
TIMED = {"bmv", "batched_loss"}


@functools.cache
def solved(answer):
    entry = next(e for e in ENTRIES if e.answer == answer)
    return entry.exercise.check(entry.solution)


def test_every_exercise_has_its_starter_hint():
    assert {e.answer for e in ENTRIES} == set(STARTER_HINTS)


@pytest.mark.parametrize("entry", ENTRIES,
                         ids=[e.exercise.title for e in ENTRIES])
def test_solution_passes_and_starter_fails(entry):
    report = solved(entry.answer)
    assert report.passed, report.text()
    report = entry.exercise.check(entry.starter)
    assert not report.passed
    hint = STARTER_HINTS[entry.answer]
    assert any(hint in h for h in report.failed_hints()), report.text()


@pytest.mark.skipif(env.on_gpu(), reason="a GPU runs the speed criteria")
def test_speed_criteria_are_skipped_here_saying_why():
    skipped = {e.answer for e in ENTRIES
               if any(o.status == "skip" and "target applies to a GPU"
                      in o.detail
                      for o in solved(e.answer).outcomes)}
    assert skipped == TIMED


def test_timer_that_keeps_the_compile_is_caught():
    def mean_with_compile(f, x, n=5):
        import time
        start = time.perf_counter()
        for _ in range(n):
            f(x).block_until_ready()
        return (time.perf_counter() - start) / n

    report = measuring.honest_timer.check(mean_with_compile)
    assert not report.passed
    assert "the compile leaked in" in report.outcomes[0].detail


def test_timer_that_raises_is_reported():
    def broken(f, x):
        raise ValueError("nope")

    report = measuring.honest_timer.check(broken)
    assert "raised ValueError: nope" in report.outcomes[0].detail


def test_padding_to_the_wrong_size_is_caught():
    import jax.numpy as jnp

    def pad_to_30(a, b):
        pad = [(0, 0)] * (a.ndim - 1) + [(0, 30 - a.shape[-1])]
        products = jnp.pad(a, pad) * jnp.pad(b[..., 0], pad[1:])[..., None, :]
        return products.sum(-1, keepdims=True)

    report = fusion.fast_reduction.check(pad_to_30)
    assert not report.passed
    assert "over [3]" in report.outcomes[1].detail


def test_a_prediction_that_is_not_a_kind_is_named():
    report = fusion.predict_kind.check(lambda k: "fast")
    assert "answer 'kInput' or 'kLoop'" in report.outcomes[0].detail
