"""Chapter 4's readings of a profile, as the page shows them.

XProf's tables of a profile (`show_xprof_views`: the tables that have
rows, and a table of the tools that have none, with the reason);
Perfetto's SQL run on a profile when a trace processor is at hand
(`perfetto_checks`); and the thunk sequence XLA:GPU hands the runtime,
counted by kind (`thunk_table`) rather than listed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.measuring import machine
from helpers.profiler import trace, xprof_tables
from helpers.workbook.ch04_profiling import xprof_rates


def _reason(message: str) -> str:
    """Why XProf has nothing, in the chapter's words, from the message of
    `xprof_tables.table` (or of a missing xprof package)."""
    if "pip install xprof" in message:
        return "the xprof package is not installed here (`pip install xprof`)"
    if "CUDA graphs" in message:
        return ("its kernels ran inside CUDA graphs, where the profiler "
                "labels each kernel with its graph instead of its HLO op, "
                "so XProf can give no op its time")
    if "no GPU or TPU" in message:
        return ("it was taken on a CPU, and XLA:CPU runs its work on host "
                "threads, which XProf's device analyses leave out")
    return "XProf computes none for it"


ROWS = 8  # the rows a table of XProf's shows: enough for the slow ops


def empty_tools(views: dict[str, Any]) -> pd.DataFrame:
    """The tools of ``views`` (`attention.xprof_views`) that have no rows,
    each with why: one row a tool, empty when every tool has rows.

    Example:
        >>> empty_tools({"hlo_stats": "XProf's hlo_stats has no rows for "
        ...              "this profile: no GPU or TPU in it"}).loc[
        ...     "hlo_stats", "why it has no rows"][:22]
        'it was taken on a CPU,'
    """
    rows = {tool: _reason(view) for tool, view in views.items()
            if isinstance(view, str)}
    return pd.DataFrame({"why it has no rows": rows}).rename_axis(
        "XProf tool")


def show_xprof_views(views: dict[str, Any], where: str = "") -> None:
    """Display `attention.xprof_views`: each table that has rows (its first
    rows, as `xprof_rates.readable` shows them: which version each row
    is, where the HLO table tells, rates in TFLOP/s and GB/s, long kernel
    names shortened by `xprof_tables.short_name`), then `empty_tools`'
    table of those that have none.

    Args:
        views: `attention.xprof_views`' result.
        where: appended to each table's caption (e.g. which profile).
    """
    from IPython.display import display

    from helpers.page import tables

    hlo = views.get("hlo_stats")
    hlo = pd.DataFrame(hlo) if isinstance(hlo, dict) else None
    versions = None if hlo is None else xprof_rates.program_versions(hlo)
    for tool, view in views.items():
        if isinstance(view, str):
            continue
        frame = pd.DataFrame(view)
        shown = (xprof_rates.readable(frame, tool, versions, hlo)
                 if tool in xprof_rates.SHOWN
                 else xprof_tables.key_columns(frame, tool))
        caption = f"{tool}{', ' + where if where else ''}"
        if len(shown) > ROWS:  # XProf ranks its rows by time
            caption += f", the {ROWS} rows with the most time of {len(shown)}"
            shown = shown.head(ROWS)
        names = frame.get("kernel_name", pd.Series(dtype=str)).astype(str)
        if (names.str.len() > xprof_tables.NAME_CHARS).any():
            caption += " (long kernel names shortened)"
        display(tables.tidy(shown).set_caption(caption))
    empty = empty_tools(views)
    if not empty.empty:
        display(tables.tidy(empty).set_caption(
            f"XProf's tools with no rows{', ' + where if where else ''}"))


def thunk_table(sequences: dict[str, list[str]]) -> pd.DataFrame:
    """How many steps of each kind XLA:GPU's runtime launches, for each
    setting's thunk sequence (`attention.launches_for_gpu`: one line a
    step, steps inside a command buffer indented): one row a setting.

    Example:
        >>> thunk_table({"default": ["kCommandBuffer",
        ...                          "    kCustomKernel f",
        ...                          "    kCustomKernel g"]}).loc["default"]
        ... # doctest: +NORMALIZE_WHITESPACE
        launches                            1
        kCommandBuffer                      1
        kCustomKernel in a command buffer   2
        Name: default, dtype: int64
    """
    rows = {}
    for setting, steps in sequences.items():
        counts = {"launches": sum(not s.startswith(" ") for s in steps)}
        for step in steps:
            kind = step.split()[0]
            key = f"{kind} in a command buffer" if step.startswith(" ") \
                else kind
            counts[key] = counts.get(key, 0) + 1
        rows[setting] = counts
    return pd.DataFrame(rows).T.fillna(0).astype(int)


def thunk_text(sequences: dict[str, list[str]]) -> str:
    """The thunk sequences in full, one block a setting, for a fold."""
    return "\n\n".join(f"{setting}:\n" + "\n".join(steps)
                       for setting, steps in sequences.items())


def version_events(events: pd.DataFrame, version: str,
                   names: tuple[str, ...] = ("einsum", "matmul")
                   ) -> pd.DataFrame:
    """The device events of one version's calls, in a kept profile taken
    with CUDA graphs whose calls alternate ``names`` in that order
    (`attention.fixture_calls`' reading): the kernels of a call share its
    graph launch's correlation id."""
    ids = events["args"].map(lambda a: a.get("correlation_id"))
    starts = events.groupby(ids)["start_us"].min().sort_values()
    turn = pd.Series(range(len(starts)), index=starts.index) % len(names)
    return events[ids.map(turn) == names.index(version)]


def thunks_against_profile(steps: list[str], events: pd.DataFrame,
                           calls: int, memset_ops: list[str] | None = None
                           ) -> dict[str, Any]:
    """The kernels of one call, as the thunk sequence compiled here counts
    them and as a recorded GPU profile ran them.

    Args:
        steps: one setting's thunk sequence (`attention.launches_for_gpu`).
        events: the recorded profile's device events
            (`trace.device_events`) of one version, ``calls`` calls' worth
            (`version_events`).
        calls: how many calls the profile holds.
        memset_ops: the HLO ops the recorded memsets belong to, where a
            profile taken kernel by kernel names them.

    Returns:
        ``compiled``: the kernels the sequence launches (inside its
        command buffer, when ``in_buffer``); ``compiled_memsets``: whether
        it holds a memset; ``ran`` and ``memsets``: kernels and memsets a
        recorded call; ``only_ran``: the recorded kernels (short names)
        the compilation lacks; ``only_here``: the compiled kernels the
        recording lacks; ``memset_ops``.
    """
    inside = [s.split() for s in steps if s.startswith(" ")]
    launched = inside or [s.split() for s in steps
                          if s.split()[0] != "kCommandBuffer"]
    compiled = [parts[-1] for parts in launched]
    memset = events["name"].astype(str).str.startswith("Memset")
    ran = set(events.loc[~memset, "name"].astype(str))
    return {"compiled": len(compiled), "in_buffer": bool(inside),
            "compiled_memsets": any("Memset" in step for step in steps),
            "ran": round((~memset).sum() / calls),
            "memsets": round(memset.sum() / calls),
            "only_ran": sorted(xprof_tables.short_name(n)
                               for n in ran - set(compiled)),
            "only_here": [n for n in compiled if n not in ran],
            "memset_ops": list(memset_ops or [])}


# One line of `hlo.program_diff`: side, computation, value, shape, op,
# operands, and the attributes after them.
_DIFF_LINE = re.compile(r"^([+-])(c\d+) (v\d+) = (\S+) ([a-z][\w\-]*)"
                        r"\(([^)]*)\)(?:, (.*))?$")


def _diff_parts(line: str) -> tuple[str, dict[str, str]] | None:
    """A diff line as (its instruction, its parts by name), or None."""
    found = _DIFF_LINE.match(line)
    if not found:
        return None
    _, comp, value, shape, op, operands, attrs = found.groups()
    parts = {"shape": shape, "operands": operands}
    for attr in re.split(r", (?=[a-z_]+=)", attrs or ""):
        if attr:
            key, _, text = attr.partition("=")
            parts[key] = text
    return f"{value} = {op} ({comp})", parts


def diff_table(diff: list[str], a: str = "einsum", b: str = "matmul"
               ) -> pd.DataFrame:
    """`hlo.program_diff`'s changed lines as a table: one row for each
    part of an instruction that differs (its shape, operands or an
    attribute), ``a``'s value beside ``b``'s; an instruction only one
    program has gets one row, a dash on the other side.

    Example:
        >>> diff_table(["-c0 v1 = f32[2,3]{1,0} transpose(v0), "
        ...             "dimensions={1,0}", "+c0 v1 = f32[2,3]{0,1} "
        ...             "transpose(v0), dimensions={1,0}"]).iloc[0].tolist()
        ['v1 = transpose (c0)', 'shape', 'f32[2,3]{1,0}', 'f32[2,3]{0,1}']
    """
    sides: dict[str, dict[str, dict[str, str]]] = {"-": {}, "+": {}}
    for line in diff:
        parsed = _diff_parts(line)
        if parsed:
            sides[line[0]][parsed[0]] = parsed[1]
    rows = []
    for name in dict.fromkeys([*sides["-"], *sides["+"]]):
        left, right = sides["-"].get(name), sides["+"].get(name)
        if left is None or right is None:
            here = left or right or {}
            shown = f"{here['shape']} ({here['operands']})"
            rows.append((name, "whole instruction",
                         shown if left else "—", shown if right else "—"))
            continue
        rows += [(name, part, left.get(part, "—"), right.get(part, "—"))
                 for part in dict.fromkeys([*left, *right])
                 if left.get(part) != right.get(part)]
    return pd.DataFrame(rows, columns=["instruction", "differs in", a, b])


def perfetto_sentence(where: str, rows: pd.DataFrame,
                      by_pandas: pd.DataFrame, has_device: bool) -> str:
    """What Perfetto's query found in one profile, beside the pandas
    reading of the same events (`trace.in_scope` of its device events)."""
    found, expected = len(rows), len(by_pandas)
    if found == 0 and not has_device:
        return f"In {where} the query finds nothing: it has no device threads."
    if found == 0 and expected == 0:
        return (f"In {where} the query finds no kernel: its device events "
                "carry no scope path, and pandas finds none either.")
    if found == expected:
        return (f"In {where} the query finds {found} kernels, "
                f"{rows['dur_us'].sum():.4g} µs in all: the same kernels "
                "as the pandas reading of its device events.")
    return (f"In {where} the query finds {found} kernels, and the pandas "
            f"reading of its device events {expected}.")


def perfetto_checks(profiles: dict[str, str | Path], scope: str
                    ) -> list[str]:
    """Run `trace.scope_sql` on each profile with Perfetto and say, in a
    sentence each, what it found (`perfetto_sentence`); nothing where no
    trace processor can be had (none on this machine, and not on Colab,
    where the perfetto package downloads one)."""
    binary = trace.local_processor()
    if binary is None and not machine.in_colab():
        return []
    said = []
    for where, folder in profiles.items():
        if not Path(folder).exists():
            continue
        try:
            rows = trace.query(folder, trace.scope_sql(scope), binary=binary)
        except (ImportError, RuntimeError, FileNotFoundError):
            return ["Perfetto could not run here; the pandas reading above "
                    "answers the same question."]
        events = trace.device_events(trace.load(folder))
        said.append(perfetto_sentence(where, rows, trace.in_scope(
            events, scope), has_device=not events.empty))
    return said
