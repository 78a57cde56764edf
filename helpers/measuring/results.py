"""The reference GPU's results as a page quotes them.

A chapter's prose is about the reference GPU (an H100). Executed on that
GPU, a page quotes its own run; anywhere else, the GPU's recording
(`helpers.measuring.recorded`), and this machine's numbers stay in its
own outputs:

- `live_or_recorded`: measure on a GPU (and record with ``BOOK_RECORD=1``),
  else load the recording;
- `narrated`: the same, with the reference the prose quotes beside this
  machine's run (`Narrated`);
- `Recording`: a chapter's recording made section by section, so that a
  page the reference GPU executes quotes that very execution;
- `reference` and `other_gpus`: the recordings of the reference and of
  the other GPUs that ran a chapter.

Nothing is ever invented: without a recording, a `Result` says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Callable

from helpers.measuring import machine, recorded
from helpers.measuring.recorded import (
    DRY_RUN,
    REFERENCE_DEVICE,
    MissingRecording,
    load,
    path_for,
    save,
    to_json,
)


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
    def measured_on_a_gpu(self) -> bool:
        """True for a GPU's measurement (recorded, or live on a GPU): the
        data a sentence about that GPU is checked against (only a GPU
        records, or measures live). A dry run's numbers are a CPU's, and
        prove nothing about a GPU.

        Example:
            >>> Result("x", "dry run", {}, None).measured_on_a_gpu
            False
        """
        return self.source in ("live", "recorded")

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
    code path is executed before it runs on a GPU, and a mistake in one
    costs seconds here instead of GPU time.

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
        data = json.loads(json.dumps(measure(), default=to_json,
                                     allow_nan=False))
        return Result(name, "dry run", data, machine.describe())
    if machine.on_gpu():
        data = measure()
        provenance = machine.describe()
        if os.environ.get("BOOK_RECORD") == "1":
            save(name, data, provenance=provenance)
        return Result(name, "live", json.loads(
            json.dumps(data, default=to_json)), provenance)
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
    folders = sorted({p.name for folder in recorded.roots()
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
                value, default=to_json, allow_nan=False))

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
