"""jax.profiler traces as pandas DataFrames.

``with jax.profiler.trace(folder, create_perfetto_trace=True):`` writes,
under ``folder/plugins/profile/<run>/``, an XSpace protobuf and a Chrome
trace-event JSON file (``*.trace.json.gz``, and ``perfetto_trace.json.gz``)
that Perfetto's UI opens. `load` reads the JSON into one row per complete
event, with the process and thread names resolved, so a chapter can ask
"how long did the GPU spend in kernels?" with pandas.

On a GPU, kernels appear under a process named ``/device:GPU:0`` (one
thread per CUDA stream); host work under ``/host:CPU``. A GPU kernel's
arguments name the HLO instruction it runs (``hlo_op``) and, usually, the
JAX source path of that instruction (``name``, e.g.
``jit(f)/attn_q_k/dot_general``), which holds the `jax.named_scope` names.
Where the path is missing (on a CPU; for kernels inside a CUDA graph,
openxla/xprof#3070), `attach_scopes` fills it from the compiled HLO's
metadata. `query` asks the same questions in SQL through Perfetto's
TraceProcessor, the tool the Perfetto UI is built on.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd

from helpers.xla import hlo

COLUMNS = ["name", "process", "thread", "start_us", "dur_us", "hlo_op",
           "scope", "args"]
SCOPE_KEYS = ("name", "tf_op")  # event arguments that carry the JAX path


def profile_folder(profile_dir: str | Path) -> Path:
    """``profile_dir`` as a Path, checked to be a folder.

    Raises:
        FileNotFoundError: it does not exist.
    """
    folder = Path(profile_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"profile folder {folder} does not exist; "
                                "pass the folder given to "
                                "jax.profiler.trace().")
    return folder


def trace_file(profile_dir: str | Path) -> Path:
    """The newest trace JSON under a folder written by `jax.profiler.trace`.

    Raises:
        FileNotFoundError: the folder does not exist or holds no trace.
    """
    folder = profile_folder(profile_dir)
    found = sorted(folder.rglob("*.trace.json.gz"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        raise FileNotFoundError(
            f"no *.trace.json.gz under {folder}: is it a jax.profiler "
            "output folder, and did the traced block run any JAX code?")
    return found[-1]


def load(profile_dir: str | Path) -> pd.DataFrame:
    """One row per complete event of the newest trace under ``profile_dir``.

    Returns:
        A DataFrame with columns ``name``, ``process``, ``thread`` (on a
        GPU, the CUDA stream), ``start_us``, ``dur_us`` (microseconds),
        ``hlo_op`` (the HLO instruction, or ``''``), ``scope`` (the JAX
        source path, or ``''``) and ``args`` (the event's argument dict),
        sorted by start time.

    Raises:
        FileNotFoundError: no trace there.
        ValueError: the file is not a Chrome trace, or holds no events.
    """
    path = trace_file(profile_dir)
    try:
        payload = json.loads(gzip.open(path).read())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is not a gzipped JSON trace: {err}") from err
    events = payload.get("traceEvents") if isinstance(payload, dict) else None
    if not isinstance(events, list):
        raise ValueError(f"{path} has no 'traceEvents' list: not a "
                         "jax.profiler trace.")
    processes, threads = _names(events)
    rows = [{"name": e.get("name", ""),
             "process": processes.get(e.get("pid"), str(e.get("pid"))),
             "thread": threads.get((e.get("pid"), e.get("tid")),
                                   str(e.get("tid"))),
             "start_us": float(e["ts"]), "dur_us": float(e.get("dur", 0)),
             "hlo_op": str(e.get("args", {}).get("hlo_op", "")),
             "scope": _scope(e.get("args", {})),
             "args": e.get("args", {})}
            for e in events if e.get("ph") == "X" and "ts" in e]
    if not rows:
        raise ValueError(f"{path} holds no complete events: the traced "
                         "block may have run nothing.")
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(
        "start_us", ignore_index=True)


def _scope(args: dict) -> str:
    """The JAX source path among an event's arguments, or ``''``."""
    for key in SCOPE_KEYS:
        value = str(args.get(key, ""))
        if "/" in value:  # "jit(f)/scope/op": a path, not a bare name
            return value
    return ""


def _names(events: list[dict]) -> tuple[dict, dict]:
    """Process and thread names from the trace's metadata events."""
    processes, threads = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        name = e.get("args", {}).get("name")
        if e.get("name") == "process_name":
            processes[e.get("pid")] = name
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = name
    return processes, threads


def device_events(events: pd.DataFrame) -> pd.DataFrame:
    """The rows that ran on an accelerator (process ``/device:...``)."""
    return events[events["process"].str.startswith("/device:")]


def kernel_events(events: pd.DataFrame,
                  kernel_names: list[str] | None = None) -> pd.DataFrame:
    """The rows that are kernels: device events on a GPU; on a CPU, the
    events named after the compiled module's fusions (``kernel_names``,
    e.g. from `helpers.xla.hlo.fusions`), which the CPU runtime runs on its
    own threads.

    Args:
        events: a frame from `load`.
        kernel_names: names to look for when there are no device events.
    """
    on_device = device_events(events)
    if not on_device.empty or not kernel_names:
        return on_device
    return events[events["name"].isin(kernel_names)]


def attach_scopes(events: pd.DataFrame, hlo_text: str) -> pd.DataFrame:
    """Fill in missing scopes from the compiled module's metadata.

    Each event is looked up by its ``hlo_op`` (GPU kernels), then by its
    name: the CPU runtime names its events after the HLO instruction, and
    a GPU kernel is named after its fusion with ``.`` written ``_``
    (``gemm_fusion_dot_2`` runs ``gemm_fusion_dot.2``). The name is what
    is left when the kernel ran inside a CUDA graph: XLA:GPU then gives
    every kernel of the graph the graph's ``hlo_op`` (``command_buffer``),
    as jax 0.11.2 does on an H100.

    Args:
        events: a frame from `load`.
        hlo_text: ``jax.jit(f).lower(...).compile().as_text()`` of the
            function that ran.

    Returns:
        A copy of ``events`` with ``scope`` filled where it was empty and
        the instruction is found.
    """
    paths = hlo.op_names(hlo_text)
    by_kernel = {op.replace(".", "_"): path for op, path in paths.items()}

    def lookup(hlo_op: str, name: str) -> str:
        return paths.get(hlo_op) or paths.get(name) or by_kernel.get(
            name, "")

    filled = events.copy()
    missing = filled["scope"] == ""
    filled.loc[missing, "scope"] = [
        lookup(op, name) for op, name in zip(
            filled.loc[missing, "hlo_op"], filled.loc[missing, "name"])]
    return filled


def in_scope(events: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The events whose JAX path has ``scope`` as one of its parts.

    ``'attn_q_k'`` matches ``jit(f)/attn_q_k/dot_general`` and
    ``jvp(attn_q_k)/...``, not ``jit(f)/attn_q_k2/...``.
    """
    if not scope or "/" in scope:
        raise ValueError(f"scope must be one jax.named_scope name such as "
                         f"'attn_q_k'; got {scope!r}.")
    part = rf"(?:^|[/(]){re.escape(scope)}(?:$|[/)])"
    return events[events["scope"].str.contains(part, regex=True)]


def scope_sql(scope: str) -> str:
    """Perfetto SQL for "the device kernels in this named scope": the rows
    `in_scope` finds among `device_events`, with the same columns.

    Perfetto stores timestamps in nanoseconds and an event's arguments
    under ``args.<key>``; ``EXTRACT_ARG`` reads one. As in `in_scope`, the
    scope must be a whole part of the path: brackets become slashes and
    ``GLOB`` (where ``_`` is literal, unlike in ``LIKE``) looks for
    ``/scope/``.
    """
    if not re.fullmatch(r"[\w.\-]+", scope or ""):
        raise ValueError(f"scope must be one jax.named_scope name (letters, "
                         f"digits, '_', '.', '-'); got {scope!r}.")
    return f"""
SELECT slice.name AS name, thread.name AS thread,
       slice.ts / 1e3 AS start_us, slice.dur / 1e3 AS dur_us,
       EXTRACT_ARG(slice.arg_set_id, 'args.name') AS scope
FROM slice
JOIN thread_track ON slice.track_id = thread_track.id
JOIN thread USING (utid)
JOIN process USING (upid)
WHERE process.name GLOB '/device:*'
  AND '/' || REPLACE(REPLACE(EXTRACT_ARG(slice.arg_set_id, 'args.name'),
                             '(', '/'), ')', '/') || '/'
      GLOB '*/{scope}/*'
ORDER BY slice.ts
"""


def local_processor() -> Path | None:
    """A ``trace_processor_shell`` already on this machine, or None.

    Looks at ``$PERFETTO_TRACE_PROCESSOR``, then the ``PATH``, then the
    folder where the perfetto package keeps the ones it downloaded.
    """
    named = os.environ.get("PERFETTO_TRACE_PROCESSOR")
    if named:
        return Path(named)
    on_path = shutil.which("trace_processor_shell")
    if on_path:
        return Path(on_path)
    cache = Path.home() / ".local" / "share" / "perfetto" / "prebuilts"
    found = sorted(p for p in cache.glob("trace_processor_shell*")
                   if p.suffix != ".tmp")
    return found[-1] if found else None


def query(profile_dir: str | Path, sql: str, *,
          binary: str | Path | None = None) -> pd.DataFrame:
    """Run Perfetto SQL on the newest trace under ``profile_dir``.

    Needs Perfetto's Python package (``pip install perfetto``) and its
    ``trace_processor_shell`` program, which the package downloads on
    first use; offline, fetch it elsewhere (https://get.perfetto.dev/
    trace_processor) and pass its path as ``binary``, or set the
    environment variable ``PERFETTO_TRACE_PROCESSOR`` to it. `load` needs
    neither.

    Returns:
        The query's rows as a DataFrame.

    Raises:
        ImportError: the perfetto package is not installed.
        RuntimeError: the trace processor could not be downloaded or run.
    """
    path = trace_file(profile_dir)
    try:
        from perfetto.trace_processor import (
            TraceProcessor,
            TraceProcessorConfig,
        )
    except ImportError as err:
        raise ImportError("trace.query needs Perfetto's Python package: "
                          "pip install perfetto (trace.load needs nothing "
                          "more than pandas).") from err
    binary = binary or local_processor()
    if binary is not None and not Path(binary).is_file():
        raise FileNotFoundError(f"no trace processor program at {binary}.")
    config = TraceProcessorConfig(bin_path=None if binary is None
                                  else str(binary))
    try:
        processor = TraceProcessor(trace=str(path), config=config)
    except Exception as err:  # download or start-up failed, many types
        raise RuntimeError(
            f"could not start Perfetto's trace processor ({err}). Offline? "
            "Download trace_processor_shell from https://get.perfetto.dev/"
            "trace_processor on a machine with network and pass "
            "binary=its path.") from err
    try:
        return processor.query(sql).as_pandas_dataframe()
    finally:
        processor.close()


def trim(profile_dir: str | Path, destination: str | Path) -> Path:
    """Copy a profile keeping only its device events, to store as a fixture.

    A GPU profile of a few steps holds tens of thousands of host events a
    chapter never reads. This keeps the metadata events (process and
    thread names) and the events of ``/device:`` processes, with their
    arguments, in a folder that `load` and `query` read like the original.

    Returns:
        The trimmed trace file.

    Raises:
        ValueError: the profile holds no device events (it came from a
            machine without a GPU).
    """
    source = trace_file(profile_dir)
    payload = json.loads(gzip.open(source).read())
    events = payload["traceEvents"]
    processes, _ = _names(events)
    device = {pid for pid, name in processes.items()
              if str(name).startswith("/device:")}
    kept = [e for e in events if e.get("ph") == "M" or
            (e.get("ph") == "X" and e.get("pid") in device)]
    if not any(e.get("ph") == "X" for e in kept):
        raise ValueError(f"{source} holds no device events to keep: was it "
                         "recorded on a machine without a GPU?")
    target = Path(destination) / "plugins" / "profile" / "trimmed"
    target.mkdir(parents=True, exist_ok=True)
    out = target / source.name
    with gzip.open(out, "wt") as fh:
        json.dump({"traceEvents": kept}, fh)
    return out
