"""The last GPU test run kept with the book: ``make test-gpu`` (or a GPU
visit, `scripts/gpu_visit.py`) writes pytest's JUnit file into
`helpers.measuring.recorded.root`, and pages read which tests passed there
and on which GPU."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from helpers.measuring import recorded

FILE_NAME = "test-gpu-junit.xml"


def path() -> Path:
    """Where the last GPU test run's JUnit file is kept."""
    return recorded.root() / FILE_NAME


def cases(junit: Path | None = None) -> list[dict[str, str]]:
    """Each test case of a pytest JUnit file (default: `path`): its
    ``name``, ``classname``, ``file`` and ``outcome`` ('passed', 'failed'
    or 'skipped'), and each property the test recorded
    (``record_property``) under its own name; empty when the file is
    missing."""
    junit = path() if junit is None else junit
    if not junit.exists():
        return []
    found = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        failed = case.find("failure") is not None or \
            case.find("error") is not None
        skipped = case.find("skipped") is not None
        recorded = {prop.get("name", ""): prop.get("value", "")
                    for prop in case.iter("property")}
        found.append(recorded | {key: case.get(key, "")
                                 for key in ("name", "classname", "file")}
                     | {"outcome": "failed" if failed else "skipped"
                        if skipped else "passed"})
    return found


def device(junit: Path | None = None) -> str | None:
    """The GPU the run names (its test suite's ``device`` property, which
    ``tests/gpu/conftest.py`` records); None when the file is missing or
    older than that property."""
    junit = path() if junit is None else junit
    if not junit.exists():
        return None
    for prop in ElementTree.parse(junit).getroot().iter("property"):
        if prop.get("name") == "device":
            return prop.get("value")
    return None
