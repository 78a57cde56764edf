"""What `examine` reports: each slow pattern it knows, and each finding
with its evidence, how sure it is, the fix and where to read more.

A `Report` shows as a table in a notebook (HTML, with links to the field
guide's sections) and as plain text in a terminal.
"""

from __future__ import annotations

import dataclasses
import html
import re
import textwrap
from typing import Literal

import pandas as pd

from helpers.examine import costs

Confidence = Literal["certain", "likely", "possible"]
GUIDE = "10_field_guide.html"  # the field guide's page, beside the others


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A slow pattern: its name, what goes wrong, the usual fix, and the
    field guide's section about it (its anchor)."""

    title: str
    why: str
    fix: str
    anchor: str
    slow: bool = True  # False: a fact worth knowing, reported as a note

    @property
    def link(self) -> str:
        return f"{GUIDE}#{self.anchor}"


PATTERNS: dict[str, Pattern] = {
    "host-round-trip": Pattern(
        "loop that asks the host every step",
        "a while loop whose trip count XLA cannot prove: on a GPU the host "
        "reads its condition back after every iteration",
        "give the loop a static trip count: lax.scan, or fori_loop with "
        "Python-int bounds", "guide-host-round-trip"),
    "launches-per-step": Pattern(
        "loop body launched kernel by kernel",
        "each iteration launches its kernels: one by one below XLA:GPU's "
        "minimum CUDA-graph size, replayed as a graph above it, either way "
        "microseconds a step beside a step of little work",
        "fuse the body (fewer, larger operations), unroll the scan, or write "
        "the loop as one kernel (chapter 3)", "guide-launches-per-step"),
    "kloop-reduction": Pattern(
        "reduction emitted one thread per row",
        "XLA:GPU fuses a reduction over short rows as kLoop: each thread "
        "walks its own row, and a warp's loads land far apart",
        "produce the data batch-minor (the batch axis last, so a warp "
        "reads neighbours); padding the reduced axis to 32 did not pay on "
        "the H100, and the fusion autotuner may already have replaced the "
        "kLoop kernel, so keep a fix only if it times faster on your GPU "
        "(chapter 2)",
        "guide-kloop-reduction"),
    "tiny-dot": Pattern(
        "matrix product with a tiny dimension",
        "a batched dot whose output or contracted dimension is a few "
        "elements: no matrix unit helps, and XLA may rewrite it as a "
        "multiply and a reduction",
        "write it as an elementwise product and a sum over a long axis, or "
        "batch it so the small sizes become large (chapter 2)",
        "guide-tiny-dot"),
    "tf32-default": Pattern(
        "float32 matrix product at the default precision",
        "on GPUs with tensor cores (A100, H100) JAX's default runs float32 "
        "products as TF32: 10 bits of mantissa in the inputs",
        "precision='highest' (or jax.default_matmul_precision) where full "
        "float32 matters; bfloat16 inputs where speed does (chapter 5)",
        "guide-tf32-default", slow=False),
    "float64": Pattern(
        "float64 arithmetic",
        "float64 moves twice the bytes of float32 and has no tensor-core "
        "fast path; GPUs outside the data centre run it at a fraction of "
        "their float32 rate", "use float32 unless the algorithm needs the "
        "precision; enable x64 only where it does", "guide-float64"),
    "scatter-contention": Pattern(
        "scatter that may collide",
        "a scatter-add whose indices are neither sorted nor unique: "
        "repeated indices serialise on atomic updates",
        "sort the indices and say so (indices_are_sorted=True), or use a "
        "one-hot matrix product for few segments", "guide-scatter"),
    "sort-64-bit": Pattern(
        "sort on 64-bit keys",
        "sorting 64-bit keys moves and compares twice the bits of 32-bit "
        "ones", "sort 32-bit keys where their range allows",
        "guide-sort-64-bit"),
    "random-in-loop": Pattern(
        "random keys split inside a loop",
        "the random number generator runs inside every iteration, adding "
        "its kernels to each step", "draw every step's numbers before the "
        "loop and scan over them (chapter 3)", "guide-random-in-loop"),
    "host-callback": Pattern(
        "host callback",
        "the device stops and waits while Python runs on the host",
        "keep callbacks out of hot code; jax.debug.print only while "
        "debugging", "guide-host-callback"),
    "collective-in-loop": Pattern(
        "collective inside a loop",
        "every iteration pays a collective's latency",
        "accumulate locally and communicate once after the loop, or overlap "
        "the collective with compute (chapter 7)", "guide-collective-in-loop"),
    "large-temporaries": Pattern(
        "large temporaries",
        "an all-pairs array (an outer product, attention's scores) lives "
        "whole in scratch memory, much larger than the inputs and outputs, "
        "written and read back at memory speed", "make and use it a block "
        "at a time (lax.map over blocks; for attention "
        "jax.nn.dot_product_attention(..., implementation='cudnn')), or "
        "jax.checkpoint (remat) the intermediates a gradient keeps "
        "(chapter 5)",
        "guide-large-temporaries"),
    "no-donation": Pattern(
        "output that could reuse its input's memory",
        "the function returns arrays shaped like its inputs without "
        "donating them, so both live at once",
        "jax.jit(..., donate_argnums=...) for arguments the caller no longer "
        "needs (chapter 5)", "guide-no-donation"),
    "retracing": Pattern(
        "retracing across calls",
        "a change of shape, dtype, weak type or static value between calls "
        "traces and compiles the function again",
        "keep shapes and dtypes stable (pad to buckets), pass arrays rather "
        "than Python scalars, make static arguments hashable and few "
        "(chapter 5)", "guide-retracing"),
}


