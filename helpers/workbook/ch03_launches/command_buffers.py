"""Chapter 3's command-buffer settings read as ratios: what turning CUDA
graphs off, adding WHILE to the command buffers, and graphs of any size
did to each loop's time a step against the default."""

from __future__ import annotations

from typing import Any


def setting_ratios(data: dict[str, list[dict[str, Any]]]
                   ) -> dict[str, dict[str, float]]:
    """Each command-buffer setting's time a step over the default's, per
    loop, float32: ``{setting: {loop: ratio}}`` for the settings other
    than the default."""
    times = {setting: {row["variant"]: row["us_per_step"] for row in rows
                       if row["dtype"] == "float32"}
             for setting, rows in data.items()}
    default = times["default"]
    return {setting: {loop: loops[loop] / default[loop]
                      for loop in default if loop in loops}
            for setting, loops in times.items() if setting != "default"}
