"""XLA:GPU's latency hiding scheduler on eight compile-only H100s: what
chapter 6 says of the flag and of the schedule it makes."""

import pytest

from helpers.workbook.ch07_multi_gpu import schedules
from helpers.xla import crosscompile

pytestmark = pytest.mark.skipif(not crosscompile.available(),
                                reason="no XLA:GPU compiler here")


@pytest.fixture(scope="module")
def rows():
    result = crosscompile.run(schedules.schedule_on_gpu)
    return {(r["plan"], r["setting"]): r for r in result["rows"]}


def test_the_flag_off_still_runs_the_scheduler_on_hopper(rows):
    flag_on, flag_off, both_off = schedules.SCHEDULER_SETTINGS
    for plan in ("data parallel", "fully sharded (FSDP)"):
        assert rows[plan, flag_off]["scheduler ran"]
        assert rows[plan, flag_off] | {"setting": flag_on} == \
            rows[plan, flag_on]
        assert not rows[plan, both_off]["scheduler ran"]


def test_the_scheduler_keeps_one_collective_in_flight(rows):
    _, flag_off, both_off = schedules.SCHEDULER_SETTINGS
    dp = rows["data parallel", flag_off]
    assert dp["collectives"] == 12 and dp["most in flight"] == 1
    # without it, every all-reduce starts early and ends late
    assert rows["data parallel", both_off]["most in flight"] > 6
    assert (rows["data parallel", both_off]["most kernels inside"]
            > 4 * dp["most kernels inside"])
