"""Chapter 6's predictions: what each GPU flag setting should do to its
program's time, worked out before the measurement from other chapters'
recordings where they have the numbers, and held against it.

- Command buffers off: chapter 3 measured what a CUDA graph saves each
  kernel; times the kernels of a call that run inside graphs (read from
  the program compiled here for an H100) it is the time turning graphs
  off should add.
- Autotuning off: chapter 5 measured a bf16 matmul's rate, so the time
  of a tuned kernel can be estimated; the first candidate's time is in
  no recording, so how much slower it is stays qualitative.
- ``triton_gemm_any=false`` and the latency hiding scheduler: nothing to
  compute; the compiled module (the digests) and the absence of
  communication on one GPU decide them.

A setting's outcome is ``'slower'`` or ``'faster'`` when its time moved by
more than the noise (`verdicts.threshold`), and ``'the same'`` inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """What a setting should do to one program's time, and why: the
    reasoning as paragraphs and worked lines, in order."""

    program: str
    flag: str
    expected: str | None  # 'slower', 'faster', 'the same'; None: no call
    parts: tuple[str | arithmetic.Worked, ...]
    estimate: Estimate | None = None

    def markdown(self) -> str:
        """The prediction as the chapter shows it."""
        call = (f"predicted {self.expected}" if self.expected
                else "no prediction")
        head = f"**`{self.flag}` on *{self.program}*: {call}.**"
        body = [p if isinstance(p, str) else p.markdown()
                for p in self.parts]
        return "\n\n".join([f"{head} {body[0]}", *body[1:]])


def gemm_any(digests: dict[str, str] | None) -> Prediction:
    """From the matmul's modules compiled here for an H100 with the flag
    and without it (`flag_runs.modules_on_gpu`), or None without them."""
    if digests is None:
        return Prediction("matmul_epilogue", GEMM_ANY, None, (
            "Without XLA:GPU's compiler here, nothing says whether the "
            "flag changes the compiled module, so no prediction is made.",))
    if len(set(digests.values())) == 1:
        return Prediction("matmul_epilogue", GEMM_ANY, "the same", (
            "Compiled here for an H100, the module is the same with the "
            "flag and without it (the digests above), so only a choice "
            "the autotuner makes on the device could differ. There is "
            "no number to work out: the prediction is qualitative.",))
    return Prediction("matmul_epilogue", GEMM_ANY, None, (
        "Compiled here for an H100, the flag gives another module (the "
        "digests above); which is faster no recording says, so no "
        "prediction is made.",))


def autotune_off(claims: dict[str, Any] | None, n: int) -> Prediction:
    """From chapter 5's bf16 matmul rate (``05_transformations/claims``,
    None where not recorded): a tuned kernel's time for the n x n
    matmul; the untuned one's is in no recording."""
    parts: list[str | arithmetic.Worked] = [
        "XLA:GPU then runs the first candidate kernel it generates "
        "instead of the fastest it timed."]
    estimate = None
    rate = _bf16_rate(claims)
    if rate is not None:
        q = arithmetic.quantity
        tuned = arithmetic.worked(
            r"t_\text{tuned}", "2 * n ** 3 / rate", unit="µs",
            per_unit=1e-6, n=q("n", n),
            rate=q("R", rate[0], "TFLOP/s", 1e12))
        parts += [f"Chapter 5 measured a bf16 matmul of n = {rate[1]} at "
                  "a rate R on the H100 (its inputs converted from "
                  "float32 inside the call, so a little under a pure bf16 "
                  "matmul's rate). A tuned kernel for this one, n = "
                  f"{n}, should take about", tuned]
        estimate = Estimate("tuned", tuned.value, 2.0 * n ** 3)
    parts.append("How much slower the first candidate is cannot be worked "
                 "out: no recording times the candidates the autotuner "
                 "rejects, so that part is qualitative.")
    return Prediction("matmul_epilogue", AUTOTUNE_OFF, "slower",
                      tuple(parts), estimate)


def _bf16_rate(claims: dict[str, Any] | None) -> tuple[float, int] | None:
    """Chapter 5's bf16 matmul rate (flop/s) at its largest size, and
    the size, by the device's clock where recorded."""
    table = (claims or {}).get("precision")
    if not table:
        return None
    rows = [dict(zip(table, values)) for values in zip(*table.values())]
    # bf16 inputs made before the call; an older recording's casts inside
    # it, under the name they once went by
    bf16 = ([r for r in rows if r["precision"] == BF16_INPUTS]
            or [r for r in rows if r["precision"] in (BF16_CAST,
                                                      "bfloat16 inputs")])
    if not bf16:
        return None
    big = max(bf16, key=lambda r: r["n"])
    ms = big.get("device ms") or big["ms"]
    return 2.0 * big["n"] ** 3 / (ms * 1e-3), int(big["n"])


