"""Chapter 6's predictions: what each GPU flag setting should do to its
program's time, worked out before the measurement from other chapters'
recordings where they have the numbers, and held against it.

- Command buffers off: chapter 3 measured what a CUDA graph saves each
  kernel; times the kernels of a call that run inside graphs (read from
  the program compiled here for an H100) it is the time turning graphs
  off should add.
- Autotuning off: chapter 5 measured a bf16 matmul's rate, so the time
  of a tuned kernel can be estimated; the first candidate's time is in
  no recording.
- ``triton_gemm_any=false`` and the latency hiding scheduler: nothing to
  compute; the compiled module (the digests) and the absence of
  communication on one GPU decide them.

The chapter writes the sentences; this module gives each prediction's
call and numbers.

A setting's outcome is ``'slower'`` or ``'faster'`` when its time moved by
more than the noise (`verdicts.threshold`), and ``'the same'`` inside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helpers.page import arithmetic
from helpers.workbook.ch06_xla_flags import flag_runs, verdicts
from helpers.workbook.ch05_transformations.steps import BF16_CAST, BF16_INPUTS

GEMM_ANY = "--xla_gpu_triton_gemm_any=false"
AUTOTUNE_OFF = "--xla_gpu_autotune_level=0"
GRAPHS_OFF = "--xla_gpu_enable_command_buffer="
SCHEDULER = "--xla_gpu_enable_latency_hiding_scheduler=true"
# Chapter 3's loop whose body runs as one CUDA graph by default: graphs
# off launches its kernels one by one, so the difference is what a graph
# saves each kernel.
GRAPH_LOOP = "while, static bound"
# A predicted change smaller than this share of the call is 'the same'.
SMALL = verdicts.SAME


@dataclass(frozen=True)
class Estimate:
    """A number the measurement is held against: ``'added'`` seconds a
    call, or a ``'tuned'`` kernel's seconds (``flops`` for its rate)."""

    kind: str
    seconds: float
    flops: float = 0.0


@dataclass(frozen=True)
class Prediction:
    """What a setting should do to one program's time: the call, the
    worked lines it rests on (in the order the chapter shows them), the
    number the measurement is held against, and the inputs the chapter's
    sentences name (``basis``)."""

    program: str
    flag: str
    expected: str | None  # 'slower', 'faster', 'the same'; None: no call
    worked: tuple[arithmetic.Worked, ...] = ()
    estimate: Estimate | None = None
    basis: dict[str, Any] = field(default_factory=dict)


def gemm_any(digests: dict[str, str] | None) -> Prediction:
    """From the matmul's modules compiled here for an H100 with the flag
    and without it (`flag_runs.modules_for_gpu`): the same module, the
    same time; another module, or none compiled, no call."""
    same = digests is not None and len(set(digests.values())) == 1
    return Prediction("matmul_epilogue", GEMM_ANY,
                      "the same" if same else None)


def autotune_off(claims: dict[str, Any] | None, n: int) -> Prediction:
    """Slower: XLA:GPU runs the first candidate kernel it generates. With
    chapter 5's bf16 matmul rate (``05_transformations/claims``; None
    where not recorded), the worked time of a tuned n x n kernel."""
    rate = _bf16_rate(claims)
    if rate is None:
        return Prediction("matmul_epilogue", AUTOTUNE_OFF, "slower")
    q = arithmetic.quantity
    tuned = arithmetic.worked(
        r"t_\text{tuned}", "2 * n ** 3 / rate", unit="µs",
        per_unit=1e-6, n=q("n", n), rate=q("R", rate[0], "TFLOP/s", 1e12))
    return Prediction("matmul_epilogue", AUTOTUNE_OFF, "slower", (tuned,),
                      Estimate("tuned", tuned.value, 2.0 * n ** 3),
                      basis={"bf16_n": rate[1]})


def _bf16_rate(claims: dict[str, Any] | None) -> tuple[float, int] | None:
    """Chapter 5's bf16 matmul rate (flop/s) at its largest size, and
    the size, by the device's clock where recorded."""
    table = (claims or {}).get("precision")
    if not table:
        return None
    rows = [dict(zip(table, values)) for values in zip(*table.values())]
    # bf16 inputs made before the call; else the casts inside it, which
    # the H100's recording names "bfloat16 inputs"
    bf16 = ([r for r in rows if r["precision"] == BF16_INPUTS]
            or [r for r in rows if r["precision"] in (BF16_CAST,
                                                      "bfloat16 inputs")])
    if not bf16:
        return None
    big = max(bf16, key=lambda r: r["n"])
    ms = big.get("device ms") or big["ms"]
    return 2.0 * big["n"] ** 3 / (ms * 1e-3), int(big["n"])


