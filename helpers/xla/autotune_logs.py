"""XLA:GPU's autotuning logs, read: which candidates the autotuner timed
for each fusion, how long each ran, and which one it kept.

``--xla_gpu_dump_autotune_logs_to=FILE.txt`` (a flag, or a compilation's
``compiler_options``) makes XLA:GPU write an ``xla.AutotuningLogs`` text
proto (``xla/autotuning.proto``): one ``logs`` entry per autotuned
instruction, holding every candidate's ``AutotuneResult`` (its key, the
kind of kernel it is, and its ``run_time``) and the ``selected_backend``.
`candidates` turns the text into rows a table can show. Only a GPU writes
the file: a compilation without one does not autotune.
"""

from __future__ import annotations

import re
from typing import Any

# The kinds of kernel an AutotuneResult's key names (its oneof ``key``).
KINDS = ("triton", "gemm", "custom_kernel_fusion", "algorithm",
         "cuda_conv_plan", "conv", "other")


def blocks(text: str, name: str) -> list[str]:
    """The bodies of the top-level ``name { ... }`` messages in ``text``
    (nested messages of the same name are left inside their parent).

    Example:
        >>> blocks('logs { a { b: 1 } } logs { c: 2 }', "logs")
        [' a { b: 1 } ', ' c: 2 ']
    """
    found, depth, start = [], 0, None
    for match in re.finditer(r"([A-Za-z_]\w*)\s*\{|\}", text):
        if match.group(0) == "}":
            depth -= 1
            if depth == 0 and start is not None:
                found.append(text[start:match.start()])
                start = None
            continue
        if depth == 0 and match.group(1) == name:
            start = match.end()
        depth += 1
    return found


def _seconds(result: str) -> float | None:
    """An AutotuneResult's ``run_time`` (a protobuf Duration), in
    seconds; None for a candidate that did not run."""
    run = blocks(result, "run_time")
    if not run:
        return None
    seconds = re.search(r"seconds:\s*(\d+)", run[0])
    nanos = re.search(r"nanos:\s*(\d+)", run[0])
    return ((int(seconds.group(1)) if seconds else 0)
            + (int(nanos.group(1)) if nanos else 0) * 1e-9)


def _kind(result: str) -> str:
    """The kind of kernel a result's key names (for ``other``, its
    name, e.g. a block-level fusion's config)."""
    for kind in KINDS:
        inner = blocks(result, kind)
        if inner:
            named = re.search(r'name:\s*"([^"]+)"', inner[0])
            return named.group(1) if kind == "other" and named else kind
    return "unknown"


def candidates(text: str) -> list[dict[str, Any]]:
    """One row per candidate of each autotuned fusion in a log's text:
    the fusion, the candidate's kind, its time in ms (None where it
    failed or did not run), whether it failed, and the backend the
    autotuner kept.

    Example:
        >>> log = '''logs { fusion_name: "f" selected_backend: "triton"
        ...   results { run_time { nanos: 340000 } other { name: "native" } }
        ...   results { run_time { nanos: 220000 } triton { block_m: 16 } }
        ... }'''
        >>> [(r["kind"], r["ms"]) for r in candidates(log)]
        [('native', 0.34), ('triton', 0.22)]
    """
    rows = []
    for log in blocks(text, "logs"):
        fusion = re.search(r'fusion_name:\s*"([^"]*)"', log)
        kept = re.search(r'selected_backend:\s*"([^"]*)"', log)
        for result in blocks(log, "results"):
            seconds = _seconds(result)
            rows.append({
                "fusion": fusion.group(1) if fusion else "",
                "kind": _kind(result),
                "ms": None if seconds is None else round(seconds * 1e3, 6),
                "failed": bool(blocks(result, "failure")),
                "kept": kept.group(1) if kept else ""})
    return rows
