"""Where is this code running? Provenance for every measurement in the book.

A number without the machine it came from is not a result. `describe()`
gathers what a reader needs to judge a timing (device, compute capability,
memory, driver, jax/jaxlib versions, XLA_FLAGS, Colab or not, date), and
`summary()` prints it as one line at the top of every chapter.

Importing this module does not start a JAX backend; the functions do.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
import platform
import re
import shutil
import subprocess
import sys
from typing import Any, TypeVar

import jax

from helpers.measuring import gpu_state

T = TypeVar("T")


def on_gpu() -> bool:
    """True when JAX's default backend is a GPU (CUDA or ROCm).

    Example:
        >>> n = 2**28 if on_gpu() else 2**20
    """
    return jax.default_backend() == "gpu"


def gpu_arch() -> tuple[int, int] | None:
    """The compute capability of the first GPU, e.g. ``(9, 0)`` for an H100.

    Returns:
        ``(major, minor)``, or None when there is no CUDA GPU (CPU backend,
        or a ROCm GPU, which has no compute capability).

    Example:
        >>> arch = gpu_arch()
        >>> hopper = arch is not None and arch >= (9, 0)
    """
    if not on_gpu():
        return None
    capability = getattr(jax.devices()[0], "compute_capability", None)
    if not capability:
        return None
    major, minor = str(capability).split(".")[:2]
    return int(major), int(minor)


def sizes(*, gpu: T, cpu: T) -> T:
    """Pick a problem size: ``gpu`` on a GPU, ``cpu`` everywhere else.

    Every cell of the book runs on a CPU-only machine; this keeps the CPU
    version of a cell small enough to finish in seconds.

    Args:
        gpu: the value to use on a GPU.
        cpu: the value to use on a CPU.

    Returns:
        One of the two values.

    Example:
        >>> n = sizes(gpu=2**28, cpu=2**20)
    """
    if gpu is None or cpu is None:
        raise ValueError(
            "sizes() needs both values, e.g. sizes(gpu=2**28, cpu=2**20); "
            f"got gpu={gpu!r}, cpu={cpu!r}")
    return gpu if on_gpu() else cpu


def repo_root() -> str:
    """The checkout's top folder (the one holding ``helpers/``): where
    child processes run so that ``helpers`` is importable there too."""
    # this file is helpers/measuring/machine.py
    return str(Path(__file__).resolve().parents[2])


def in_colab() -> bool:
    """True inside a Google Colab runtime."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def _nvidia_smi(field: str) -> str | None:
    """One field of ``nvidia-smi --query-gpu`` for the first GPU, or None."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if lines else None


def _total_memory_bytes() -> int | None:
    """The first GPU's memory as its driver reports it (``nvidia-smi``'s
    total, in MiB), or None without a GPU."""
    total = _nvidia_smi("memory.total")
    try:
        return int(float(total.split()[0]) * 2**20) if total else None
    except (ValueError, IndexError):
        return None


def _device_memory_bytes(device: Any) -> int | None:
    """Memory JAX's allocator may use on ``device`` (None on CPU): its
    ``bytes_limit``, by default 75% of the memory CUDA reports
    (``XLA_PYTHON_CLIENT_MEM_FRACTION``), preallocated or not."""
    try:
        stats = device.memory_stats()
    except Exception:  # not every backend implements it
        return None
    return int(stats["bytes_limit"]) if stats and "bytes_limit" in stats \
        else None


def cpu_model() -> str:
    """The host's processor, as Linux names it, and how many cores this
    process may use, e.g. ``'AMD EPYC 9654 96-Core Processor, 16 cores'``;
    elsewhere what `platform.processor` says.

    Example:
        >>> cpu_model().endswith(" cores")
        True
    """
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count())
    return f"{name}, {cores} cores"


def describe() -> dict[str, Any]:
    """The provenance of a measurement taken now, on this machine.

    Returns:
        A JSON-serialisable dict with keys ``backend``, ``device``,
        ``device_count``, ``compute_capability``, ``memory_bytes``,
        ``total_memory_bytes``, ``driver``, ``platform_version``,
        ``jax``, ``jaxlib``, ``python``, ``machine``, ``cpu`` (the
        host's processor and its cores: a GPU's time against the CPU's
        depends on it), ``xla_flags``, ``colab``, ``date`` (UTC, ISO 8601)
        and ``gpu_state`` (the GPU's clocks, power and temperature now:
        `helpers.measuring.gpu_state.snapshot`). Values that do not apply
        (a driver on a CPU) are None.

    Example:
        >>> describe()["backend"]
        'cpu'
    """
    import jaxlib

    devices = jax.devices()
    first = devices[0]
    capability = getattr(first, "compute_capability", None)
    return {
        "backend": jax.default_backend(),
        "device": first.device_kind,
        "device_count": len(devices),
        "compute_capability": str(capability) if capability else None,
        "memory_bytes": _device_memory_bytes(first),
        "total_memory_bytes": _total_memory_bytes() if on_gpu() else None,
        "driver": _nvidia_smi("driver_version") if on_gpu() else None,
        "platform_version": first.client.platform_version,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpu": cpu_model(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "colab": in_colab(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(
            timespec="seconds"),
        "gpu_state": gpu_state.snapshot() if on_gpu() else None,
    }


def format_provenance(info: dict[str, Any]) -> str:
    """One line from a `describe()` dict: what ran, where, with what, when.

    Example:
        >>> format_provenance({
        ...     "device": "NVIDIA H100 80GB HBM3", "backend": "gpu",
        ...     "compute_capability": "9.0", "device_count": 1,
        ...     "driver": "580.65", "jax": "0.10.2", "jaxlib": "0.10.2",
        ...     "date": "2026-11-22T12:00:00+00:00"})
        'NVIDIA H100 80GB HBM3 (gpu, sm_90) · 1 device · driver 580.65 · \
jax 0.10.2 / jaxlib 0.10.2 · no XLA_FLAGS · 2026-11-22'
    """
    device = f"{info['device']} ({info['backend']}"
    if info.get("compute_capability"):
        device += f", sm_{info['compute_capability'].replace('.', '')}"
    if info.get("total_memory_bytes"):
        device += f", {info['total_memory_bytes'] / 2**30:.1f} GiB"
    if info.get("memory_bytes"):  # the allocator's limit, not the device's
        device += f", JAX may use {info['memory_bytes'] / 2**30:.1f} GiB"
    device += ")"
    parts = [device, f"{info['device_count']} device"
             + ("s" if info["device_count"] != 1 else "")]
    if info.get("driver"):
        parts.append(f"driver {info['driver']}")
    parts.append(f"jax {info['jax']} / jaxlib {info['jaxlib']}")
    parts.append(f"XLA_FLAGS={info['xla_flags']!r}" if info.get("xla_flags")
                 else "no XLA_FLAGS")
    if info.get("colab"):
        parts.append("Colab")
    parts.append(str(info["date"])[:10])
    return " · ".join(parts)


def summary() -> str:
    """`describe()` as one line, for the provenance cell of each chapter.

    Example:
        >>> summary() == format_provenance(describe())  # this machine
        True
    """
    return format_provenance(describe())


def short_name(device: str) -> str:
    """What the text calls a device after naming it once: the model
    without the maker or the memory, ``'H100'`` for ``'NVIDIA H100 80GB
    HBM3'``.

    Example:
        >>> [short_name(d) for d in ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
        ...  "Tesla T4", "NVIDIA A100-SXM4-40GB", "NVIDIA GeForce RTX 4090",
        ...  "cpu", "TPU v5 lite")]
        ['H100', 'H200', 'T4', 'A100', 'RTX 4090', 'CPU', 'TPU v5 lite']
    """
    if not isinstance(device, str) or not device.strip():
        raise ValueError(f"a device name is a non-empty str, got {device!r}"
                         "; pass describe()['device'].")
    if device.lower() == "cpu":
        return "CPU"
    name = re.sub(r"^(NVIDIA|Tesla|GeForce|Quadro)\s+", "", device.strip())
    name = re.sub(r"^(NVIDIA|Tesla|GeForce|Quadro)\s+", "", name)
    if name.startswith("RTX "):
        return " ".join(name.split()[:2])
    model = re.match(r"[A-Z]+[0-9]+[A-Za-z]?\b", name)  # H100, A10G, T4
    return model.group(0) if model else name


def device_slug(info: dict[str, Any] | None = None) -> str:
    """A folder name for a device: ``'NVIDIA H100 80GB HBM3'`` becomes
    ``'nvidia-h100-80gb-hbm3'``. Recorded results live under it.

    Args:
        info: a `describe()` dict; by default this machine's.
    """
    name = (info or describe())["device"]
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in name.lower())
    return "-".join(part for part in cleaned.split("-") if part)


# Packages a chapter needs that a Colab runtime may lack, as pip names.
COLAB_PACKAGES = {"ipywidgets": "ipywidgets", "jupytext": "jupytext",
                  "xprof": "xprof"}
# What the setup cell says on Colab, once a runtime: what it installs and
# why, and how to keep one's edits (a Colab runtime forgets them).
COLAB_INSTALLING = ("Installing {names}, which Colab lacks (the book's "
                    "widgets, notebook pairs and profile tables): once for "
                    "this runtime, about half a minute.")
COLAB_KEEP = ("To keep your edits, save a copy: File > Save a copy in "
              "Drive.")


def missing_packages(packages: dict[str, str] | None = None) -> list[str]:
    """The pip names of the packages in ``packages`` that cannot be imported.

    Args:
        packages: ``{import name: pip name}``; by default `COLAB_PACKAGES`.
    """
    import importlib.util

    wanted = COLAB_PACKAGES if packages is None else packages
    return [pip_name for module, pip_name in wanted.items()
            if importlib.util.find_spec(module) is None]


# The oldest JAX the book runs on: pyproject.toml's "jax>=0.10" (a test
# keeps the two equal). CI tests this end and the newest release.
JAX_MINIMUM = (0, 10)


def jax_version_problem(version: str | None = None) -> str | None:
    """What is wrong with the installed JAX for this book, and what to do,
    or None when it is new enough.

    Example:
        >>> jax_version_problem("0.4.35").split(":")[0]
        'JAX 0.4.35 is older than the book needs (0.10 or newer)'
        >>> jax_version_problem("0.12.0") is None
        True
    """
    if version is None:
        import jax
        version = jax.__version__
    numbers = tuple(int(part) for part in
                    re.findall(r"\d+", version)[:len(JAX_MINIMUM)])
    if numbers >= JAX_MINIMUM:
        return None
    needed = ".".join(map(str, JAX_MINIMUM))
    return (f"JAX {version} is older than the book needs ({needed} or "
            f"newer): run `pip install -U \"jax[cuda12]\"` (on a GPU) or "
            "`pip install -U jax` (CPU), then restart the kernel (Colab: "
            "Runtime > Restart session) and run this cell again.")


def colab_setup(packages: dict[str, str] | None = None) -> list[str]:
    """Check JAX, then install what a chapter needs and Colab lacks.

    Colab ships jax with CUDA, numpy, scipy, pandas and matplotlib. This
    installs the rest with pip, quietly, only on Colab (a local machine is
    set up by ``make book`` and should not be changed behind your back),
    saying in one line what and why, and how to keep one's edits.

    Raises:
        RuntimeError: the installed JAX is older than `JAX_MINIMUM`; the
            message says how to upgrade. Checked everywhere, since every
            chapter's first cell calls this.

    Returns:
        The pip names that were installed (empty outside Colab).
    """
    problem = jax_version_problem()
    if problem is not None:
        raise RuntimeError(problem)
    if not in_colab():
        return []
    missing = missing_packages(packages)
    if missing:
        print(COLAB_INSTALLING.format(names=", ".join(missing)))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        *missing], check=True)
    print(COLAB_KEEP)
    return missing
