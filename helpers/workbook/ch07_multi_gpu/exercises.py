"""Chapter 7's exercises: shard a block so it compiles to one all-reduce,
untangle a send ring that would deadlock, and build an all-reduce from
ring shifts.

All three run on four devices from `helpers.multi_device.meshes` (simulated CPU
devices on a machine without four GPUs). Each exercise has a ``*_starter``
(what the learner begins from, which fails) and a ``*_solution`` (which
passes).
"""

from __future__ import annotations

import collections
import contextlib
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from helpers.grading.answer_forms import WrongAnswer, as_mapping, describe
from helpers.grading.exercises import (
    Exercise,
    Outcome,
    described,
    description_of,
    learner_error,
    not_graded,
)
from helpers.multi_device import meshes, sendrecv
from helpers.workbook.ch07_multi_gpu.collectives import on_each_device
from helpers.xla import hlo

DEVICES = 4
WIDTH, HIDDEN, BATCH = 32, 64, 8


def _mesh(axis: str) -> jax.sharding.Mesh:
    return meshes.mesh((DEVICES,), (axis,))


# --- Exercise 7.1: one all-reduce -----------------------------------------

def block(w_in: jax.Array, w_out: jax.Array, x: jax.Array) -> jax.Array:
    """The MLP block to shard: gelu(x @ w_in) @ w_out."""
    return jax.nn.gelu(x @ w_in) @ w_out


def block_specs_starter() -> dict[str, P]:
    """Return the PartitionSpecs of w_in and w_out over the axis 'model'."""
    return {"w_in": P(), "w_out": P()}  # replicated: fix me


def block_specs_solution() -> dict[str, P]:
    """Megatron's split: w_in by columns, w_out by rows, so each device
    makes a partial product of the whole output and one all-reduce sums
    them."""
    return {"w_in": P(None, "model"), "w_out": P("model", None)}


def _block_case() -> tuple[jax.Array, jax.Array, jax.Array]:
    k1, k2, k3 = jax.random.split(jax.random.key(7), 3)
    return (jax.random.normal(k1, (WIDTH, HIDDEN)) / WIDTH ** 0.5,
            jax.random.normal(k2, (HIDDEN, WIDTH)) / HIDDEN ** 0.5,
            jax.random.normal(k3, (BATCH, WIDTH)))


SPECS_HINT = ("Return {'w_in': PartitionSpec(...), 'w_out': "
              "PartitionSpec(...)}, one spec per weight.")


def _block_specs(specs_fn: Callable[[], Any]) -> dict[str, P]:
    """The learner's specs as PartitionSpecs: a plain tuple or list means
    the same as a PartitionSpec of its entries, and None means
    replicated.

    Raises:
        WrongAnswer: not a dict of w_in and w_out, or a value that is no
            spec (a string, a number, a NamedSharding...).
    """
    specs = as_mapping(specs_fn(), keys=("w_in", "w_out"))
    out = {}
    for key, spec in specs.items():
        if spec is None:
            spec = P()
        elif isinstance(spec, (tuple, list)) and not isinstance(spec, P):
            spec = P(*spec)
        if not isinstance(spec, P):
            raise WrongAnswer(f"'{key}' is {describe(spec)}; expected a "
                              "PartitionSpec such as P(None, 'model')")
        out[key] = spec
    return out


