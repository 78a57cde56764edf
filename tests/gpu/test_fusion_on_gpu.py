"""Chapter 2 on a GPU: XLA's rule as restated in Python agrees with the
fusion kinds the GPU compiler chooses, and the padded formulation's pad is
fused into its reduction."""

import jax.numpy as jnp
import pytest

from helpers.workbook.ch02_fusion import exercises, reductions
from helpers.xla import hlo

pytestmark = pytest.mark.gpu


def _inputs(k):
    return (jnp.ones((8, 8, 3, k), jnp.float32),
            jnp.ones((8, 8, k, 1), jnp.float32))


@pytest.mark.parametrize("k", [2, 5, 8, 16, 24, 25, 30, 32, 35, 64])
def test_rule_matches_the_gpu_compiler(k):
    reduces = [f for f in hlo.fusions(exercises.starter, *_inputs(k))
               if f.root_op == "reduce"]
    assert len(reduces) == 1, reduces
    # jax 0.11.2 hands some of these to Triton (kCustom); the fusion's
    # name keeps the reduction emitter's choice, which the rule predicts.
    rule = reductions.reduction_kind((8, 8, 3, k), [3])
    assert reduces[0].named_kind == rule


def test_padding_is_fused_and_fast_path():
    a, b = _inputs(25)
    kinds = [f.kind for f in hlo.fusions(exercises.solution, a, b)
             if f.root_op == "reduce"]
    assert kinds == ["kInput"]
    assert hlo.op_counts(exercises.solution, a, b)["pad"] == 0


def test_solution_passes_on_the_gpu():
    report = exercises.fast_reduction.check(exercises.solution)
    assert report.passed, report.text()
    assert all(o.status == "pass" for o in report.outcomes)
