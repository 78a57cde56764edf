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
HLO op (`command_buffers`; compile with `NO_COMMAND_BUFFERS` for per-op
tables). `table` says which, instead of returning an empty frame
silently; `trace.load` reads the raw trace events in both cases.

`trim` copies a profile keeping the planes XProf analyses (the devices and
the HLO metadata) and dropping the host threads, which make most of a
GPU profile's size, so a recording can keep its xplane file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.trace import profile_folder

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
KEY_COLUMNS = {
    "kernel_stats": ("kernel_name", "registers_per_thread", "shmem_bytes",
                     "block_dim", "grid_dim", "occupancy_pct",
                     "is_kernel_using_tensor_core", "occurrences",
                     "total_duration_us"),
    "hlo_stats": ("category", "hlo_op_name", "occurrences", "total_time_us",
                  "model_flop_rate", "measured_memory_bw_GiB_s",
                  "bound_by"),
    "framework_op_stats": ("host_or_device", "type", "operation",
                           "occurrences", "total_time_us",
                           "total_self_time_us"),
    "roofline_model": ("category", "operation", "occurrences",
                       "total_time_us", "measured_flop_rate_GFLOP_s",
                       "measured_memory_bw_GiB_s",
                       "operational_intensity_FLOP_Byte", "bound_by",
                       "roofline_efficiency"),
}
# Planes `trim` keeps: the devices, and the HLO modules XProf needs to
# name ops (the host threads are the bulk of a profile and are dropped).
KEPT_PLANES = ("/device:", "/host:metadata")
XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
# The compile option that turns XLA:GPU's command buffers (CUDA graphs)
# off, so that each kernel is launched, and profiled, as its own HLO op.
NO_COMMAND_BUFFERS = {"xla_gpu_enable_command_buffer": ""}


def xplane_files(profile_dir: str | Path) -> list[Path]:
    """The ``*.xplane.pb`` files of the newest run under a profile folder
    (one per host), or their gzipped copies (``*.xplane.pb.gz``, what
    `trim` keeps with a recording).

    Raises:
        FileNotFoundError: the folder does not exist or holds no xplane.
    """
    folder = profile_folder(profile_dir)
    found = sorted((p for p in folder.rglob("*.xplane.pb*")
                    if p.name.endswith(XPLANE_SUFFIXES)),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        raise FileNotFoundError(
            f"no *.xplane.pb under {folder}: is it a jax.profiler output "
            "folder, and did the traced block run any JAX code?")
    newest_run = found[-1].parent
    return sorted(p for p in found if p.parent == newest_run)


def _read(xplane: Path) -> bytes:
    """An xplane file's bytes, unzipped when it is gzipped."""
    data = Path(xplane).read_bytes()
    return gzip.decompress(data) if str(xplane).endswith(".gz") else data


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
            target.write_bytes(_read(path))
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
    frame = tables(profile_dir, tool)[0]
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
                   "command buffers off for per-op tables: jax.jit(f, "
                   f"compiler_options={NO_COMMAND_BUFFERS}); kernel_stats "
                   "and helpers.trace.load read the kernels as they are")
        elif any(name.startswith("/device:GPU") for name in planes):
            why = ("this GPU profile has kernels, but XProf computes no "
                   f"{tool} rows for it; kernel_stats and "
                   "helpers.trace.load read the kernels")
        else:
            why = ("no GPU or TPU in it: XLA:CPU runs on host threads, "
                   "which XProf's device analyses leave out; read the "
                   "trace events with helpers.trace.load")
        raise ValueError(f"XProf's {tool} has no rows for this profile: "
                         f"{why}")
    return frame


def key_columns(frame: pd.DataFrame, tool: str) -> pd.DataFrame:
    """The columns of ``tool``'s table that a page shows (`KEY_COLUMNS`),
    those this XProf wrote, in that order.

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
    return frame[kept]


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

def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A protobuf varint at ``at``: (value, where the next field starts)."""
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, bytes, bytes]]:
    """The top-level fields of a protobuf message: (number, wire type, the
    field's whole encoding, its payload for length-delimited fields)."""
    fields, at = [], 0
    while at < len(data):
        start = at
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        payload = b""
        if wire == 0:
            _, at = _varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 2:
            size, at = _varint(data, at)
            payload, at = data[at:at + size], at + size
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"not a protobuf message (wire type {wire} at "
                             f"byte {start})")
        fields.append((number, wire, data[start:at], payload))
    return fields


