"""Recorded results: real GPU measurements, stored with their provenance.

A chapter executed on a GPU with ``BOOK_RECORD=1`` (what ``make record``
sets) saves what it measured here (`save`), and every machine reads it
back (`load`); `helpers.measuring.results` is how a page quotes them.
Nothing is ever invented: a recording that is not there is missing, not
made up.

Files live at ``recorded/<device-slug>/<chapter>/<name>.json``::

    {"schema": 1, "name": "01_measuring/dispatch",
     "provenance": {... helpers.measuring.machine.describe() ...},
     "data": {...}}
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from helpers.measuring import machine

if TYPE_CHECKING:  # imported where used: pandas is slow to import
    import pandas

SCHEMA = 1
DRY_RUN = "BOOK_DRY_RUN"
# The book's reference GPU (an H100 SXM, as jax names its device kind).
REFERENCE_DEVICE = "nvidia-h100-80gb-hbm3"
REQUIRED_PROVENANCE = ("backend", "device", "compute_capability", "driver",
                       "jax", "jaxlib", "xla_flags", "date")
_NAME = re.compile(r"^[0-9]{2}_[a-z0-9_]+/[a-z0-9_\-]+$")


class MissingRecording(FileNotFoundError):
    """No recorded result exists under that name for that device."""


def root() -> Path:
    """The ``recorded/`` folder: ``$BOOK_RECORDED_DIR`` or the checkout's."""
    override = os.environ.get("BOOK_RECORDED_DIR")
    if override:
        return Path(override)
    return Path(machine.repo_root()) / "recorded"


def write_root() -> Path:
    """Where new recordings go: ``$BOOK_RECORD_TO`` (a GPU visit's staging
    folder, packed after each chapter) or `root`. Recordings are read from
    here first, then from `root`, so a chapter recorded in this visit is
    quoted by the next chapter, and an older one is quoted otherwise."""
    override = os.environ.get("BOOK_RECORD_TO")
    return Path(override) if override else root()


def roots() -> list[Path]:
    """Where recordings are read from, first found first."""
    return list(dict.fromkeys([write_root(), root()]))


def path_for(name: str, device: str = REFERENCE_DEVICE) -> Path:
    """Where the recording ``name`` of ``device`` lives: the first of
    `write_root` and `root` that holds it, else where it would be saved.

    Args:
        name: ``'<chapter>/<result>'``, e.g. ``'01_measuring/dispatch'``.
        device: a device slug (see `helpers.measuring.machine.device_slug`).
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"recording name {name!r} must look like '<chapter>/<result>', "
            "e.g. '01_measuring/dispatch': a chapter folder (two digits, "
            "lower case) and a result name of lower-case letters, digits, "
            "'_' and '-'.")
    for folder in roots():
        if (folder / device / f"{name}.json").exists():
            return folder / device / f"{name}.json"
    return write_root() / device / f"{name}.json"


def profile_folder(name: str, device: str = REFERENCE_DEVICE) -> Path:
    """Where the recording ``name`` keeps a GPU profile: a folder beside
    its JSON (``01_measuring/profile`` -> ``.../01_measuring/profile/``)
    that `helpers.profiler.trace.load` and `helpers.profiler.xprof_tables`
    read like the folder `jax.profiler.trace` wrote."""
    for folder in roots():
        found = folder / device / name
        if found.is_dir():
            return found
    return write_root() / device / name


def keep_profile(name: str, profile_dir: str | Path) -> Path | None:
    """When recording on a GPU (``BOOK_RECORD=1``), keep the profile in
    ``profile_dir`` beside the recordings as ``name``: its device events
    (`helpers.profiler.trace.trim`) and its xplane without the host threads,
    gzipped (`helpers.profiler.xplanes.trim`), so every XProf analysis of the
    GPU run can be redone on any machine. Elsewhere it keeps nothing.

    Returns:
        The folder kept, or None when nothing was recorded.
    """
    if os.environ.get("BOOK_RECORD") != "1" or not machine.on_gpu():
        return None
    from helpers.profiler import trace, xplanes

    path_for(name)  # validate the name
    target = write_root() / machine.device_slug() / name
    trace.trim(profile_dir, target)
    xplanes.trim(profile_dir, target)
    return target


def to_json(value: Any) -> Any:
    """``json.dumps``'s ``default``: numpy scalars and arrays, and
    Timings, made JSON-ready; anything else refused."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"cannot record a {type(value).__name__}; record "
                    "numbers, strings, lists, dicts, numpy values or "
                    "Timings.")


def save(name: str, data: Any, *, provenance: dict[str, Any] | None = None
         ) -> Path:
    """Record ``data`` under ``name`` for this device, with provenance.

    Args:
        name: ``'<chapter>/<result>'``.
        data: JSON-serialisable results (numpy values and Timings allowed).
        provenance: defaults to `helpers.measuring.machine.describe()` of
            this machine.

    Returns:
        The path written.
    """
    provenance = provenance or machine.describe()
    _check_provenance(provenance, name)
    path_for(name)  # validate the name
    path = write_root() / machine.device_slug(provenance) / f"{name}.json"
    record = {"schema": SCHEMA, "name": name, "provenance": provenance,
              "data": data}
    text = json.dumps(record, default=to_json, indent=1, allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return path


def _check_provenance(provenance: Any, name: str) -> None:
    if not isinstance(provenance, dict):
        raise ValueError(f"recording {name!r}: provenance must be a dict "
                         "from helpers.measuring.machine.describe().")
    missing = [k for k in REQUIRED_PROVENANCE if k not in provenance]
    if missing:
        raise ValueError(f"recording {name!r}: provenance lacks {missing}; "
                         "use helpers.measuring.machine.describe() on the "
                         "machine that measured.")


def load(name: str, device: str = REFERENCE_DEVICE) -> dict[str, Any]:
    """Read and check the recording ``name`` of ``device``.

    Returns:
        ``{'schema', 'name', 'provenance', 'data'}``.

    Raises:
        MissingRecording: no file; the message says how to make one.
        ValueError: the file is not a valid recording.
    """
    path = path_for(name, device)
    if not path.exists():
        raise MissingRecording(
            f"no recording {name!r} for {device} (looked for {path}). "
            "Run `make record` on that GPU to create it.")
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise ValueError(f"{path}: expected a schema-{SCHEMA} recording, "
                         f"found schema {record.get('schema')!r}"
                         if isinstance(record, dict) else
                         f"{path}: expected a JSON object")
    for key in ("name", "provenance", "data"):
        if key not in record:
            raise ValueError(f"{path}: recording lacks the key {key!r}")
    if record["name"] != name:
        raise ValueError(f"{path} holds {record['name']!r}, not {name!r}")
    _check_provenance(record["provenance"], name)
    return record


def inventory() -> pandas.DataFrame:
    """Every recorded result in ``recorded/``, one row each, with its
    provenance: device, driver, jax and jaxlib versions, XLA_FLAGS, date.
    """
    import pandas as pd

    rows = []
    for path in sorted(root().glob("*/*/*.json")):
        record = json.loads(path.read_text())
        info = record.get("provenance", {})
        rows.append({"result": record.get("name", path.stem),
                     "device folder": path.parent.parent.name,
                     **{key: info.get(key) for key in
                        ("device", "driver", "jax", "jaxlib", "xla_flags",
                         "date")}})
    return pd.DataFrame(rows, columns=["result", "device folder", "device",
                                       "driver", "jax", "jaxlib",
                                       "xla_flags", "date"])
