"""Chapter 4 on a GPU: kernels carry their named scope in the profile
itself, the trimmed fixture keeps them, and the analysis runs end to end."""

import jax
import pytest

from helpers.profiler import trace, xplanes, xprof_tables
from helpers.workbook.ch04_profiling import attention, verdicts

pytestmark = pytest.mark.gpu

SHAPE = dict(batch=2, seq=128, n_embd=256, n_head=4)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile")
    params, x = attention.init(jax.random.key(0), **SHAPE)
    kernels = attention.profile_calls(attention.versions(SHAPE["n_head"]),
                                      params, x, calls=10, folder=folder)
    return folder, kernels


def test_gpu_kernels_name_their_scope_without_the_hlo(profiled):
    folder, _ = profiled
    events = trace.device_events(trace.load(folder))
    assert not events.empty
    for scope in attention.SCOPES:
        assert not trace.in_scope(events, scope).empty, scope
    assert (events["hlo_op"] != "").any()


def test_every_call_has_kernels_in_both_scopes(profiled):
    _, kernels = profiled
    counts = attention.per_call(kernels).groupby(["version", "scope"]).size()
    assert len(counts) == 4 and (counts == 10).all()
    table = attention.compare_scopes(kernels)
    assert set(table["verdict"]) <= {"einsum faster", "matmul faster",
                                     "no detectable difference",
                                     verdicts.NO_CLEAR}


def test_trimmed_profile_keeps_the_scoped_kernels(profiled, tmp_path):
    folder, _ = profiled
    trace.trim(folder, tmp_path)
    small = trace.load(tmp_path)
    assert small["process"].str.startswith("/device:").all()
    assert not trace.in_scope(small, "attn_q_k").empty


def test_without_command_buffers_xprof_times_each_hlo_op(tmp_path):
    """With command buffers off each kernel is launched as its own HLO op,
    so XProf's hlo_stats has rows (with CUDA graphs it has none, and
    `xplanes.command_buffers` names the graph it saw instead)."""
    params, x = attention.init(jax.random.key(0), **SHAPE)
    per_op = attention.versions(SHAPE["n_head"],
                                xprof_tables.NO_COMMAND_BUFFERS)
    attention.profile_calls(per_op, params, x, calls=5, folder=tmp_path)
    assert xplanes.command_buffers(tmp_path) == []
    ops = xprof_tables.table(tmp_path, "hlo_stats")
    assert len(ops) >= 4 and (ops["total_time_us"] > 0).all()
