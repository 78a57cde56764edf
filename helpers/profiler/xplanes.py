"""The xplane files a `jax.profiler` trace writes, read without XProf.

``jax.profiler.trace`` writes an XSpace protobuf per host
(``*.xplane.pb``): one *plane* per device and per host thread. This module
finds them (`xplane_files`), names their planes (`plane_names`), finds the
CUDA graphs a GPU's kernels ran in (`command_buffers`), and copies a
profile keeping only the planes XProf analyses (`trim`): the devices and
the HLO metadata, without the host threads that make most of a GPU
profile's size, so a recording can keep its xplane file. It reads the
protobuf's wire format directly (a few fields), so it needs neither
XProf nor TensorFlow.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

from helpers.profiler.trace import profile_folder

KEPT_PLANES = ("/device:", "/host:metadata")
XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")


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


def read(xplane: Path) -> bytes:
    """An xplane file's bytes, unzipped when it is gzipped."""
    data = Path(xplane).read_bytes()
    return gzip.decompress(data) if str(xplane).endswith(".gz") else data


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
            _fields(read(Path(xplane))) if number == 1 and wire == 2]


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
        for number, wire, _, plane in _fields(read(path)):
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
        for number, wire, encoded, payload in _fields(read(source)):
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
            {"source": source.name, "bytes before": len(read(source)),
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
