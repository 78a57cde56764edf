"""The book's environment check: this machine in one table.

`table` puts `helpers.measuring.machine.describe` and
`helpers.measuring.capability.capabilities` side by side, a row per fact
named in words, for the how-to page and a reader's own check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helpers.measuring import capability, gpu_state, machine

if TYPE_CHECKING:  # pandas is imported where the table is made
    import pandas as pd

# `describe`'s keys as a reader says them.
DESCRIBED_AS = {
    "backend": "JAX backend", "device": "device",
    "device_count": "devices", "compute_capability": "compute capability",
    "memory_bytes": "device memory (GiB)",
    "total_memory_bytes": "GPU memory, all devices (GiB)",
    "driver": "NVIDIA driver", "platform_version": "XLA platform",
    "jax": "jax", "jaxlib": "jaxlib", "python": "Python",
    "machine": "operating system", "xla_flags": "XLA_FLAGS",
    "colab": "on Colab", "date": "date (UTC)",
    "gpu_state": "GPU clocks, power, temperature"}


def table() -> pd.DataFrame:
    """`describe` and `capabilities` of this machine as one table, a row
    per fact named in words: the book's environment check.

    Example:
        >>> table().loc["JAX backend", "value"]
        'cpu'
    """
    import pandas as pd

    info = machine.describe()
    for key in ("memory_bytes", "total_memory_bytes"):
        if info[key] is not None:
            info[key] = round(info[key] / 2**30, 1)
    info["gpu_state"] = (gpu_state.describe(info["gpu_state"])
                         if machine.on_gpu() else None)
    rows = {DESCRIBED_AS.get(key, key): value for key, value in info.items()}
    rows["on Colab"] = "yes" if info["colab"] else "no"
    rows["XLA_FLAGS"] = info["xla_flags"] or "none set"
    rows.update({name: str(can)
                 for name, can in capability.capabilities().items()})
    return pd.DataFrame({"value": rows}).fillna("—")