@dataclasses.dataclass(frozen=True)
class Finding:
    """One pattern found in one place, with the evidence that shows it."""

    pattern: str
    evidence: str
    confidence: Confidence
    where: str = ""
    # whether it slows the program down: the pattern's own say, unless
    # the evidence decides (a missing donation is slow only where the
    # calls show an output replacing its input)
    slow: bool | None = None
    # what it likely costs on the H100, with the arithmetic and the
    # recording it comes from (`helpers.examine.costs`); "" where the
    # book has no measurement to price it with
    cost: str = ""

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ValueError(f"unknown pattern {self.pattern!r}; known: "
                             f"{sorted(PATTERNS)}")

    @property
    def about(self) -> Pattern:
        return PATTERNS[self.pattern]

    @property
    def is_slow(self) -> bool:
        """A finding (slow) rather than a note."""
        return self.about.slow if self.slow is None else self.slow


@dataclasses.dataclass(frozen=True)
class Report:
    """Everything `examine` found in one function, and what it could not
    check here (``skipped``: check, and why)."""

    function: str
    findings: tuple[Finding, ...]
    notes: tuple[Finding, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def patterns(self) -> list[str]:
        """The slow patterns found, in order, each once."""
        return list(dict.fromkeys(f.pattern for f in self.findings))

    def table(self) -> pd.DataFrame:
        """One row per finding, then per note: pattern, evidence, cost
        on an H100, confidence ('note' for a note), fix, read."""
        return pd.DataFrame([{
            "pattern": f.about.title, "evidence": f.evidence,
            "cost on an H100": f.cost,
            "confidence": f.confidence if f in self.findings else "note",
            "fix": f.about.fix, "read": f.about.link}
            for f in (*self.findings, *self.notes)],
            columns=["pattern", "evidence", "cost on an H100", "confidence",
                     "fix", "read"])

    def __str__(self) -> str:
        lines = [f"examine({self.function}): "
                 f"{len(self.findings) or 'no'} finding"
                 f"{'' if len(self.findings) == 1 else 's'}"]
        for number, f in enumerate(self.findings, 1):
            lines.append(f"\n{number}. {f.about.title} [{f.confidence}]")
            for label, text in (("evidence", f.evidence),
                                ("cost", f.cost or costs.UNPRICED),
                                ("why", f.about.why), ("fix", f.about.fix),
                                ("read", f.about.link)):
                lines.append(textwrap.fill(
                    text, 78, initial_indent=f"   {label}: ",
                    subsequent_indent=" " * (5 + len(label))))
        for f in self.notes:
            lines.append(textwrap.fill(
                f"note: {f.about.title}: {f.evidence}. {f.about.why}; "
                f"{f.about.fix} ({f.about.link})", 78,
                initial_indent="\n", subsequent_indent="   "))
        for check, why in self.skipped:
            lines.append(f"\nnot checked: {check} ({why})")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Each finding and note as a short block: its pattern (a link to
        its section) and confidence, then its evidence and its cost on an
        H100, each a line of its own, so that long evidence reads at any
        width; then each pattern's fix as a sentence."""
        head = (f"<p><b>examine({html.escape(self.function)})</b>: "
                f"{count_of(len(self.findings), 'finding')}"
                + (f", {count_of(len(self.notes), 'note')}" if self.notes
                   else "") +
                "</p>")
        blocks = "".join(_html_block(f, f.confidence)
                         for f in self.findings)
        blocks += "".join(_html_block(f, "note") for f in self.notes)
        patterns = dict.fromkeys(f.pattern for f in (*self.findings,
                                                     *self.notes))
        fixes = "".join(f"<p><b>Fix</b> for <i>"
                        f"{html.escape(PATTERNS[p].title)}</i>: "
                        f"{_code(PATTERNS[p].fix)}.</p>" for p in patterns)
        skipped = "".join(f"<p>not checked: {html.escape(c)} "
                          f"({html.escape(w)})</p>" for c, w in self.skipped)
        return head + blocks + fixes + skipped


def count_of(n: int, noun: str) -> str:
    """A count and its noun as a sentence says them.

    Example:
        >>> count_of(0, "finding"), count_of(1, "kernel"), count_of(3, "step")
        ('no findings', '1 kernel', '3 steps')
    """
    return f"{n or 'no'} {noun}{'' if n == 1 else 's'}"


def _html_block(finding: Finding, confidence: str) -> str:
    """One finding: the pattern, linked to its section, and its
    confidence; its evidence and its cost on an H100 beneath."""
    pattern = (f"<a href='{finding.about.link}'>"
               f"{html.escape(finding.about.title)}</a>")
    return (f"<div class='finding'><p><b>{pattern}</b> "
            f"({html.escape(confidence)})</p><ul>"
            f"<li>evidence: {_inline_code(finding.evidence)}</li>"
            "<li>cost on an H100: "
            f"{_inline_code(finding.cost or costs.UNPRICED)}"
            "</li></ul></div>")


def _code(text: str) -> str:
    """Text for the page, escaped, with `backticked` spans as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _inline_code(text: str) -> str:
    """Text for a narrow place: `backticked` spans as code, and a break
    allowed after each comma, dot and underscore, so that a long name or
    shape list (f32[1000,1000,3,25], jax.default_matmul_precision) wraps
    inside a narrow column instead of widening the table."""
    escaped = html.escape(text)
    breakable = re.sub(r"([,._])", r"\1<wbr>", escaped)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", breakable)

