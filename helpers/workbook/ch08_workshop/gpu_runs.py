"""Which GPU ran each chapter at the last visit, and for how long: the
visit log kept with the recordings (``recorded/visit_log.json``), and,
for an older log that names no GPU, the chapter's newest recording. The
workshop's agenda times its blocks by these runs, and the how-to page
sets its Colab estimates against them.
"""

from __future__ import annotations

import json
from pathlib import Path


def gpu_run_seconds(log: Path, recorded_root: Path
                    ) -> dict[str, tuple[float, str]]:
    """Each chapter's last execution on a GPU visit: its seconds, and the
    GPU, as the log names it or, for an older log that does not, as the
    chapter's newest recording does ("a GPU" where it has none). Empty
    without a log."""
    if not log.exists():
        return {}
    runs = {}
    for entry in json.loads(log.read_text())["chapters"]:
        device = entry.get("device") or _newest_recording_device(
            recorded_root, entry["chapter"]) or "a GPU"
        runs[entry["chapter"]] = (float(entry["seconds"]), device)
    return runs


def _newest_recording_device(root: Path, chapter: str) -> str | None:
    """The device of the newest recording of ``chapter`` under ``root``."""
    dated = []
    for path in root.glob(f"*/{chapter}/*.json"):
        provenance = json.loads(path.read_text()).get("provenance", {})
        if "device" in provenance:
            dated.append((str(provenance.get("date", "")),
                          provenance["device"]))
    return max(dated)[1] if dated else None
