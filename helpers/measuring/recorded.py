"""Recorded reference results: real GPU measurements, stored with provenance.

A reader without a GPU still deserves real numbers. When a chapter runs on
a GPU, `live_or_recorded` measures live; with ``BOOK_RECORD=1`` (what
``make record`` sets) it also saves the result. Elsewhere it loads the
result recorded on the reference GPU and labels it with that device and
date. Nothing is ever invented: with no recording, it says so.

Files live at ``recorded/<device-slug>/<chapter>/<name>.json``::

    {"schema": 1, "name": "01_measuring/dispatch",
     "provenance": {... helpers.measuring.machine.describe() ...},
     "data": {...}}
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

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


def _roots() -> list[Path]:
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
    for folder in _roots():
        if (folder / device / f"{name}.json").exists():
            return folder / device / f"{name}.json"
    return write_root() / device / f"{name}.json"


def profile_folder(name: str, device: str = REFERENCE_DEVICE) -> Path:
    """Where the recording ``name`` keeps a GPU profile: a folder beside
    its JSON (``01_measuring/profile`` -> ``.../01_measuring/profile/``)
    that `helpers.profiler.trace.load` and `helpers.profiler.xprof_tables`
    read like the folder `jax.profiler.trace` wrote."""
    for folder in _roots():
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


def _to_json(value: Any) -> Any:
    """Make numpy scalars/arrays and Timings JSON-ready; refuse the rest."""
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
    text = json.dumps(record, default=_to_json, indent=1, allow_nan=False)
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


@dataclasses.dataclass(frozen=True)
class Result:
    """A GPU result, live or recorded, or the honest absence of one.

    Attributes:
        name: the recording name.
        source: ``'live'``, ``'recorded'``, ``'missing'``, or ``'dry run'``
            (the GPU code path run on a CPU; see `live_or_recorded`).
        data: the measurement (None when missing).
        provenance: where and when it was measured (None when missing).
    """

    name: str
    source: str
    data: Any
    provenance: dict[str, Any] | None

    @property
    def available(self) -> bool:
        """True when there is a measurement to show."""
        return self.source != "missing"

    @property
    def device(self) -> str | None:
        """The device it was measured on, or None without a measurement."""
        return None if self.provenance is None else self.provenance["device"]

    @property
    def short_name(self) -> str | None:
        """What the text calls the device after the page has named it
        once (``'H100'``; `helpers.measuring.machine.short_name`)."""
        return None if self.device is None else machine.short_name(
            self.device)

    @property
    def label(self) -> str:
        """A caption saying where the numbers come from."""
        if self.provenance is None:
            return (f"no GPU here and no recording of {self.name!r} yet: "
                    "run `make record` on the reference GPU")
        if self.source == "dry run":
            return (f"dry run, not a GPU result: the GPU code path at this "
                    f"machine's sizes, on "
                    f"{machine.format_provenance(self.provenance)}")
        when = "measured live" if self.source == "live" else "recorded"
        return f"{when}: {machine.format_provenance(self.provenance)}"

    def __repr__(self) -> str:
        return f"<{self.name}: {self.label}>"


def live_or_recorded(name: str, measure: Callable[[], Any], *,
                     device: str = REFERENCE_DEVICE) -> Result:
    """Measure on a GPU; elsewhere return the reference GPU's recording.

    On a GPU the result is saved too when ``BOOK_RECORD=1`` is set. With
    ``BOOK_DRY_RUN=1`` (what `make test` sets) a machine without a GPU
    runs ``measure`` too, at its own sizes, and saves nothing: every GPU
    code path is executed before a GPU visit, and a mistake in one costs
    seconds here instead of the visit.

    Args:
        name: ``'<chapter>/<result>'``.
        measure: a function of no arguments returning JSON-ready data.
        device: whose recording to show when there is no GPU.

    Returns:
        A `Result`; its ``source`` says which path was taken.

    Example:
        >>> r = live_or_recorded("01_measuring/copy", lambda: {"gbps": 1})
        >>> r.source in ("live", "recorded", "missing")
        True
    """
    path_for(name, device)  # validate the name before any work
    if os.environ.get(DRY_RUN) == "1" and not machine.on_gpu():
        data = json.loads(json.dumps(measure(), default=_to_json,
                                     allow_nan=False))
        return Result(name, "dry run", data, machine.describe())
    if machine.on_gpu():
        data = measure()
        provenance = machine.describe()
        if os.environ.get("BOOK_RECORD") == "1":
            save(name, data, provenance=provenance)
        return Result(name, "live", json.loads(
            json.dumps(data, default=_to_json)), provenance)
    try:
        record = load(name, device)
    except MissingRecording:
        return Result(name, "missing", None, None)
    return Result(name, "recorded", record["data"], record["provenance"])


def reference(name: str, device: str = REFERENCE_DEVICE) -> Result:
    """The reference GPU's recording of ``name``, on any machine.

    This is what the book's prose quotes: the same numbers whether a CPU,
    a Colab T4 or an H100 executes the notebook.

    Returns:
        A `Result` whose ``source`` is ``'recorded'``, or ``'missing'``
        when nothing has been recorded yet.
    """
    try:
        record = load(name, device)
    except MissingRecording:
        return Result(name, "missing", None, None)
    return Result(name, "recorded", record["data"], record["provenance"])


def other_gpus(name: str, device: str = REFERENCE_DEVICE) -> list[Result]:
    """The recordings of ``name`` made on GPUs other than ``device``, in
    the order of their folders' names: what a chapter shows beside the
    reference where GPUs differ (an H200's bandwidth beside an H100's).

    Example:
        >>> all(r.source == "recorded" for r in other_gpus(
        ...     "01_measuring/summary"))
        True
    """
    path_for(name, device)  # validate the name
    folders = sorted({p.name for folder in _roots()
                      for p in folder.glob("*/") if p.is_dir()})
    return [reference(name, slug) for slug in folders
            if slug != device and path_for(name, slug).exists()]


@dataclasses.dataclass(frozen=True)
class Narrated:
    """A GPU result as a chapter uses it: the reference recording, which
    the prose quotes, and what this machine measured, shown beside it.

    Attributes:
        reference: the reference GPU's recording (`reference`).
        here: this machine's result (`live_or_recorded`): measured live on
            a GPU, a dry run on a CPU under ``BOOK_DRY_RUN=1``, or, on any
            other machine, the recording again.
        device: the reference device's slug.
    """

    reference: Result
    here: Result
    device: str = REFERENCE_DEVICE

    @property
    def quotes_this_run(self) -> bool:
        """True when the reference is this run: on the reference GPU, and
        in a dry run standing in for it. A page then shows this run's
        outputs as the reference GPU's, and no recorded copy beside them.
        """
        return self.reference is self.here

    @property
    def yours(self) -> Result | None:
        """The run on this machine's GPU, to show as "your GPU" beside the
        reference; None without a GPU, and on the run that just recorded
        the reference itself."""
        if self.here.source != "live" or self.here.provenance is None:
            return None
        recording_it = (
            os.environ.get("BOOK_RECORD") == "1"
            and machine.device_slug(self.here.provenance) == self.device)
        return None if recording_it or self.quotes_this_run else self.here


def narrated(name: str, measure: Callable[[], Any], *,
             device: str = REFERENCE_DEVICE) -> Narrated:
    """Measure on a GPU (recording with ``BOOK_RECORD=1``), then read the
    reference recording for the prose.

    On the reference GPU the page quotes this run: it is the reference
    (recorded too with ``BOOK_RECORD=1``); so it is in a dry run, which
    stands in for that GPU. Elsewhere the stored recording is, and
    another GPU's live run is shown beside it (`Narrated.yours`).

    Args:
        name: ``'<chapter>/<result>'``.
        measure: a function of no arguments returning JSON-ready data.
        device: the reference device's slug.

    Example:
        >>> n = narrated("01_measuring/copy", lambda: {"gbps": 1})
        >>> n.reference.source in ("recorded", "missing")
        True
    """
    here = live_or_recorded(name, measure, device=device)
    stands_in = here.source == "dry run" or (
        here.source == "live" and machine.device_slug() == device)
    return Narrated(reference=here if stands_in else reference(name, device),
                    here=here, device=device)


class Recording:
    """A chapter's recording, made section by section as the chapter runs.

    The prose quotes the reference GPU. Executed on that GPU, the page
    must quote this execution, not the last one: each section adds
    (`add`) what it measured, and `quoted` gives the prose this run's
    numbers so far. Executed anywhere else, `quoted` is the reference
    GPU's stored recording, and this machine's numbers stay in its
    folded outputs. A dry run (``BOOK_DRY_RUN=1``, `make test`) quotes
    its own numbers, as the reference GPU will, so a paragraph that reads
    a number before its section measured it fails here, not on the GPU.
    `finish` saves the recording on a GPU with ``BOOK_RECORD=1``.

    Example:
        >>> run = Recording("01_measuring/copy")
        >>> run.add(copy={"gbps": 48.5})
        >>> run.quoted.source in ("recorded", "missing", "dry run")
        True
    """

    def __init__(self, name: str, device: str = REFERENCE_DEVICE):
        path_for(name, device)  # validate the name
        self.name, self.device = name, device
        self.measured: dict[str, Any] = {}
        self._stored = reference(name, device)

    @property
    def quotes_this_run(self) -> bool:
        """True on the reference GPU, and in a dry run standing in for
        it."""
        if os.environ.get(DRY_RUN) == "1" and not machine.on_gpu():
            return True
        return machine.on_gpu() and machine.device_slug() == self.device

    def add(self, **sections: Any) -> None:
        """Keep what a section measured, under its name (JSON-ready:
        numbers, strings, lists, dicts, numpy values, Timings)."""
        for key, value in sections.items():
            self.measured[key] = json.loads(json.dumps(
                value, default=_to_json, allow_nan=False))

    @property
    def quoted(self) -> Result:
        """The numbers the prose quotes: this run's so far (`add`) on the
        reference GPU and in a dry run, the stored recording elsewhere."""
        if not self.quotes_this_run:
            return self._stored
        source = "dry run" if not machine.on_gpu() else "live"
        return Result(self.name, source, dict(self.measured),
                      machine.describe())

    def finish(self) -> Narrated:
        """Save the recording (a GPU with ``BOOK_RECORD=1``) and return it
        as `narrated` would: the reference recording and this machine's
        run."""
        on_gpu = machine.on_gpu()
        if on_gpu and os.environ.get("BOOK_RECORD") == "1":
            save(self.name, self.measured)
        here_source = "live" if on_gpu else (
            "dry run" if os.environ.get(DRY_RUN) == "1" else "recorded")
        here = (Result(self.name, here_source, dict(self.measured),
                       machine.describe()) if here_source != "recorded"
                else self._stored)
        stored = reference(self.name, self.device) if on_gpu else \
            self._stored
        return Narrated(reference=stored, here=here, device=self.device)


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
