"""How long a collective takes: the latency-bandwidth (alpha-beta) model.

Each step of a collective algorithm costs a fixed latency ``alpha`` (seconds)
plus the bytes it moves over the link's bandwidth. Counting steps and bytes
for the textbook algorithms (Thakur, Rabenseifner and Gropp, "Optimization
of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005):

==============  =========  ================  ===========================
collective      algorithm  latency terms     bytes over the link
==============  =========  ================  ===========================
all-reduce      ring       2 (p - 1)         2 (p - 1) / p * n
all-reduce      tree       2 ceil(log2 p)    2 ceil(log2 p) * n
all-gather      ring       p - 1             (p - 1) / p * n
reduce-scatter  ring       p - 1             (p - 1) / p * n
==============  =========  ================  ===========================

``n`` is the whole buffer in bytes (the all-reduced array, the gathered
output, the input to scatter) and ``p`` the number of devices. The tree is a
binomial reduce then broadcast of the whole message: few steps, so it wins
for small messages; the ring moves each byte about twice whatever ``p`` is,
so it wins for large ones. (NCCL's pipelined double binary trees do better
than this plain tree; the point here is the shape of the trade-off.)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from scipy import optimize

_TERMS = {
    ("all-reduce", "ring"): lambda p: (2 * (p - 1), 2 * (p - 1) / p),
    ("all-reduce", "tree"): lambda p: (2 * math.ceil(math.log2(p)),
                                       2 * math.ceil(math.log2(p))),
    ("all-gather", "ring"): lambda p: (p - 1, (p - 1) / p),
    ("reduce-scatter", "ring"): lambda p: (p - 1, (p - 1) / p),
}
ALGORITHMS = tuple(_TERMS)

# Vendor peak figures, not measurements: total bidirectional bandwidth per
# GPU (or per port), in GB/s, and where each number is published.
LINKS = pd.DataFrame([
    ("NVLink 4 (H100 SXM)", 900.0,
     "https://www.nvidia.com/en-us/data-center/h100/"),
    ("NVLink 3 (A100 SXM)", 600.0,
     "https://www.nvidia.com/en-us/data-center/a100/"),
    ("PCIe Gen5 x16 (H100)", 128.0,
     "https://www.nvidia.com/en-us/data-center/h100/"),
    ("PCIe Gen4 x16 (A100)", 64.0,
     "https://www.nvidia.com/en-us/data-center/a100/"),
    ("InfiniBand NDR, one 400 Gb/s port", 100.0,
     "https://www.nvidia.com/en-us/networking/infiniband-adapters/"),
], columns=["link", "bidirectional_GBps", "source"])
LINKS["one_direction_GBps"] = LINKS["bidirectional_GBps"] / 2

# What NCCL reaches on eight H100 SXM GPUs joined by NVSwitch, as NCCL's
# maintainer gave it in NVIDIA/nccl-tests issue 212 (2024-05-06): bus
# bandwidths at large sizes, in GB/s, with nccl-tests' definition of bus
# bandwidth (`bus_bandwidth`). The ring loses about 20% of the 450 GB/s line
# rate to its protocol; NVLink SHARP (NVLS), NCCL's default all-reduce on
# NVSwitch, reduces in the switch, so its bus bandwidth can pass the line
# rate.
PUBLISHED_H100_ALL_REDUCE = pd.DataFrame([
    ("ring", 370.0),
    ("NVLink SHARP", 480.0),
], columns=["algorithm", "bus_GBps"])
PUBLISHED_SOURCE = "https://github.com/NVIDIA/nccl-tests/issues/212"


def terms(collective: str, devices: int, algorithm: str = "ring"
          ) -> tuple[float, float]:
    """``(latency steps, bytes moved per byte of buffer)`` of an algorithm.

    Example:
        >>> terms("all-reduce", 4)
        (6, 1.5)
    """
    if (collective, algorithm) not in _TERMS:
        raise ValueError(f"no model for {collective!r} with {algorithm!r}; "
                         f"known: {sorted(_TERMS)}.")
    if not isinstance(devices, (int, np.integer)) or devices < 2:
        raise ValueError(f"a collective needs at least 2 devices, got "
                         f"{devices!r}.")
    return _TERMS[collective, algorithm](int(devices))


def predict(collective: str, n_bytes: float, devices: int, *,
            alpha_s: float, bytes_per_s: float, algorithm: str = "ring"
            ) -> float:
    """Seconds for one collective by the alpha-beta model.

    Args:
        collective: ``'all-reduce'``, ``'all-gather'`` or
            ``'reduce-scatter'``.
        n_bytes: the whole buffer, in bytes.
        devices: how many devices take part.
        alpha_s: latency per step, seconds.
        bytes_per_s: one direction's link bandwidth, bytes per second.
        algorithm: ``'ring'`` or (all-reduce only) ``'tree'``.

    Example:
        >>> predict("all-reduce", 1e9, 8, alpha_s=0, bytes_per_s=1e9)
        1.75
    """
    if alpha_s < 0 or bytes_per_s <= 0 or n_bytes < 0:
        raise ValueError("need alpha_s >= 0, bytes_per_s > 0 and "
                         f"n_bytes >= 0; got {alpha_s}, {bytes_per_s}, "
                         f"{n_bytes}.")
    steps, moved = terms(collective, devices, algorithm)
    return steps * alpha_s + moved * n_bytes / bytes_per_s


@dataclasses.dataclass(frozen=True)
class Fit:
    """Alpha and bandwidth fitted to measured collectives.

    Attributes:
        alpha_s: latency per step, seconds.
        bytes_per_s: effective bandwidth, bytes per second.
        r2: the share of the variance in the measured times it explains.
        rows: how many measurements it was fitted to.
    """

    alpha_s: float
    bytes_per_s: float
    r2: float
    rows: int


def fit(measured: pd.DataFrame, algorithm: str = "ring") -> Fit:
    """Fit alpha and bandwidth to measured times by non-negative least
    squares (scipy.optimize.nnls), weighting each row by 1/time so that
    small and large messages count alike.

    Args:
        measured: columns ``collective``, ``devices``, ``bytes``,
            ``seconds``.
    """
    need = {"collective", "devices", "bytes", "seconds"}
    if not need <= set(measured.columns):
        raise ValueError(f"fit() needs columns {sorted(need)}; got "
                         f"{sorted(measured.columns)}.")
    if len(measured) < 2:
        raise ValueError("fit() needs at least 2 measurements.")
    rows = [terms(c, int(p), algorithm) for c, p in
            zip(measured["collective"], measured["devices"])]
    design = np.array([[steps, moved * n] for (steps, moved), n in
                       zip(rows, measured["bytes"])], dtype=float)
    seconds = measured["seconds"].to_numpy(dtype=float)
    weights = 1.0 / seconds
    (alpha, inverse_bw), _ = optimize.nnls(design * weights[:, None],
                                           seconds * weights)
    if inverse_bw <= 0:
        raise ValueError("the measurements show no growth with message "
                         "size; measure larger messages.")
    predicted = design @ np.array([alpha, inverse_bw])
    residual = np.sum((np.log(seconds) - np.log(predicted)) ** 2)
    total = np.sum((np.log(seconds) - np.log(seconds).mean()) ** 2)
    return Fit(float(alpha), float(1 / inverse_bw),
               float(1 - residual / total), len(measured))


def against_fit(measured: pd.DataFrame, fitted: Fit,
                algorithm: str = "ring") -> pd.DataFrame:
    """Each measurement beside the fitted model, in units a page reads:
    devices, KiB per device, measured and model µs, and measured over
    model (1 where the model is exact)."""
    model = [predict(c, n, int(p), algorithm=algorithm,
                     alpha_s=fitted.alpha_s, bytes_per_s=fitted.bytes_per_s)
             for c, n, p in zip(measured["collective"], measured["bytes"],
                                measured["devices"])]
    table = pd.DataFrame({
        "devices": measured["devices"].to_numpy(),
        "KiB": (measured["bytes"] / 1024).to_numpy(),
        "measured µs": (measured["seconds"] * 1e6).to_numpy(),
        "model µs": np.array(model) * 1e6})
    table["measured / model"] = table["measured µs"] / table["model µs"]
    return table


def bus_bandwidth(collective: str, n_bytes: float, devices: int,
                  seconds: float) -> float:
    """Bytes per second a collective's time stands for on each link, as
    nccl-tests reports it ("busbw", NVIDIA/nccl-tests doc/PERFORMANCE.md).

    It is the buffer over the time, times the bytes a ring moves per byte
    (`terms`): 2 (p - 1) / p for an all-reduce, (p - 1) / p for an
    all-gather or a reduce-scatter. That makes it the bandwidth at which
    `predict`, with no latency, gives back ``seconds``, and it can be set
    beside a link's one-direction peak whatever the device count.

    Example:
        >>> bus_bandwidth("all-reduce", 1e9, 8, 1.75)
        1000000000.0
    """
    if seconds <= 0 or n_bytes < 0:
        raise ValueError(f"need seconds > 0 and n_bytes >= 0; got "
                         f"{seconds}, {n_bytes}.")
    _, moved = terms(collective, devices)
    return moved * n_bytes / seconds


def at_bus_bandwidth(collective: str, n_bytes: float, devices: int,
                     bus_bytes_per_s: float) -> float:
    """Seconds a large collective takes at a published bus bandwidth: the
    inverse of `bus_bandwidth`.

    Example:
        >>> at_bus_bandwidth("all-reduce", 1e9, 8, 1e9)
        1.75
    """
    return predict(collective, n_bytes, devices, alpha_s=0,
                   bytes_per_s=bus_bytes_per_s)
