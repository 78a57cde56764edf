"""Every reference solution passes its check; every starter fails it with
the intended hint."""

import pytest

from helpers.workbook import (drills, flags, fusion, launches, measuring,
                              scaling, tracing, using)

EXERCISES = [
    (using.root_mean_square, using.solution, using.starter,
     "Square first"),
    (measuring.honest_timer, measuring.solution, measuring.starter,
     "block_until_ready"),
    (measuring.matmul_floor, measuring.floor_solution,
     measuring.floor_starter, "Count every byte"),
    (fusion.fast_reduction, fusion.solution, fusion.starter,
     "rows of at least 32"),
    (fusion.predict_kind, fusion.predict_solution, fusion.predict_starter,
     "powers of two"),
    (launches.fewer_launches, launches.solution, launches.starter,
     "does not depend on the momentum"),
    (launches.fused_step, launches.filter_solution, launches.filter_starter,
     "matrix product or a mask"),
    (tracing.TRACE_ONCE, tracing.mean_of_first_solution,
     tracing.mean_of_first_starter, "mask the entries beyond n"),
    (tracing.DONATE, tracing.make_step_solution,
     tracing.make_step_starter, "donate_argnums=0"),
    (flags.FIND_THE_OPTION, flags.options_solution, flags.options_starter,
     "flag_registry.table()"),
    (drills.WHICH_BOUND, drills.which_bound_solution,
     drills.which_bound_starter, "Compare the two times"),
    (drills.PROBLEM_BYTES, drills.problem_bytes_solution,
     drills.problem_bytes_starter, "both inputs and the output"),
    (drills.STATIC_TRIP_COUNT, drills.make_loop_solution,
     drills.make_loop_starter, "static_argnums=2"),
    (drills.SCOPE_TOTALS, drills.scope_totals_solution,
     drills.scope_totals_starter, "do not average"),
    (drills.VMAP_LOSS, drills.batched_loss_solution,
     drills.batched_loss_starter, "jax.vmap maps"),
    (drills.FLAG_REACHES_XLA, drills.fusions_under_solution,
     drills.fusions_under_starter, "in a new process"),
    (drills.KNOWN_FLAGS, drills.known_solution, drills.known_starter,
     "helpers.xla_flags.unknown"),
    (scaling.ONE_ALL_REDUCE, scaling.block_specs_solution,
     scaling.block_specs_starter, "w_out by its rows"),
    (scaling.UNTANGLE_RING, scaling.pass_along_solution,
     scaling.pass_along_starter, "edge 3 -> 0"),
    (scaling.RING_ALL_REDUCE, scaling.ring_psum_solution,
     scaling.ring_psum_starter, "No psum"),
]


@pytest.mark.parametrize("exercise, solution, starter, hint", EXERCISES,
                         ids=[e[0].title for e in EXERCISES])
def test_solution_passes_and_starter_fails(exercise, solution, starter,
                                           hint):
    assert exercise.check(solution).passed, exercise.check(solution).text()
    report = exercise.check(starter)
    assert not report.passed
    assert any(hint in h for h in report.failed_hints()), report.text()


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
