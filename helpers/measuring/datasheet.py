"""What NVIDIA's datasheets give for the GPUs the book measured: the
peaks to set each measured ceiling beside.

A ceiling the book measures (chapter 1's copy bandwidth and matmul rate)
is what this GPU did with the simplest kernel of its kind; the datasheet
gives what the part is built for. `Peaks` holds the datasheet's numbers
for one GPU, dense (without 2:4 sparsity), and `peaks` finds them by the
device's name as JAX reports it: the two Hopper GPUs the book measured,
and the three Colab lends (a T4, an L4, an A100 40GB), whose floors the
how-to page predicts. `fastest_rate` is the highest rate any unit of a
GPU offers for one dtype, the rate a floor assumes.
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
    tf32_flops_per_s: float | None  # None: no tensor cores for it (T4)
    bf16_flops_per_s: float | None
    fp32_flops_per_s: float
    fp64_flops_per_s: float | None  # None: not on the datasheet
    fp64_tensor_flops_per_s: float | None
    cite: str
    # float16 on tensor cores where it differs from bf16 (a T4 has fp16
    # tensor cores and no bf16 ones); None: bf16's rate
    fp16_flops_per_s: float | None = None


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
    # Turing's tensor cores take fp16 and integers only: float32 and
    # bfloat16 products run on the CUDA cores. The datasheet gives no FP64.
    "tesla-t4": Peaks(memory_bytes_per_s=320e9, tf32_flops_per_s=None,
                      bf16_flops_per_s=None, fp32_flops_per_s=8.1e12,
                      fp64_flops_per_s=None, fp64_tensor_flops_per_s=None,
                      cite="nvidia_t4_datasheet", fp16_flops_per_s=65e12),
    # Ada: the datasheet prints TF32 and BF16 with sparsity (120, 242).
    "nvidia-l4": Peaks(memory_bytes_per_s=300e9, tf32_flops_per_s=60e12,
                       bf16_flops_per_s=121e12, fp32_flops_per_s=30.3e12,
                       fp64_flops_per_s=None, fp64_tensor_flops_per_s=None,
                       cite="nvidia_l4_datasheet"),
    "nvidia-a100-sxm4-40gb": Peaks(memory_bytes_per_s=1555e9,
                                   tf32_flops_per_s=156e12,
                                   bf16_flops_per_s=312e12,
                                   fp32_flops_per_s=19.5e12,
                                   fp64_flops_per_s=9.7e12,
                                   fp64_tensor_flops_per_s=19.5e12,
                                   cite="nvidia_a100_datasheet"),
}


def peaks(device: str) -> Peaks | None:
    """The datasheet peaks of ``device`` (its name as JAX gives it), or
    None for a GPU the book has no datasheet for.

    Example:
        >>> peaks("NVIDIA H100 80GB HBM3").memory_bytes_per_s
        3350000000000.0
        >>> peaks("Tesla T4").tf32_flops_per_s is None
        True
        >>> peaks("NVIDIA GeForce RTX 4090") is None
        True
    """
    return PEAKS.get(machine.device_slug({"device": device}))


def fastest_rate(sheet: Peaks, dtype: str) -> float:
    """The highest FLOP/s ``sheet``'s GPU offers for products in
    ``dtype`` (``'float32'``, ``'bfloat16'``, ``'float16'`` or
    ``'float64'``), on
    tensor cores where it has them for that dtype: the rate a floor (a
    time no program can beat) assumes. A float64 rate the datasheet leaves
    out is taken as the float32 rate, which a float64 unit never exceeds,
    so the floor stays a floor.

    Example:
        >>> fastest_rate(peaks("Tesla T4"), "float32") / 1e12
        8.1
        >>> fastest_rate(peaks("NVIDIA A100-SXM4-40GB"), "bfloat16") / 1e12
        312.0

    Raises:
        ValueError: a dtype that is not a floating-point type.
    """
    fp32 = sheet.fp32_flops_per_s
    rates = {"float32": [sheet.tf32_flops_per_s, fp32],
             "bfloat16": [sheet.bf16_flops_per_s, fp32],
             "float16": [sheet.fp16_flops_per_s or sheet.bf16_flops_per_s,
                         fp32],
             "float64": [sheet.fp64_tensor_flops_per_s,
                         sheet.fp64_flops_per_s]}
    if dtype not in rates:
        raise ValueError(f"no floating-point rate for dtype {dtype!r}: "
                         f"name one of {', '.join(rates)}.")
    known = [rate for rate in rates[dtype] if rate is not None]
    return max(known or [fp32])
