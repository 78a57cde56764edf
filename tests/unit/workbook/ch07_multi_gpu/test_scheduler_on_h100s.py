"""XLA:GPU's latency hiding scheduler on eight compile-only H100s: what
chapter 6 says of the flag and of the schedule it makes."""

import pytest

from helpers.workbook.ch07_multi_gpu import schedules
from helpers.xla import crosscompile

pytestmark = pytest.mark.skipif(not crosscompile.available(),
                                reason="no XLA:GPU compiler here")


@pytest.fixture(scope="module")
def rows():
    result = crosscompile.run(schedules.schedule_for_gpu)
    return {(r["plan"], r["setting"]): r for r in result["rows"]}


def test_the_flag_on_runs_the_scheduler_and_both_off_stop_it(rows):
    flag_on, flag_off, both_off = schedules.SCHEDULER_SETTINGS
    for plan in ("data parallel", "fully sharded (FSDP)"):
        assert rows[plan, flag_on]["scheduler ran"]
        assert not rows[plan, both_off]["scheduler ran"]
        # the default follows one or the other, by jaxlib (0.10.2 runs
        # the scheduler with the flag off on Hopper, 0.12 does not)
        like = flag_on if rows[plan, flag_off]["scheduler ran"] else both_off
        assert rows[plan, flag_off]["most in flight"] == \
            rows[plan, like]["most in flight"]


def test_the_scheduler_keeps_one_collective_in_flight(rows):
    flag_on, _, both_off = schedules.SCHEDULER_SETTINGS
    dp = rows["data parallel", flag_on]
    assert dp["collectives"] >= 11 and dp["most in flight"] == 1
    # without it, every all-reduce starts early and ends late
    assert rows["data parallel", both_off]["most in flight"] > 6
    assert (rows["data parallel", both_off]["most kernels inside"]
            > 4 * dp["most kernels inside"])
