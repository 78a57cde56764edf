"""Chapter 4's readings of a profile, as the page shows them.

XProf's tables of a profile (`show_xprof_views`: the tables that have
rows, and one sentence for the tools that have none, with the reason);
Perfetto's SQL run on a profile when a trace processor is at hand
(`perfetto_checks`); and the thunk sequence XLA:GPU hands the runtime,
counted by kind (`thunk_table`) rather than listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from helpers.measuring import machine
from helpers.profiler import trace, xprof_tables

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


def empty_tools(views: dict[str, Any], profile: str = "this profile"
                ) -> str | None:
    """One sentence naming the tools of ``views`` (`attention.xprof_views`)
    that have no rows, and why; None when every tool has rows.

    Example:
        >>> empty_tools({"hlo_stats": "XProf's hlo_stats has no rows for "
        ...              "this profile: no GPU or TPU in it"})[:40]
        '`hlo_stats` has no rows for this profile'
    """
    by_reason: dict[str, list[str]] = {}
    for tool, view in views.items():
        if isinstance(view, str):
            by_reason.setdefault(_reason(view), []).append(f"`{tool}`")
    sentences = []
    for why, tools in by_reason.items():
        names = (tools[0] if len(tools) == 1 else
                 ", ".join(tools[:-1]) + " and " + tools[-1])
        verb = "has" if len(tools) == 1 else "have"
        sentences.append(f"{names} {verb} no rows for {profile}: {why}.")
    return " ".join(sentences) or None


def show_xprof_views(views: dict[str, Any], where: str = "",
                     profile: str = "this profile") -> None:
    """Display `attention.xprof_views`: each table that has rows (the
    columns the chapter discusses, its first rows, long kernel names
    shortened by `xprof_tables.short_name`), then `empty_tools`' sentence.

    Args:
        views: `attention.xprof_views`' result.
        where: appended to each table's caption (e.g. which profile).
        profile: how the sentence on empty tools names the profile.
    """
    from IPython.display import Markdown, display

    from helpers.page import tables

    for tool, view in views.items():
        if isinstance(view, str):
            continue
        frame = pd.DataFrame(view).head(8)
        shown = xprof_tables.key_columns(frame, tool)
        caption = f"{tool}{', ' + where if where else ''}"
        names = frame.get("kernel_name", pd.Series(dtype=str)).astype(str)
        if (names.map(xprof_tables.short_name) != names).any():
            caption += " (long kernel names shortened)"
        display(tables.tidy(shown).set_caption(caption))
    sentence = empty_tools(views, profile)
    if sentence:
        display(Markdown(sentence))


def thunk_table(sequences: dict[str, list[str]]) -> pd.DataFrame:
    """How many steps of each kind XLA:GPU's runtime launches, for each
    setting's thunk sequence (`attention.launches_on_gpu`: one line a
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