def graphs_off(graphs: dict[str, Any] | None, effects: dict[str, Any] | None,
               body: dict[str, Any] | None) -> Prediction:
    """Turning CUDA graphs off on the small-kernel loop: what a graph
    saves each kernel (chapter 3's ``03_launches/command_buffers``), times
    the kernels of a call that run inside graphs.

    Args:
        graphs: chapter 3's recording.
        effects: this chapter's recording (the default's call time and
            its kernels a call).
        body: `flag_runs.loop_body_for_gpu` for the loop, or None without
            XLA:GPU's compiler here. With it, the kernels in graphs are
            the compiled loop's (all its steps' operations when its body
            is a graph, none when it is below a graph's minimum size);
            without it, at most the recorded kernels a call.

    Returns:
        ``worked``: the saving a kernel, the kernels' added time, and
        that time's share of the default's call; ``basis``: ``compiled``
        (whether the added time is the compiled loop's or the bound),
        ``kernels`` (the recorded kernels a call) and, where compiled,
        ``compiled_kernels`` and ``body_in_graph``.
    """
    saving = _graph_saving(graphs)
    default = {r["flags"]: r for r in (effects or {}).get("rows", [])
               if r["program"] == "small_kernels"}.get("(none)")
    if saving is None or default is None:
        return Prediction("small_kernels", GRAPHS_OFF, "slower")
    q = arithmetic.quantity
    kernels = int(default["kernels"])
    basis: dict[str, Any] = {"compiled": body is not None,
                             "kernels": kernels}
    if body is None:
        count = kernels
    else:
        count = (flag_runs.LOOP_STEPS * body["body operations"]
                 if body["body is a CUDA graph"] else 0)
        basis.update(compiled_kernels=count,
                     body_in_graph=bool(body["body is a CUDA graph"]))
    added = arithmetic.worked(
        r"t_\text{added}", "m * saving", unit="µs", per_unit=1e-6,
        m=q("m", count), saving=q(r"\Delta t", saving.value, "µs", 1e-6))
    call = q("T", default["median s"], "ms", 1e-3)
    share = arithmetic.worked(
        r"\text{share}", "added / call", unit="%", per_unit=0.01,
        call=call, added=q(r"t_\text{added}", added.value, "µs", 1e-6))
    expected = "slower" if added.value > SMALL * call.value else "the same"
    return Prediction("small_kernels", GRAPHS_OFF, expected,
                      (saving, added, share), Estimate("added", added.value),
                      basis)


def _graph_saving(graphs: dict[str, Any] | None
                  ) -> arithmetic.Worked | None:
    """What a graph saved each kernel of `GRAPH_LOOP` (float32)."""
    def row(setting: str) -> dict[str, Any] | None:
        found = [r for r in (graphs or {}).get(setting, [])
                 if r["variant"] == GRAPH_LOOP and r["dtype"] == "float32"]
        return found[0] if found else None

    off, on = row("graphs off"), row("default")
    if off is None or on is None:
        return None
    q = arithmetic.quantity
    return arithmetic.worked(
        r"\Delta t", "(off - on) / n", unit="µs", per_unit=1e-6,
        off=q(r"t_\text{off}", off["us_per_step"] * 1e-6, "µs", 1e-6),
        on=q(r"t_\text{graph}", on["us_per_step"] * 1e-6, "µs", 1e-6),
        n=q("n", float(on["launches_per_step"])))


def scheduler() -> Prediction:
    """The same: the scheduler overlaps communication with compute, and a
    program on one GPU has none."""
    return Prediction("small_kernels", SCHEDULER, "the same")


def outcome(data: dict[str, Any], program: str, flag: str) -> str | None:
    """``'slower'``, ``'faster'`` or ``'the same'`` against the noise
    (`verdicts.outcome`); None when the recording cannot say (no such
    run, or the default ran once)."""
    return verdicts.outcome(data, program, flag)


def expected(predictions: list[Prediction]
             ) -> dict[tuple[str, str], str | None]:
    """Each prediction's call by (program, flag), for the settings
    table's column (`verdicts.settings_table`)."""
    return {(p.program, p.flag): p.expected for p in predictions}


def held_numbers(data: dict[str, Any], predictions: list[Prediction]
                 ) -> dict[str, Any]:
    """The predictions against the reference GPU's run, for the page's
    paragraph: ``seen`` (each judged setting's outcome by flag),
    ``missed`` (the flags whose call the run contradicts), ``made`` (how
    many calls were made and judged), and each estimate's numbers by flag:
    for ``'added'``, the predicted and measured seconds added a call and
    the noise; for ``'tuned'``, the tuned kernel's seconds, the default's
    and the setting's multiples of it, and the setting's TFLOP/s."""
    judged = [(p, seen) for p in predictions
              if (seen := outcome(data, p.program, p.flag)) is not None]
    made = [(p, seen) for p, seen in judged if p.expected is not None]
    numbers: dict[str, Any] = {
        "seen": {p.flag: seen for p, seen in judged},
        "missed": [p.flag for p, seen in made if seen != p.expected],
        "made": len(made), "estimates": {}}
    for p, _ in judged:
        if p.estimate is None:
            continue
        rows = verdicts.runs(data, p.program)
        default, row = rows["(none)"]["median s"], rows[p.flag]["median s"]
        if p.estimate.kind == "added":
            numbers["estimates"][p.flag] = {
                "predicted": p.estimate.seconds, "added": row - default,
                "noise": (verdicts.threshold(data, p.program, p.flag)
                          or 0.0) * default}
        else:
            numbers["estimates"][p.flag] = {
                "tuned": p.estimate.seconds,
                "default": default / p.estimate.seconds,
                "setting": row / p.estimate.seconds,
                "tflops": (p.estimate.flops / row / 1e12
                           if p.estimate.flops else None)}
    return numbers