def plane_names(xplane: str | Path) -> list[str]:
    """The names of the planes of an xplane.pb file (``/device:GPU:0``,
    ``/host:CPU``, ``/host:metadata`` ...)."""
    return [_name(payload) for number, wire, _, payload in
            _fields(_read(Path(xplane))) if number == 1 and wire == 2]


def command_buffers(profile_dir: str | Path) -> list[str]:
    """The XLA command buffers (``command_buffer_1`` ...) that a GPU
    profile's kernels are labelled with, empty when they ran one launch
    per HLO op.

    Kernels that XLA:GPU records into a CUDA graph carry the command
    buffer's name as their ``hlo_op`` stat (so in the H100 profile chapter
    4 keeps, jax 0.11.2: all of its 4000 device events). XProf's HLO
    tables look that name up among the module's instructions, find
    nothing, and leave the kernels out.
    """
    names: set[str] = set()
    for path in xplane_files(profile_dir):
        for number, wire, _, plane in _fields(_read(path)):
            if number == 1 and wire == 2 and \
                    _name(plane).startswith("/device:"):
                names.update(n for n in _stat_names(plane)
                             if re.fullmatch(r"command_buffer(_\d+)?", n))
    return sorted(names)


def _stat_names(plane: bytes) -> list[str]:
    # XPlane field 5 maps ids to XStatMetadata (field 2 of each entry),
    # whose field 2 is the name. A string stat value is stored once, as
    # the name of a metadata entry its stats refer to, so these names
    # hold the values too (an event's hlo_op among them).
    names = []
    for number, wire, _, entry in _fields(plane):
        if number == 5 and wire == 2:
            for key, kind, _, metadata in _fields(entry):
                if key == 2 and kind == 2:
                    names.append(_name(metadata))
    return names


def _name(message: bytes) -> str:
    # Field 2 is the name of an XPlane and of an XStatMetadata alike
    # (xla/tsl/profiler/protobuf/xplane.proto).
    return next((payload.decode() for number, wire, _, payload in
                 _fields(message) if number == 2 and wire == 2), "")


def trim(profile_dir: str | Path, destination: str | Path,
         keep: tuple[str, ...] = KEPT_PLANES, *, compress: bool = True
         ) -> list[Path]:
    """Copy the newest profile's xplane files keeping only the planes whose
    names start with one of ``keep`` (by default the devices and the HLO
    metadata, all XProf's device analyses need), into
    ``destination/plugins/profile/trimmed/``, gzipped unless ``compress``
    is False (an xplane shrinks about eightfold; `tables` reads both).

    Returns:
        The trimmed files, each with the planes it dropped listed in a
        ``.trimmed.json`` beside it (the trimming is stated, not hidden).
    """
    target = Path(destination) / "plugins" / "profile" / "trimmed"
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for source in xplane_files(profile_dir):
        kept, dropped = bytearray(), []
        for number, wire, encoded, payload in _fields(_read(source)):
            if number == 1 and wire == 2 and not \
                    _name(payload).startswith(keep):
                dropped.append(_name(payload))
                continue
            kept += encoded
        plain_name = source.name.removesuffix(".gz")
        out = target / (plain_name + (".gz" if compress else ""))
        out.write_bytes(gzip.compress(bytes(kept), mtime=0) if compress
                        else bytes(kept))
        (target / (plain_name + ".trimmed.json")).write_text(json.dumps(
            {"source": source.name, "bytes before": len(_read(source)),
             "bytes after": len(kept), "gzipped": compress,
             "planes dropped": dropped,
             "planes kept (prefixes)": list(keep)}, indent=1))
        written.append(out)
    return written


def copy(profile_dir: str | Path, destination: str | Path) -> list[Path]:
    """Copy the newest profile's xplane files whole (for small profiles)."""
    target = Path(destination) / "plugins" / "profile" / "whole"
    target.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy2(p, target / p.name))
            for p in xplane_files(profile_dir)]
