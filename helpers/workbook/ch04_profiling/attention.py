"""Chapter 4 (Profiling and statistics): the attention block and its runs.

The source article timed the two matrix products of a GPT-2 causal
self-attention block, written once with ``jnp.einsum`` and once with
``jnp.matmul``, from `jax.profiler` traces filtered by `jax.named_scope`.
This module holds that block in plain JAX, runs versions of it inside one
profile with each call marked, and turns the profile into one row per
(version, call, scope) that `helpers.measuring.stats.compare` can read.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pandas as pd

from helpers.measuring import bench, device_time, machine, recorded, stats
from helpers.workbook.ch04_profiling import fused, noise, verdicts
from helpers.profiler import trace, xprof_tables
from helpers.xla import hlo, xla_dump

SCOPES = ("attn_q_k", "attn_att_v")  # the source's two named scopes


# GPT-2 small's width and heads: the block the reference GPU runs.
GPU_SHAPE = dict(batch=8, seq=256, n_embd=768, n_head=12)


def shape() -> dict[str, int]:
    """Batch, sequence, width and heads: `GPU_SHAPE` on a GPU, a smaller
    block on a CPU so the chapter runs in seconds."""
    return machine.sizes(gpu=dict(GPU_SHAPE),
                         cpu=dict(batch=2, seq=64, n_embd=128, n_head=4))


def init(key: jax.Array, batch: int, seq: int, n_embd: int, n_head: int
         ) -> tuple[dict[str, jax.Array], jax.Array]:
    """Random weights of the two projections and an input ``x``."""
    k1, k2, k3 = jax.random.split(key, 3)
    scale = n_embd ** -0.5
    params = {
        "c_attn_w": jax.random.normal(k1, (n_embd, 3 * n_embd)) * scale,
        "c_attn_b": jnp.zeros(3 * n_embd),
        "c_proj_w": jax.random.normal(k2, (n_embd, n_embd)) * scale,
        "c_proj_b": jnp.zeros(n_embd),
    }
    return params, jax.random.normal(k3, (batch, seq, n_embd))


def attention(params: dict[str, jax.Array], x: jax.Array, *, n_head: int,
              use_einsum: bool) -> jax.Array:
    """Causal self-attention of ``x`` (batch, seq, width), no dropout.

    The two products the source compared sit in named scopes, so every
    kernel they compile to carries ``attn_q_k`` or ``attn_att_v`` in its
    path.
    """
    batch, seq, width = x.shape
    qkv = x @ params["c_attn_w"] + params["c_attn_b"]
    q, k, v = (t.reshape(batch, seq, n_head, width // n_head)
               .swapaxes(1, 2) for t in jnp.split(qkv, 3, axis=-1))
    with jax.named_scope("attn_q_k"):
        if use_einsum:
            att = jnp.einsum("bhts,bhqs->bhtq", q, k, optimize=True)
        else:
            att = jnp.matmul(q, k.swapaxes(-2, -1))
        att = att / jnp.sqrt(k.shape[-1])
    causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
    att = jax.nn.softmax(jnp.where(causal, att, -jnp.inf), axis=-1)
    with jax.named_scope("attn_att_v"):
        if use_einsum:
            y = jnp.einsum("bhts,bhsq->bhtq", att, v, optimize=True)
        else:
            y = jnp.matmul(att, v)
    y = y.swapaxes(1, 2).reshape(batch, seq, width)
    return y @ params["c_proj_w"] + params["c_proj_b"]


def floor_counts(batch: int, seq: int, n_embd: int, n_head: int
                 ) -> tuple[int, int]:
    """The block's floor, counted by hand: its matrix products' flops, and
    the fewest float32 bytes it must move (``x``, the weights and biases
    read once, the output written once; the scores never leave the chip).

    The four products: the q, k, v projection (2 B T C 3C), the scores
    and the weighted values (2 B H T T D each, D = C / H) and the output
    projection (2 B T C C). Softmax and the biases add a few operations
    per element, which the floor leaves out.

    Example:
        >>> floor_counts(batch=8, seq=256, n_embd=768, n_head=12)
        (11274289152, 22032384)
    """
    head = n_embd // n_head
    flops = (2 * batch * seq * n_embd * 3 * n_embd
             + 2 * 2 * batch * n_head * seq * seq * head
             + 2 * batch * seq * n_embd * n_embd)
    weights = 3 * n_embd * n_embd + n_embd * n_embd + 4 * n_embd
    moved = 4 * (2 * batch * seq * n_embd + weights)
    return flops, moved


def product_counts(batch: int, seq: int, n_embd: int, n_head: int
                   ) -> tuple[int, int]:
    """One of the two products the source timed, counted by hand: its
    flops, and the fewest float32 bytes it must move. Both have the same:
    the scores read ``q`` and ``k`` (B H T D each) and write B H T T; the
    weighted values read the B H T T weights and ``v`` and write B H T D.

    Example:
        >>> product_counts(batch=8, seq=256, n_embd=768, n_head=12)
        (805306368, 37748736)
    """
    head = n_embd // n_head
    flops = 2 * batch * n_head * seq * seq * head
    moved = 4 * (2 * batch * n_head * seq * head + batch * n_head * seq * seq)
    return flops, moved


def versions(n_head: int, compiler_options: dict[str, Any] | None = None
             ) -> dict[str, jax.stages.Wrapped]:
    """The two jitted spellings of the block, by name, compiled with
    ``compiler_options`` (XLA options, e.g.
    `xprof_tables.NO_COMMAND_BUFFERS`) when given."""
    return {name: jax.jit(functools.partial(attention, n_head=n_head,
                                            use_einsum=use_einsum),
                          compiler_options=compiler_options)
            for name, use_einsum in (("einsum", True), ("matmul", False))}


def profile_calls(fns: dict[str, jax.stages.Wrapped], *args: Any,
                  calls: int = 20, order: bench.Order = "alternating",
                  folder: str | None = None) -> pd.DataFrame:
    """Run each function ``calls`` times inside one profile; return the
    kernels in `SCOPES`, each labelled with the call it belongs to.

    Every call runs in a `jax.profiler.TraceAnnotation` named
    ``"<name>#<i>"`` and waits for its result, so a kernel belongs to the
    annotation whose span holds its start.

    Returns:
        One row per kernel: ``version``, ``call``, ``scope`` (one of
        `SCOPES`), ``name`` and ``dur_us``.
    """
    for fn in fns.values():  # compile outside the profile
        bench.block(fn(*args))
    folder = folder or tempfile.mkdtemp(prefix="profile-")
    counts = dict.fromkeys(fns, 0)
    with jax.profiler.trace(folder):
        for name in bench.schedule(list(fns), calls, order):
            with jax.profiler.TraceAnnotation(f"{name}#{counts[name]}"):
                bench.block(fns[name](*args))
            counts[name] += 1
    texts = {name: fn.lower(*args).compile().as_text() or ""
             for name, fn in fns.items()}
    return _label(trace.load(folder), texts)


def _label(events: pd.DataFrame, texts: dict[str, str]) -> pd.DataFrame:
    """Kernels in `SCOPES`, with the version and call of the annotation
    that holds each one's start.

    Scopes missing from the trace are looked up in the HLO of the version
    that ran: two programs may give one instruction name different paths.
    """
    pattern = rf"^(?:{'|'.join(texts)})#\d+$"
    marks = events[events["name"].str.match(pattern)]
    marks = marks.assign(end_us=marks["start_us"] + marks["dur_us"])
    placed = pd.merge_asof(events, marks[["start_us", "end_us", "name"]]
                           .rename(columns={"name": "mark"}),
                           on="start_us", direction="backward")
    placed = placed[placed["start_us"] <= placed["end_us"]]
    placed[["version", "call"]] = placed["mark"].str.split("#", expand=True)
    rows = []
    for version, ran in placed.groupby("version"):
        ran = trace.attach_scopes(ran, texts[version])
        for scope in SCOPES:
            kernels = trace.in_scope(ran, scope)
            rows.append(pd.DataFrame({
                "version": version, "call": kernels["call"].astype(int),
                "scope": scope, "name": kernels["name"],
                "dur_us": kernels["dur_us"]}))
    return pd.concat(rows, ignore_index=True)


def whole_calls(folder: str | Path, names: list[str]) -> pd.DataFrame:
    """Each profiled call's device time, whole: `profile_calls`' profile
    in ``folder`` read by `helpers.measuring.device_time.per_call`, every
    kernel of the call (the scopes' and the rest).

    Returns:
        One row per call: ``version``, ``call``, ``kernels``,
        ``kernel_us``, ``span_us`` and ``in_graph``.
    """
    events = trace.load(folder)
    pattern = rf"^(?:{'|'.join(names)})#\d+$"
    marks = events[events["name"].str.match(pattern)].sort_values(
        "start_us")
    windows = list(zip(marks["start_us"],
                       marks["start_us"] + marks["dur_us"]))
    calls = device_time.per_call(events, windows)
    labels = marks["name"].str.split("#", expand=True)
    return calls.assign(version=labels[0].to_numpy(),
                        call=labels[1].astype(int).to_numpy())


def fixture_calls(folder: str | Path, names: tuple[str, ...] = (
        "einsum", "matmul")) -> pd.DataFrame | None:
    """Each call's device time in a kept profile that lost its host
    annotations (`trace.trim` keeps device events only): when every call
    ran as one CUDA graph launch, its kernels share the launch's
    correlation id, and the calls alternate ``names`` in that order
    (`profile_calls` with ``order='alternating'``). None when the profile
    is not so: another grouping would misplace kernels.
    """
    kernels = device_time.kernel_events(trace.load(folder))
    ids = kernels["args"].map(lambda a: a.get("correlation_id"))
    if ids.isna().any() or not kernels["args"].map(
            lambda a: device_time.GRAPH_ARG in a).all():
        return None
    ends = kernels["start_us"] + kernels["dur_us"]
    calls = pd.DataFrame({"start": kernels["start_us"], "end": ends,
                          "dur": kernels["dur_us"], "id": ids}).groupby(
        "id").agg(start=("start", "min"), end=("end", "max"),
                  kernel_us=("dur", "sum"), kernels=("dur", "size"))
    calls = calls.sort_values("start", ignore_index=True)
    if calls["kernels"].nunique() != 1 or len(calls) % len(names):
        return None
    return pd.DataFrame({
        "version": [names[i % len(names)] for i in range(len(calls))],
        "call": [i // len(names) for i in range(len(calls))],
        "kernels": calls["kernels"], "kernel_us": calls["kernel_us"],
        "span_us": calls["end"] - calls["start"], "in_graph": 1.0})


def per_call(kernels: pd.DataFrame) -> pd.DataFrame:
    """Device time of each scope in each call: kernels of one call summed."""
    return (kernels.groupby(["version", "scope", "call"], as_index=False)
            ["dur_us"].sum())


def compare_scopes(kernels: pd.DataFrame, a: str = "einsum",
                   b: str = "matmul") -> pd.DataFrame:
    """`helpers.measuring.stats.compare` of two versions, scope by scope,
    the verdict naming the version (`verdicts.named_verdict`)."""
    calls = per_call(kernels)
    rows = []
    for scope in SCOPES:
        times = calls[calls["scope"] == scope]
        result = stats.compare(times[times["version"] == a]["dur_us"],
                               times[times["version"] == b]["dur_us"])
        low, high = result.ratio_ci
        rows.append({"scope": scope, f"{a} / {b}": result.ratio,
                     "95% interval": verdicts.interval(low, high),
                     "p-value": verdicts.p_text(result.p_value),
                     "verdict": verdicts.named_verdict(result, a, b)})
    return pd.DataFrame(rows)


PROFILE_FIXTURE = "04_profiling/profile"  # a trimmed GPU trace, recorded
# The same calls profiled with command buffers off, for XProf's HLO tables
# (`helpers.profiler.xplanes.command_buffers` says why those need it).
PER_OP_FIXTURE = "04_profiling/profile_per_op"
# What chapter 4 reads from XProf: each kernel's launch shape, each HLO
# op's time and bound, and each op against the roofline.
XPROF_TOOLS = ("kernel_stats", "hlo_stats", "roofline_model")


def xprof_views(folder: str | Path, tools: tuple[str, ...] = XPROF_TOOLS
                ) -> dict[str, Any]:
    """XProf's tables of a profile, by tool, as JSON-ready column lists;
    a tool XProf cannot answer here (empty on a CPU, xprof missing) gets
    the reason as a string instead, so a recording says what it lacks."""
    views: dict[str, Any] = {}
    for tool in tools:
        try:
            views[tool] = xprof_tables.table(folder, tool).to_dict("list")
        except (ValueError, ModuleNotFoundError) as err:
            views[tool] = str(err)
    return views


def launches_for_gpu(compiler_options: dict[str, Any] | None = None,
                    sizes: dict[str, int] | None = None) -> list[str]:
    """How XLA:GPU launches the block's kernels on an H100 (run through
    `helpers.xla.crosscompile.run`): its thunk sequence, the list of steps the
    GPU runtime executes, one line per step, as XLA dumps it after its
    thunk passes. By default the kernels sit inside one ``kCommandBuffer``
    (a CUDA graph, launched once); with
    `xprof_tables.NO_COMMAND_BUFFERS` each is its own launch. ``sizes``
    (`init`'s keywords) default to `shape`'s; nothing is allocated, so
    the reference GPU's block compiles here too.
    """
    from helpers.xla import crosscompile
    sizes = sizes or shape()
    params, x = jax.eval_shape(lambda key: init(key, **sizes),
                               jax.random.key(0))
    with tempfile.TemporaryDirectory() as folder:
        compiled = crosscompile.compile_for_gpu(
            versions(sizes["n_head"])["einsum"], params, x,
            compiler_options={**(compiler_options or {}),
                              "xla_dump_to": folder})
        return xla_dump.Dump(Path(folder), compiled).thunk_sequence()


def fixture_folder(device: str = recorded.REFERENCE_DEVICE,
                   name: str = PROFILE_FIXTURE) -> Path:
    """Where a recorded GPU profile (device events only) is kept: the
    block as it runs (`PROFILE_FIXTURE`), or with one launch per HLO op
    (`PER_OP_FIXTURE`)."""
    return recorded.profile_folder(name, device)


def measure_on_gpu(calls: int = 200, trials: int | None = None
                   ) -> dict[str, Any]:
    """Everything chapter 4 records on the reference GPU, in one run.

    Returns:
        The block's shape; how its two compiled programs differ; the scoped
        kernels of ``calls`` calls of each version profiled in blocked and in
        alternating order, and each of those calls' whole device time
        (``calls_<order>``, `whole_calls`), with XProf's tables of the
        alternating one (``xprof_graphs``, `xprof_views`); XProf's tables of
        the same calls profiled with command buffers off (``xprof``);
        wall-clock times of both versions, runs shuffled; and ``trials`` A/A
        trials each in random and in blocked order. With ``BOOK_RECORD=1`` both
        profiles are also kept as fixtures (`PROFILE_FIXTURE`,
        `PER_OP_FIXTURE`): their device events (`trace.trim`) and their xplanes
        without the host threads (`helpers.profiler.xplanes.trim`), so XProf's
        analyses can be redone from the recording on any machine.

    ``trials`` defaults to 200 on a GPU and to 20 on a CPU, where this
    runs only as `make test`'s dry run: the A/A trials were three
    quarters of its 11 s there.
    """
    trials = trials or machine.sizes(gpu=200, cpu=20)
    sizes = shape()
    params, x = init(jax.random.key(0), **sizes)
    fns = versions(sizes["n_head"])
    result: dict[str, Any] = {
        "shape": sizes,
        "program_diff": hlo.program_diff(fns["einsum"], fns["matmul"],
                                         params, x)}
    for order in ("blocked", "alternating"):
        folder = tempfile.mkdtemp(prefix=f"profile-{order}-")
        kernels = profile_calls(fns, params, x, calls=calls, order=order,
                                folder=folder)
        result[f"kernels_{order}"] = kernels.to_dict("list")
        # each call whole, by the device's clock: every kernel of it
        result[f"calls_{order}"] = whole_calls(folder, list(fns)).to_dict(
            "list")
        if order == "alternating":
            result["xprof_graphs"] = xprof_views(folder)
            recorded.keep_profile(PROFILE_FIXTURE, folder)
    # XProf gives HLO ops their time only when each kernel is launched as
    # its own op, outside CUDA graphs: profile the same calls that way.
    folder = tempfile.mkdtemp(prefix="profile-per-op-")
    profile_calls(versions(sizes["n_head"], xprof_tables.NO_COMMAND_BUFFERS),
                  params, x, calls=calls, folder=folder)
    result["xprof"] = xprof_views(folder)
    recorded.keep_profile(PER_OP_FIXTURE, folder)
    wall = bench.interleaved(fns, params, x, repeat=calls, order="random")
    result["wall"] = {name: t.to_dict() for name, t in wall.items()}
    result["aa"] = {order: noise.aa_trials(fns["einsum"], params, x,
                                     trials=trials, order=order)
                    .to_dict("list")
                    for order in ("random", "blocked")}
    # the block with its scores fused away (`fused`), against einsum
    result["fused"] = fused.measure(params, x, sizes["n_head"],
                                    fns["einsum"], calls=calls)
    return result

