"""What NVIDIA's datasheets give for the GPUs the book measured: the
peaks to set each measured ceiling beside.

A ceiling the book measures (chapter 1's copy bandwidth and matmul rate)
is what this GPU did with the simplest kernel of its kind; the datasheet
gives what the part is built for. `Peaks` holds the datasheet's numbers
for one GPU, dense (without 2:4 sparsity), and `peaks` finds them by the
device's name as JAX reports it.
"""

from __future__ import annotations

import dataclasses

from helpers.measuring import machine


@dataclasses.dataclass(frozen=True)
class Peaks:
    """A GPU's datasheet peaks, in SI units, dense.

    Attributes:
        memory_bytes_per_s: the memory bandwidth.
        tf32_flops_per_s: TF32 tensor-core products (JAX's default for
            float32 on these GPUs).
        bf16_flops_per_s: bfloat16 tensor-core products.
        fp32_flops_per_s: float32 on CUDA cores (``precision='highest'``
            runs there, or in three TF32 passes).
        fp64_flops_per_s: float64 on CUDA cores.
        fp64_tensor_flops_per_s: float64 tensor-core products.
        cite: the bibliography key of the datasheet.
    """

    memory_bytes_per_s: float
    tf32_flops_per_s: float
    bf16_flops_per_s: float
    fp32_flops_per_s: float
    fp64_flops_per_s: float
    fp64_tensor_flops_per_s: float
    cite: str


# The H100 SXM5 and the H200 share the GH100 chip and its clocks: the
# H200 differs in memory only (NVIDIA's datasheets; the sparse figures
# they print are twice these).
_HOPPER_COMPUTE = dict(tf32_flops_per_s=494.7e12, bf16_flops_per_s=989.4e12,
                       fp32_flops_per_s=66.9e12, fp64_flops_per_s=33.5e12,
                       fp64_tensor_flops_per_s=66.9e12)
PEAKS = {
    "nvidia-h100-80gb-hbm3": Peaks(memory_bytes_per_s=3.35e12,
                                   cite="nvidia_h100_datasheet",
                                   **_HOPPER_COMPUTE),
    "nvidia-h200": Peaks(memory_bytes_per_s=4.8e12,
                         cite="nvidia_h200_datasheet", **_HOPPER_COMPUTE),
}


def peaks(device: str) -> Peaks | None:
    """The datasheet peaks of ``device`` (its name as JAX gives it), or
    None for a GPU the book has no datasheet for.

    Example:
        >>> peaks("NVIDIA H100 80GB HBM3").memory_bytes_per_s
        3350000000000.0
        >>> peaks("Tesla T4") is None
        True
    """
    return PEAKS.get(machine.device_slug({"device": device}))