@described("weights split over 4 devices; one all-reduce, nothing else")
def _sharded_block(specs_fn: Callable[[], dict[str, P]]) -> Outcome:
    name = description_of(_sharded_block)
    hint = ("A device that holds some of the hidden units needs the part "
            "of w_out that reads those units: split the two weights so "
            "that each device computes a partial sum of the whole "
            "output.")
    try:
        specs = _block_specs(specs_fn)
    except WrongAnswer as err:
        return Outcome(name, "fail", str(err), SPECS_HINT)
    except Exception as err:  # the learner's function raised
        return learner_error(name, err, SPECS_HINT)
    try:
        mesh = _mesh("model")
        w_in, w_out, x = _block_case()
        w_in, w_out = (jax.device_put(w, NamedSharding(mesh, specs[k]))
                       for w, k in ((w_in, "w_in"), (w_out, "w_out")))
        fn = jax.jit(block, out_shardings=NamedSharding(mesh, P()))
        counts = hlo.collective_counts(fn.lower(w_in, w_out, x).compile()
                                   .as_text())
    except Exception as err:  # the learner's specs may be anything
        return learner_error(name, err, hint)
    shares = [w.addressable_shards[0].data.size / w.size
              for w in (w_in, w_out)]
    if any(share > 1 / DEVICES for share in shares):
        return Outcome(name, "fail", f"each device holds {shares} of "
                       "(w_in, w_out); want a quarter of each", hint)
    if counts != {"all-reduce": 1}:
        return Outcome(name, "fail", f"compiled collectives: {counts}",
                       hint)
    return Outcome(name, "pass", "a quarter of each weight per device; "
                   "the compiled module has exactly one all-reduce")


@described("the sharded block computes the same numbers")
def _block_numbers(specs_fn: Callable[[], dict[str, P]]) -> Outcome:
    name = description_of(_block_numbers)
    try:
        specs = _block_specs(specs_fn)
    except WrongAnswer as err:
        return Outcome(name, "fail", str(err), SPECS_HINT)
    try:
        mesh = _mesh("model")
        w_in, w_out, x = _block_case()
        want = block(w_in, w_out, x)
        got = jax.jit(block)(*(jax.device_put(
            w, NamedSharding(mesh, specs[k])) for w, k in
            ((w_in, "w_in"), (w_out, "w_out"))), x)
    except Exception as err:
        return learner_error(name, err, SPECS_HINT)
    ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    return Outcome(name, "pass" if ok else "fail",
                   "agrees with one device" if ok else "differs")


one_all_reduce = Exercise(
    "Exercise 7.1: shard the block so it needs one all-reduce",
    [_sharded_block, _block_numbers],
    hints=["jax.sharding.PartitionSpec(None, 'model') splits a matrix's "
           "columns over the 'model' axis.",
           "If w_in is split by columns, each device holds some hidden "
           "units; which part of w_out does it need for those?"],
    reread="7.4 What a sharding compiles to",
    chapter="07_multi_gpu", answer="block_specs", level="warm-up",
    starter=block_specs_starter, solution=block_specs_solution)


# --- Exercise 7.2: a ring of sends that does not deadlock ------------------

def _ring(p: int) -> list[tuple[int, int]]:
    return [(s, (s + 1) % p) for s in range(p)]


def pass_along_starter(y: jax.Array) -> jax.Array:
    """Send y from every stage to the next around the ring of 4 stages
    (axis 'stage') and return what arrives."""
    sent = sendrecv.psend(y, "stage", _ring(DEVICES))
    like = jax.ShapeDtypeStruct(y.shape, y.dtype)
    return sendrecv.precv(sent, like, "stage", _ring(DEVICES))


def pass_along_solution(y: jax.Array) -> jax.Array:
    """The forward edge 0 -> 1 -> 2 -> 3 as a psend/precv pair, which has
    no cycle, and the back edge 3 -> 0 as a collective permute, as in
    JAX's GPU performance guide."""
    forward = [(s, s + 1) for s in range(DEVICES - 1)]
    sent = sendrecv.psend(y, "stage", forward)
    like = jax.ShapeDtypeStruct(y.shape, y.dtype)
    from_previous = sendrecv.precv(sent, like, "stage", forward)
    from_last = jax.lax.ppermute(y, "stage", [(DEVICES - 1, 0)])
    first = jax.lax.axis_index("stage") == 0
    return jnp.where(first, from_last, from_previous)


