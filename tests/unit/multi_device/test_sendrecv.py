"""The deadlock checker reads send/recv pairs from programs lowered for a
GPU, on a machine without one."""

import os

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from helpers.multi_device import meshes, sendrecv

RING = [(0, 1), (1, 2), (2, 3), (3, 0)]
CHAIN = [(0, 1), (1, 2), (2, 3)]


def on_four(body):
    mesh = meshes.mesh((4,), ("x",))
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"),
                               out_specs=P("x"), check_vma=False))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    return fn, x


def send_then_receive(perm_send, perm_recv):
    def body(y):
        token = sendrecv.psend(y, "x", perm_send)
        like = jax.ShapeDtypeStruct(y.shape, y.dtype)
        return sendrecv.precv(token, like, "x", perm_recv)
    return on_four(body)


def test_find_cycle():
    assert sendrecv.find_cycle(RING) == (0, 1, 2, 3)
    assert sendrecv.find_cycle(CHAIN) == ()
    assert sendrecv.find_cycle([(5, 6), (6, 5), (0, 1)]) == (5, 6)
    assert sendrecv.find_cycle([(2, 2)]) == (2,)
    assert sendrecv.find_cycle([]) == ()


def test_transfers_read_pairs_from_stablehlo():
    lowered = sendrecv.lowered_for_gpu(*send_then_receive(CHAIN, CHAIN))
    found = sendrecv.transfers(lowered)
    assert [(t.kind, t.pairs, t.position) for t in found] == [
        ("send", tuple(CHAIN), 1), ("recv", tuple(CHAIN), 2)]
    # each names the line of Python that made it (in this test file)
    assert found[0].source.startswith("test_sendrecv.py:")
    assert "stablehlo.send" in lowered.as_text()


def test_a_permute_is_read_but_never_a_deadlock():
    def body(y):
        return jax.lax.ppermute(y, "x", RING)
    lowered = sendrecv.lowered_for_gpu(*on_four(body))
    assert [t.kind for t in sendrecv.transfers(lowered)] == ["permute"]
    assert sendrecv.deadlocks(lowered) == []


def test_a_cycle_in_one_send_is_reported():
    problems = sendrecv.deadlocks(*send_then_receive(RING, RING))
    assert len(problems) == 2  # the send and the recv
    assert "cycle 0 -> 1 -> 2 -> 3 -> 0" in problems[0]
    # named by what it is and the line of this file that made it
    assert problems[0].startswith(
        "the psend with pairs [(0, 1), (1, 2), (2, 3), (3, 0)] "
        "(test_sendrecv.py:")
    assert problems[1].startswith("the precv with pairs")


def test_a_transfer_made_in_the_helpers_names_no_file():
    from helpers.workbook.ch07_multi_gpu import exercises

    program = exercises.ring_program(exercises.pass_along_starter)
    problems = sendrecv.deadlocks(*program)
    assert problems and all(".py" not in p for p in problems)
    assert problems[0].startswith("the psend with pairs [(0, 1), (1, 2), "
                                  "(2, 3), (3, 0)] contains the cycle")


class _At:
    """An operation whose location is the given text."""

    def __init__(self, location):
        self.location = location


def test_the_callers_own_line_is_named_and_a_notebook_cell_as_such():
    helper = os.path.join(sendrecv._HELPERS, "multi_device", "sendrecv.py")
    mine = f'loc(callsite("psend"("{helper}":92:4) at ' \
           'callsite("body"("/home/me/model.py":8:2) at "x"("/a/b.py":1:0)))'
    assert sendrecv._source(_At(mine)) == "model.py:8"
    cell = f'loc(callsite("psend"("{helper}":92:4) at ' \
           '"body"("/tmp/ipykernel_4242/1234.py":3:2)))'
    assert sendrecv._source(_At(cell)) == "line 3 of a notebook cell"
    assert sendrecv._source(_At(f'loc("psend"("{helper}":92:4))')) == ""