def graphs_off(graphs: dict[str, Any] | None, effects: dict[str, Any] | None,
               body: dict[str, Any] | None,
               jaxlibs: tuple[str, str] | None = None) -> Prediction:
    """Turning CUDA graphs off on the small-kernel loop.

    Args:
        graphs: chapter 3's ``03_launches/command_buffers`` recording.
        effects: this chapter's recording (the loop's kernels a call
            and the default's time).
        body: `flag_runs.loop_body_on_gpu` for the loop, or None
            without XLA:GPU's compiler here.
        jaxlibs: the jaxlib that compiled ``body`` and the recording's,
            to say so where they differ.
    """
    saving = _graph_saving(graphs)
    default = {r["flags"]: r for r in (effects or {}).get("rows", [])
               if r["program"] == "small_kernels"}.get("(none)")
    if saving is None or default is None:
        return Prediction("small_kernels", GRAPHS_OFF, "slower", (
            "Without CUDA graphs every kernel a graph held is launched on "
            "its own; without chapter 3's recording there is no number "
            "for what that costs, so the prediction is qualitative.",))
    q = arithmetic.quantity
    call = q("T", default["median s"], "ms", 1e-3)
    most = arithmetic.worked(
        r"t_\text{max}", "k * saving", unit="µs", per_unit=1e-6,
        k=q("k", int(default["kernels"])),
        saving=q(r"\Delta t", saving.value, "µs", 1e-6))
    share = arithmetic.worked(r"\text{share}", "most / call", unit="%",
                              per_unit=0.01, call=call,
                              most=q(r"t_\text{max}", most.value, "µs",
                                     1e-6))
    parts: list[str | arithmetic.Worked] = [
        f"Chapter 3 measured what a CUDA graph saves each kernel: its loop "
        f"whose body is one graph, *{GRAPH_LOOP}*, took "
        r"$t_\text{off}$ a step with graphs off and $t_\text{graph}$ by "
        "default, for n kernels a step:", saving,
        "Turning graphs off can add at most that for each of the loop's "
        "k kernels a call, against T, the default's call (measured "
        "below):", most, share]
    prediction = _graphs_verdict(parts, most, saving, call, body)
    if body is None or jaxlibs is None or jaxlibs[0] == jaxlibs[1]:
        return prediction
    return Prediction(
        prediction.program, prediction.flag, prediction.expected,
        (*prediction.parts, f"(Compiled by jaxlib {jaxlibs[0]}; the "
         f"recording ran jaxlib {jaxlibs[1]}, whose compiler may launch "
         "the loop otherwise.)"), prediction.estimate)


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


def _graphs_verdict(parts: list[str | arithmetic.Worked],
                    most: arithmetic.Worked, saving: arithmetic.Worked,
                    call: arithmetic.Quantity, body: dict[str, Any] | None
                    ) -> Prediction:
    """The graphs-off prediction once the bound is worked: from which of
    the loop's kernels run in a graph on an H100, where that is known."""
    if body is None:
        expected = "slower" if most.value > SMALL * call.value else \
            "the same"
        parts.append("Whether the loop's kernels run in graphs by default "
                     "takes XLA:GPU's compiler to say, so the bound is the "
                     f"prediction: {expected}, by at most that much.")
        return Prediction("small_kernels", GRAPHS_OFF, expected,
                          tuple(parts), Estimate("added", most.value))
    ops = body["body operations"]
    in_graph = body["body is a CUDA graph"]
    q = arithmetic.quantity
    added = arithmetic.worked(
        r"t_\text{added}", "m * saving", unit="µs", per_unit=1e-6,
        m=q("m", flag_runs.LOOP_STEPS * ops if in_graph else 0),
        saving=q(r"\Delta t", saving.value, "µs", 1e-6))
    expected = "slower" if added.value > SMALL * call.value else "the same"
    why = (f"its body, {ops} operations a step, runs as one graph, so "
           f"all m = {flag_runs.LOOP_STEPS} × {ops} of its kernels lose "
           "the saving" if in_graph else
           f"its body is {ops} operations a step, fewer than the "
           f"{body['fewest in a graph']} XLA:GPU puts into a graph "
           "(`--xla_gpu_graph_min_graph_size`), so it is launched kernel "
           "by kernel already: m, the kernels that lose a graph, is 0")
    parts += [f"Compiled here for an H100 (above), {why}:", added]
    return Prediction("small_kernels", GRAPHS_OFF, expected, tuple(parts),
                      Estimate("added", added.value))


def scheduler() -> Prediction:
    """The latency hiding scheduler on one GPU: nothing to overlap."""
    return Prediction("small_kernels", SCHEDULER, "the same", (
        "The scheduler overlaps communication with compute, and a program "
        "on one GPU has no communication. There is nothing to put a "
        "number on: the prediction is qualitative.",))


def as_markdown(predictions: list[Prediction]) -> str:
    """The predictions as the chapter shows them, one paragraph each."""
    return "\n\n".join(p.markdown() for p in predictions)


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
