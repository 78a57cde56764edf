"""What XLA:GPU's combiners do to the collectives of a step compiled for
eight H100s: checked here, without a GPU, through helpers.xla.crosscompile."""

import pytest

from helpers.workbook.ch07_multi_gpu import collectives
from helpers.xla import crosscompile

# The module fixture compiles for eight H100s in a child: seconds.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not crosscompile.available(),
                                 reason=str(crosscompile.why_unavailable()))]


@pytest.fixture(scope="module")
def rows():
    combine = crosscompile.run(collectives.combine_for_gpu)
    return {(r["plan"], r["threshold_bytes"]): r for r in combine["rows"]}


def test_a_zero_threshold_keeps_every_gradient_all_reduce_apart(rows):
    # 6 blocks x 2 weights: one all-reduce each when nothing is combined
    assert rows["data parallel", 0]["all-reduce"] == 12
    # four 1 MiB gradients fit under 4 MiB; the default combines all
    assert rows["data parallel", 4 << 20]["all-reduce"] == 3
    assert rows["data parallel", None]["all-reduce"] == 1


def test_fsdp_scatters_gradients_on_the_gpu(rows):
    # XLA:GPU turns all-reduce + slice into reduce-scatter (XLA:CPU
    # does not), and gathers each weight when nothing is combined
    apart = rows["fully sharded (FSDP)", 0]
    assert apart["all-gather"] == 12 and apart["reduce-scatter"] == 12
    assert "all-reduce" not in apart


def test_combining_everything_leaves_nothing_to_overlap(rows):
    # separate all-reduces start as each gradient is ready and overlap the
    # rest of the backward pass; one combined all-reduce waits for the
    # last gradient, so no kernel runs beside it
    assert rows["data parallel", 0]["kernels overlapping"] > 0
    assert rows["data parallel", None]["kernels overlapping"] == 0