def ring_program(fn: Callable[[jax.Array], jax.Array]
                 ) -> tuple[Callable[..., Any], jax.Array]:
    """``fn`` run by each of 4 stages in `shard_map` (axis ``'stage'``),
    jitted, and an input with one block of 2 numbers per stage."""
    mesh = _mesh("stage")
    spec = P("stage")
    program = jax.jit(jax.shard_map(lambda y: fn(y), mesh=mesh,
                                    in_specs=spec, out_specs=spec,
                                    check_vma=False))
    y = jax.device_put(jnp.arange(DEVICES * 2.0), NamedSharding(mesh, spec))
    return program, y


@described("no deadlock rule broken (read from the program for a GPU)")
def _no_deadlock(fn: Callable[[jax.Array], jax.Array]) -> Outcome:
    name = description_of(_no_deadlock)
    hint = ("A single psend or precv must not contain a cycle: send the "
            "edge 3 -> 0 some other way.")
    try:
        lowered = sendrecv.lowered_for_gpu(*ring_program(fn))
    except Exception as err:
        return learner_error(name, err, hint)
    problems = sendrecv.deadlocks(lowered)
    if problems:
        return Outcome(name, "fail", "; ".join(problems), hint)
    pairs = {pair for t in sendrecv.transfers(lowered) if t.kind != "recv"
             for pair in t.pairs}
    missing = sorted(set(_ring(DEVICES)) - pairs)
    if missing:
        return Outcome(name, "fail", f"no transfer carries {missing}",
                       "Every stage must still reach the next one.")
    return Outcome(name, "pass", "no cycle in any send or recv, each send "
                   "matched, and every ring edge carried")


@described("each stage gets its neighbour's value")
def _ring_numbers(fn: Callable[[jax.Array], jax.Array]) -> Outcome:
    name = description_of(_ring_numbers)
    program, y = ring_program(fn)
    # Only GPUs send and receive; on simulated CPU devices the pairs move
    # the same numbers by ppermute (the first criterion reads the GPU's
    # program for deadlocks).
    on_cpus = next(iter(y.devices())).platform == "cpu"
    where = " (sends simulated on CPU devices)" if on_cpus else ""
    if _hangs(fn):  # never run it: on GPUs it would hang this notebook
        return Outcome(name, "fail", "on GPUs this program waits forever "
                       "before any value arrives", "Untangle the sends "
                       "first: the check above says which rule breaks.")
    try:
        with sendrecv.simulated() if on_cpus else contextlib.nullcontext():
            got = np.asarray(program(y))
    except NotImplementedError:  # no psend here, or a jitted answer
        return not_graded(name, "GPUs, or psend and precv simulated "
                          "(this jax has none, or a jitted pass_along "
                          "kept the real ones)")
    except Exception as err:
        return learner_error(name, err,
                             "Check the shapes you send and receive.")
    ok = np.array_equal(got, np.roll(np.asarray(y), 2))
    return Outcome(name, "pass" if ok else "fail", "each stage holds the "
                   "previous stage's block" + where if ok
                   else f"got {got}{where}")


def _hangs(fn: Callable[[jax.Array], jax.Array]) -> bool:
    """Whether ``fn``'s ring, lowered for GPUs, breaks a deadlock rule
    (a program that does not lower is left to the other checks)."""
    try:
        return bool(sendrecv.deadlocks(
            sendrecv.lowered_for_gpu(*ring_program(fn))))
    except Exception:  # the learner's error is reported by the checks
        return False


untangle_ring = Exercise(
    "Exercise 7.2: pass values around a ring without deadlock",
    [_no_deadlock, _ring_numbers],
    hints=["helpers.multi_device.sendrecv.deadlocks(program, *args) says "
           "which rule breaks.",
           "Send/receive pairs deadlock when their edges close a cycle. Which"
           " collective moves every device's value in one operation?"],
    reread="7.6 A circular pipeline",
    chapter="07_multi_gpu", answer="pass_along", level="core",
    starter=pass_along_starter, solution=pass_along_solution)


