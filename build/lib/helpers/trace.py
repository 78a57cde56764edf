"""jax.profiler traces as pandas DataFrames.

``with jax.profiler.trace(folder, create_perfetto_trace=True):`` writes,
under ``folder/plugins/profile/<run>/``, an XSpace protobuf and a Chrome
trace-event JSON file (``*.trace.json.gz``, and ``perfetto_trace.json.gz``)
that Perfetto's UI opens. `load` reads the JSON into one row per complete
event, with the process and thread names resolved, so a chapter can ask
"how long did the GPU spend in kernels?" with pandas.

On a GPU, kernels appear under a process named ``/device:GPU:0`` (one
thread per CUDA stream); host work under ``/host:CPU``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

COLUMNS = ["name", "process", "thread", "start_us", "dur_us", "args"]


def trace_file(profile_dir: str | Path) -> Path:
    """The newest trace JSON under a folder written by `jax.profiler.trace`.

    Raises:
        FileNotFoundError: the folder does not exist or holds no trace.
    """
    folder = Path(profile_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"profile folder {folder} does not exist; "
                                "pass the folder given to "
                                "jax.profiler.trace().")
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
        A DataFrame with columns ``name``, ``process``, ``thread``,
        ``start_us``, ``dur_us`` (microseconds) and ``args`` (the event's
        argument dict), sorted by start time.

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
             "args": e.get("args", {})}
            for e in events if e.get("ph") == "X" and "ts" in e]
    if not rows:
        raise ValueError(f"{path} holds no complete events: the traced "
                         "block may have run nothing.")
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(
        "start_us", ignore_index=True)


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
    e.g. from `helpers.hlo.fusions`), which the CPU runtime runs on its
    own threads.

    Args:
        events: a frame from `load`.
        kernel_names: names to look for when there are no device events.
    """
    on_device = device_events(events)
    if not on_device.empty or not kernel_names:
        return on_device
    return events[events["name"].isin(kernel_names)]
