"""Chapter 3's sentence on the command-buffer settings: what turning CUDA
graphs off, adding WHILE to the command buffers, and graphs of any size
did to each loop against the default, the loops grouped by outcome so
that the sentence adds to the table instead of reading it back."""

from __future__ import annotations

from typing import Any

from helpers.page import prose
from helpers.workbook.ch03_launches.verdicts import SAME


def command_buffers_story(data: dict[str, list[dict[str, Any]]],
                          gpu: str) -> str | None:
    """What each command-buffer setting did to the loops against the
    default (float32), the loops grouped by outcome so that the sentence
    adds to the table rather than reading it back."""
    times = {setting: {row["variant"]: row["us_per_step"] for row in rows
                       if row["dtype"] == "float32"}
             for setting, rows in data.items()}
    default = times.get("default")
    if not default:
        return None
    sentences = []
    for setting, label in (("graphs off", "With graphs off"),
                           ("default + WHILE", "Adding WHILE"),
                           ("smallest graphs", "With graphs of any size")):
        if setting in times:
            sentences.append(f"{label}, " + _grouped(times[setting], default)
                             + ".")
    sentences.append(_while_lesson(times))
    return (f"On the {gpu}, against the default's time a step: "
            + " ".join(s for s in sentences if s))


def _grouped(new: dict[str, float], default: dict[str, float]) -> str:
    """The loops of one setting by outcome: 'A and B ran slower (1.34 and
    2.65 times the default's time); C ran the same'."""
    ratios = {n: new[n] / default[n] for n in default if n in new}
    groups: dict[str, list[str]] = {"slower": [], "faster": [],
                                    "the same": []}
    for name, ratio in ratios.items():
        groups["slower" if ratio > SAME else "faster" if ratio * SAME < 1
               else "the same"].append(name)
    parts = []
    for outcome, loops in groups.items():
        if not loops:
            continue
        named = prose.and_list(f"*{n}*" for n in loops)
        how = prose.and_list(f"{ratios[n]:.2f}" for n in loops)
        parts.append(f"{named} ran {outcome}" if outcome == "the same" else
                     f"{named} ran {outcome} ({how} times the default's "
                     "time)")
    return "; ".join(parts)


def _while_lesson(times: dict[str, dict[str, float]]) -> str:
    """Where adding WHILE made loops slower: that the timings do not say
    why, since a loop inside one graph is a measurement, not a given."""
    default, whole = times.get("default", {}), times.get("default + WHILE")
    if not whole:
        return ""
    both = [n for n in whole if n in default]
    slower = [n for n in both if whole[n] > default[n] * SAME]
    if not slower:
        return ""

    def names(loops: list[str]) -> str:
        return " and ".join(f"*{n}*" for n in loops)

    return (f"These timings do not say why {names(slower)} lost from "
            "WHILE (a profile of that setting would): whether a loop gains "
            "from it is measured, loop by loop, not assumed.")