# --- Exercise 7.3: all-reduce from ring shifts ----------------------------

def ring_psum_starter(x: jax.Array, axis: str) -> jax.Array:
    """Sum x over `axis` using only jax.lax.ppermute."""
    return jax.lax.psum(x, axis)  # replace with ring steps


def ring_psum_solution(x: jax.Array, axis: str) -> jax.Array:
    """Reduce-scatter then all-gather, each as p - 1 ring shifts: the
    bandwidth-optimal ring all-reduce of
    `helpers.multi_device.collective_cost`."""
    p = jax.lax.axis_size(axis)
    me = jax.lax.axis_index(axis)
    chunks = x.reshape(p, -1)
    shift = _ring(p)
    # After step k this device holds chunk (me - 1 - k) summed over k + 2
    # devices; after p - 1 steps, chunk (me + 1) summed over all.
    acc = chunks[me]
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, shift) + chunks[(me - 1 - k) % p]
    out = jnp.zeros_like(chunks).at[(me + 1) % p].set(acc)
    for k in range(p - 1):
        acc = jax.lax.ppermute(acc, axis, shift)
        out = out.at[(me - k) % p].set(acc)
    return out.reshape(x.shape)


def _ring_psum_case() -> tuple[jax.sharding.Mesh, jax.Array]:
    mesh = _mesh("d")
    x = jax.random.normal(jax.random.key(3), (DEVICES, 4 * DEVICES))
    return mesh, jax.device_put(x, NamedSharding(mesh, P("d")))


@described("every device ends with the sum over devices")
def _ring_psum_numbers(fn: Callable[..., jax.Array]) -> Outcome:
    name = description_of(_ring_psum_numbers)
    mesh, x = _ring_psum_case()
    try:
        got = np.asarray(on_each_device(fn, mesh, "d")(x))
    except Exception as err:
        return learner_error(name, err,
                             "Start from x.reshape(p, -1): p chunks.")
    want = np.broadcast_to(np.asarray(x).sum(0), got.shape)
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    return Outcome(name, "pass" if ok else "fail",
                   "matches NumPy" if ok else "wrong sums",
                   "" if ok else "Check which chunk each step adds.")


@described("compiled to ring shifts only: 2 (p - 1) collective permutes")
def _only_permutes(fn: Callable[..., jax.Array]) -> Outcome:
    name = description_of(_only_permutes)
    mesh, x = _ring_psum_case()
    try:
        text = hlo.compiled_text(on_each_device(fn, mesh, "d"), x)
    except Exception as err:
        return learner_error(name, err, "")
    kinds = collections.Counter(c.kind for c in hlo.collectives(text))
    # Shifts run per call: a loop of p - 1 shifts counts p - 1, not one.
    shifts = hlo.executed_count(text, {"collective-permute",
                                       "collective-permute-start"})
    want = 2 * (DEVICES - 1)
    if set(kinds) != {"collective-permute"} or shifts != want:
        return Outcome(name, "fail", f"compiled collectives: {dict(kinds)}"
                       f"; shifts run per call: {shifts}, want {want} and "
                       "nothing else", "No psum: p - 1 shifts to reduce, "
                       "p - 1 to share the reduced chunks.")
    return Outcome(name, "pass", f"{want} collective permutes run per call "
                   "and no other collective")


ring_all_reduce = Exercise(
    "Exercise 7.3: an all-reduce built from ring shifts",
    [_ring_psum_numbers, _only_permutes],
    hints=["Split x into p chunks. In step k, send your running chunk to "
           "the next device and add your own copy of the chunk you receive.",
           "After p - 1 steps each device owns one fully summed chunk; p - 1"
           " more shifts hand those around."],
    reread="7.3 The collectives, one by one",
    chapter="07_multi_gpu", answer="ring_psum", level="stretch",
    starter=ring_psum_starter, solution=ring_psum_solution)