def test_a_send_without_its_recv_is_reported():
    problems = sendrecv.deadlocks(*send_then_receive(CHAIN, [(0, 1)]))
    assert "1 psend but no precv with pairs [(0, 1), (1, 2), (2, 3)]" in \
        " ".join(problems)
    assert any(p.startswith("no psend but 1 precv with pairs [(0, 1)]")
               for p in problems)


def test_a_chain_with_its_recv_is_fine():
    assert sendrecv.deadlocks(*send_then_receive(CHAIN, CHAIN)) == []


def test_a_single_pair_and_a_splat_are_read():
    """One pair, and a splat: MLIR writes an N x 2 tensor whose entries
    are all equal as one value (dense<2>)."""
    lowered = sendrecv.lowered_for_gpu(*send_then_receive([(3, 0)],
                                                          [(3, 0)]))
    assert sendrecv.transfers(lowered)[0].pairs == ((3, 0),)
    lowered = sendrecv.lowered_for_gpu(*send_then_receive([(2, 2)],
                                                          [(2, 2)]))
    assert "dense<2>" in lowered.as_text()
    assert sendrecv.transfers(lowered)[0].pairs == ((2, 2),)


def test_psend_does_not_run_on_a_cpu():
    fn, x = send_then_receive(CHAIN, CHAIN)
    with pytest.raises(NotImplementedError, match="only implemented on GPU"):
        fn(x)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="lowered_for_gpu"):
        sendrecv.transfers("stablehlo.send")


def test_api_status_reads_the_deprecation_from_this_jax():
    status = sendrecv.api_status()
    assert status.available
    newer = tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 12)
    # jax 0.12.0 deprecated both (a warning on access, a docstring note)
    assert (status.deprecation is not None) == newer
    assert (status.deprecated_in == "0.12.0") == newer


def test_the_wrappers_do_not_warn(recwarn):
    sendrecv.api_status()
    sendrecv._require("psend")
    assert not [w for w in recwarn if w.category is DeprecationWarning]


def test_a_jax_without_psend_gets_a_clear_error(monkeypatch):
    monkeypatch.setattr(sendrecv, "_fetch", lambda name: (None, None))
    assert not sendrecv.api_status().available
    with pytest.raises(NotImplementedError, match="jax.lax.ppermute"):
        sendrecv.psend(jnp.ones(2), "x", [(0, 1)])


def test_simulated_sends_move_what_the_pair_would_and_say_what_is_wrong():
    mesh = meshes.mesh((4,), ("i",))
    pairs = [(0, 1), (1, 2), (2, 3)]

    def shift(y, out_shape=None):
        token = sendrecv.psend(y, "i", pairs)
        like = out_shape or jax.ShapeDtypeStruct(y.shape, y.dtype)
        return sendrecv.precv(token, like, "i", pairs)

    def run(fn):
        return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=P("i"),
                                     out_specs=P("i"), check_vma=False))(
            jnp.arange(8.0))

    with sendrecv.simulated():
        moved = run(shift)
        with pytest.raises(ValueError, match="precv expects"):
            run(lambda y: shift(y, jax.ShapeDtypeStruct((3,), y.dtype)))
        with pytest.raises(ValueError, match="not its psend's"):
            run(lambda y: sendrecv.precv(
                sendrecv.psend(y, "i", pairs),
                jax.ShapeDtypeStruct(y.shape, y.dtype), "i", pairs[:2]))
        with pytest.raises(ValueError, match="what psend returned"):
            run(lambda y: sendrecv.precv(
                y, jax.ShapeDtypeStruct(y.shape, y.dtype), "i", pairs))
    # device 0 receives nothing (zeros), as a ppermute leaves it
    assert moved.tolist() == [0, 0, 0, 1, 2, 3, 4, 5]
    assert not sendrecv._SIMULATING  # the context leaves nothing behind
