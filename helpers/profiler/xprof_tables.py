"""XProf's analyses of a `jax.profiler` trace, as pandas DataFrames.

JAX's documentation sends users to XProf to read a profile. Its Python
package (``pip install xprof``; it works offline) turns the XSpace protobuf
``*.xplane.pb`` that ``jax.profiler.trace`` writes into the tables its UI
shows: kernel statistics (registers, shared memory, block and grid, and
occupancy of each GPU kernel), HLO op statistics, framework (JAX) op
statistics, the roofline model and the overview page. `table` returns one
of them as a DataFrame whose columns carry their units in their names
(``total_time_us``), so a chapter reads XProf's own numbers rather than
re-deriving them.

On a CPU most of these tables are empty: XProf analyses device planes, and
XLA:CPU's work runs on host threads. On a GPU the HLO tables are empty
when the kernels ran inside CUDA graphs (XLA's command buffers, on by
default): each kernel is then labelled with its command buffer, not its
HLO op (`helpers.profiler.xplanes.command_buffers`; compile with
`NO_COMMAND_BUFFERS` for per-op tables). `table` says which, instead of
returning an empty frame silently; `trace.load` reads the raw trace events in
both cases.

The xplane files themselves (finding them, naming their planes and CUDA
graphs, trimming them for a recording) are `helpers.profiler.xplanes`'.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.profiler.xplanes import (command_buffers, plane_names, read,
                                      xplane_files)

# The tools this module reads, and what each holds.
TOOLS = {
    "kernel_stats": "each GPU kernel: registers, shared memory, block and "
                    "grid, occupancy, time",
    "hlo_stats": "each HLO op: time, flops, bandwidth, what bounds it",
    "framework_op_stats": "each JAX op (host and device): time",
    "roofline_model": "each op against the device's roofline",
    "overview_page": "the run at a glance: step time, top ops",
}
# XProf's GViz types, as pandas dtypes.
_DTYPES = {"number": "float64", "string": "string", "boolean": "boolean"}
# The columns a page shows of each tool's main table (`key_columns`): what
# the chapter discusses, out of XProf's 15 to 30.
KEY_COLUMNS = {  # six at most, so a table fits the page's width
    "kernel_stats": ("kernel_name", "registers_per_thread", "shmem_bytes",
                     "occupancy_pct", "is_kernel_using_tensor_core",
                     "total_duration_us"),
    "hlo_stats": ("category", "hlo_op_name", "total_time_us",
                  "model_flop_rate", "measured_memory_bw_GiB_s",
                  "bound_by"),
    "framework_op_stats": ("host_or_device", "type", "operation",
                           "occurrences", "total_time_us",
                           "total_self_time_us"),
    "roofline_model": ("operation", "total_time_us",
                       "measured_flop_rate_GFLOP_s",
                       "operational_intensity_FLOP_Byte", "bound_by",
                       "roofline_efficiency"),
}
NAME_COLUMNS = {"kernel_name", "operation", "hlo_op_name"}
# The headers a page shows for those columns: XProf's ids are long enough
# to make a six-column table wider than the text.
SHORT_HEADERS = {
    "kernel_name": "kernel", "registers_per_thread": "registers",
    "shmem_bytes": "shared bytes", "occupancy_pct": "occupancy %",
    "is_kernel_using_tensor_core": "tensor cores",
    "total_duration_us": "total µs", "hlo_op_name": "HLO op",
    "total_time_us": "total µs", "model_flop_rate": "GFLOP/s (model)",
    "measured_memory_bw_GiB_s": "GiB/s", "bound_by": "bound by",
    "host_or_device": "where", "total_self_time_us": "self µs",
    "measured_flop_rate_GFLOP_s": "GFLOP/s",
    "operational_intensity_FLOP_Byte": "FLOP/byte",
    "roofline_efficiency": "of roofline"}
NAME_CHARS = 32
# Planes `trim` keeps: the devices, and the HLO modules XProf needs to
# name ops (the host threads are the bulk of a profile and are dropped).
# The compile option that turns XLA:GPU's command buffers (CUDA graphs)
# off, so that each kernel is launched, and profiled, as its own HLO op.
NO_COMMAND_BUFFERS = {"xla_gpu_enable_command_buffer": ""}


@contextlib.contextmanager
def _plain_files(files: list[Path]) -> Iterator[list[str]]:
    """The files as paths XProf can read: it takes only plain xplane.pb
    files, so gzipped ones are unzipped into a temporary folder first."""
    if not any(str(p).endswith(".gz") for p in files):
        yield [str(p) for p in files]
        return
    with tempfile.TemporaryDirectory() as folder:
        plain = []
        for path in files:
            target = Path(folder) / path.name.removesuffix(".gz")
            target.write_bytes(read(path))
            plain.append(str(target))
        yield plain


def _converter() -> Any:
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError as err:
        raise ModuleNotFoundError(
            "reading XProf's tables needs the xprof package: pip install "
            "xprof (it is in the book's requirements; `make install` "
            "installs it)") from err
    return raw_to_tool_data


def tables(profile_dir: str | Path, tool: str) -> list[pd.DataFrame]:
    """Every table XProf's ``tool`` makes of the newest profile under
    ``profile_dir`` (some tools make several: `roofline_model` gives the
    ops and then its diagnostics).

    Raises:
        ValueError: ``tool`` is not one of `TOOLS`, or the file is not an
            XSpace profile.
        ModuleNotFoundError: xprof is not installed.
        FileNotFoundError: no profile under ``profile_dir``.
    """
    if tool not in TOOLS:
        raise ValueError(f"unknown XProf tool {tool!r}; choose one of "
                         f"{sorted(TOOLS)}")
    sources = xplane_files(profile_dir)
    converter = _converter()
    error: Exception | None = None
    with _native_log() as log:
        try:
            with _plain_files(sources) as files:
                raw, _ = converter.xspace_to_tool_data(files, tool, {})
        except Exception as err:  # XProf reports a bad file in its words
            error = err
    if error is not None:
        raise ValueError(f"XProf could not read {sources} as a profile: "
                         f"{type(error).__name__}: {error}"
                         + (f"\nXProf's log:\n{log.text}" if log.text
                            else "")) from error
    if not raw:
        raise ValueError(f"XProf's {tool} made nothing of {sources}: is it "
                         "an xplane.pb written by jax.profiler?")
    data = json.loads(raw)
    return [_frame(t) for t in (data if isinstance(data, list) else [data])]


def table(profile_dir: str | Path, tool: str) -> pd.DataFrame:
    """XProf's main table for ``tool`` (see `TOOLS`) as a DataFrame, its
    columns named by XProf's ids with the unit appended (``avg_time_us``)
    and typed; XProf's page-level properties are in ``.attrs``.

    Raises:
        ValueError: the tool has no rows for this profile (on a CPU, the
            device tables are empty: XLA:CPU runs on host threads; some
            are empty for a GPU profile too), or the conditions of
            `tables`.
    """
    frame = _ops_only(tables(profile_dir, tool)[0])
    if frame.empty:
        planes = [name for path in xplane_files(profile_dir)
                  for name in plane_names(path)]
        graphs = command_buffers(profile_dir)
        if graphs:
            why = ("this GPU profile has kernels, but they ran inside CUDA "
                   "graphs, and the profiler labels each one with its XLA "
                   f"command buffer ({', '.join(graphs)}) instead of its "
                   "HLO instruction, which the module does not hold, so "
                   "XProf can give no HLO op its time. Profile with "
                   "command buffers off for per-op tables: `jax.jit(f, "
                   f"compiler_options={NO_COMMAND_BUFFERS})`; kernel_stats "
                   "and `helpers.profiler.trace.load` read the kernels as "
                   "they are")
        elif any(name.startswith("/device:GPU") for name in planes):
            why = ("this GPU profile has kernels, but XProf computes no "
                   f"{tool} rows for it; kernel_stats and "
                   "helpers.profiler.trace.load read the kernels")
        else:
            why = ("no GPU or TPU in it: XLA:CPU runs on host threads, "
                   "which XProf's device analyses leave out; read the "
                   "trace events with helpers.profiler.trace.load")
        raise ValueError(f"XProf's {tool} has no rows for this profile: "
                         f"{why}.")
    return frame


def _ops_only(frame: pd.DataFrame) -> pd.DataFrame:
    """The table without XProf's whole-program rows: `roofline_model` opens
    with a row per module of category "Program", which places no op on
    the roofline (and, when every kernel ran in a CUDA graph, is all there
    is: zero rates, bound by "Unknown")."""
    if "category" not in frame.columns:
        return frame
    return frame[frame["category"] != "Program"].reset_index(drop=True)


def key_columns(frame: pd.DataFrame, tool: str) -> pd.DataFrame:
    """The columns of ``tool``'s table that a page shows (`KEY_COLUMNS`),
    those this XProf wrote, in that order, headed by `SHORT_HEADERS`, with
    names (a cuBLAS kernel's run past 100 characters) shortened by
    `short_name` so the table fits a page.

    Raises:
        ValueError: ``tool`` has no key columns, or the frame has none of
            them (it is another tool's table).
    """
    if tool not in KEY_COLUMNS:
        raise ValueError(f"no key columns for {tool!r}; choose one of "
                         f"{sorted(KEY_COLUMNS)}")
    kept = [c for c in KEY_COLUMNS[tool] if c in frame.columns]
    if not kept:
        raise ValueError(f"this table has none of {tool}'s columns "
                         f"{KEY_COLUMNS[tool]}: is it another tool's?")
    shown = frame[kept].copy()
    for column in NAME_COLUMNS & set(kept):
        shown[column] = shown[column].astype(str).map(short_name)
    return shown.rename(columns=SHORT_HEADERS)


# cuBLAS names its kernels after their architecture, types, layout and
# tile: sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_..._cublas
_CUBLAS = re.compile(r"^(?P<arch>sm\d+)_\w*?gemm_.*?(?P<tile>tilesize\w+?)_")


def short_name(name: str, limit: int = NAME_CHARS) -> str:
    """A kernel's name short enough for a table, shortened visibly: a
    cuBLAS GEMM keeps its architecture and tile (what tells two apart),
    any other long name its start and an ellipsis.

    Example:
        >>> short_name("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_"
        ...            "tilesize64x128x32_warpgroupsize1x1x1_execute_"
        ...            "segment_k_off_kernel__5x_cublas")
        'sm90 cuBLAS gemm, tilesize64x128x32'
    """
    if len(name) <= limit:
        return name
    found = _CUBLAS.match(name)
    if found:
        return f"{found['arch']} cuBLAS gemm, {found['tile']}"
    return name[:limit - 1] + "…"


def kernel_totals(profile_dir: str | Path) -> dict[str, float]:
    """The GPU kernels of a profile as XProf's ``kernel_stats`` counts
    them: how many ran (each kernel's occurrences, summed) and their
    device time in µs (summed).

    Raises:
        ValueError: as `table`; a CPU profile has no kernel table.
    """
    kernels = table(profile_dir, "kernel_stats")
    return {"kernels": float(kernels["occurrences"].sum()),
            "device_us": float(kernels["total_duration_us"].sum())}


@dataclasses.dataclass
class _Log:
    """What the native code wrote, once the block has ended."""

    text: str = ""


@contextlib.contextmanager
def _native_log() -> Iterator[_Log]:
    """Hold what XProf's C++ code writes to the process's stderr (notes
    such as "falling back to legacy"), so a page shows it only with the
    error it explains."""
    log = _Log()
    with tempfile.TemporaryFile() as held:
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            yield log
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            log.text = held.read().decode(errors="replace").strip()


def _column_name(column: dict[str, Any]) -> str:
    """XProf's id, with the unit its label states: ``total_time`` labelled
    "Total time (us)" becomes ``total_time_us``, and a label in μs on an id
    already in us adds nothing."""
    name = column["id"]
    unit = re.search(r"\(([^()]+)\)\s*$", column.get("label", ""))
    if unit:
        spelled = unit.group(1).strip().replace("μ", "u").replace("µ", "u")
        suffix = re.sub(r"\W+", "_", spelled).strip("_")
        if suffix and not name.lower().endswith(suffix.lower()):
            name = f"{name}_{suffix}"
    return name


def _frame(gviz: dict[str, Any]) -> pd.DataFrame:
    """A Google Visualization DataTable (what XProf's tools return) as a
    typed DataFrame, without an index of row numbers."""
    columns = gviz.get("cols", [])
    names = [_column_name(c) for c in columns]
    rows = [[cell.get("v") if cell else None for cell in row.get("c", [])]
            for row in gviz.get("rows", [])]
    frame = pd.DataFrame(rows, columns=names)
    for name, column in zip(names, columns):
        dtype = _DTYPES.get(column.get("type", ""))
        if dtype:
            frame[name] = frame[name].astype(dtype)
    frame.attrs.update(gviz.get("p", {}))
    return frame


# --- trimming: keep what XProf analyses -------------------------------------
