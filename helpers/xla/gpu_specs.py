"""The GPUs `helpers.xla.crosscompile` compiles for, as XLA:GPU sees them.

XLA:GPU decides a program's kernels from a description of the target GPU
(a ``GpuDeviceInfoProto``, in
``xla/stream_executor/device_description.proto``): its compute
capability, SM count, shared memory, L2 and bandwidth. Each dict here
holds those fields, by the proto's names, for one GPU: the H100 the book
measures, and the three Colab lends (a T4, an L4, an A100). `spec` finds
one by its short name, `target_config` writes it as the plugin reads it:

>>> spec("t4")["cuda_compute_capability"]
(7, 5)

XLA keeps descriptions of some GPUs in
``xla/backends/gpu/target_config/specs/`` (read at openxla/xla commit
4336d12e0706168f6a382ddb231f3a83853b0657 for ``a100_sxm_40.txtpb`` and
0774019d97e77dc433ce97604295f6fc0f5b3b65 for ``h100_sxm.txtpb``): the A100's
numbers are XLA's; XLA has no T4 or L4 file, so theirs are built the same
way from NVIDIA's datasheets and the CUDA C++ Programming Guide's table of
limits per compute capability ("Technical Specifications per Compute
Capability"), with the memory size nominal, as for the H100.
"""

from __future__ import annotations

from typing import Any

# An H100 SXM5 80GB. NVIDIA's published specifications (H100 datasheet;
# CUDA C Programming Guide, compute capability 9.0 limits). XLA's
# h100_sxm.txtpb agrees on every limit; it gives the bandwidth and memory
# as a device reports them (3,352,320,000,000 B/s; 84,942,979,072 B).
H100_SXM: dict[str, Any] = {
    "device_description_str": "NVIDIA H100 80GB HBM3",
    "cuda_compute_capability": (9, 0),
    "core_count": 132,                     # streaming multiprocessors
    "fpus_per_core": 128,                  # FP32 lanes per SM
    "threads_per_warp": 32,
    "threads_per_block_limit": 1024,
    "threads_per_core_limit": 2048,
    "registers_per_core_limit": 65536,
    "registers_per_block_limit": 65536,
    "shared_memory_per_block": 48 * 1024,
    "shared_memory_per_block_optin": 227 * 1024,
    "shared_memory_per_core": 228 * 1024,
    "l2_cache_size": 50 * 2**20,
    "memory_bandwidth": 3_350_000_000_000,  # bytes/s, HBM3
    "clock_rate_ghz": 1.98,                # boost clock
    "device_memory_size": 80 * 2**30,      # nominal 80 GB
}

# An A100 SXM4 40GB: XLA's own description (a100_sxm_40.txtpb, commit
# above), which a device reported. NVIDIA's A100 whitepaper and datasheet
# agree: 108 SMs, 40 MB L2, 1,555 GB/s of HBM2, 1,410 MHz boost; compute
# capability 8.0 allows 2048 threads, 164 KB of shared memory an SM and
# 163 KB a block.
A100_SXM4_40GB: dict[str, Any] = {
    "device_description_str": "NVIDIA A100-SXM4-40GB",
    "cuda_compute_capability": (8, 0),
    "core_count": 108,
    "fpus_per_core": 64,
    "threads_per_warp": 32,
    "threads_per_block_limit": 1024,
    "threads_per_core_limit": 2048,
    "registers_per_core_limit": 65536,
    "registers_per_block_limit": 65536,
    "shared_memory_per_block": 49152,
    "shared_memory_per_block_optin": 166912,
    "shared_memory_per_core": 167936,
    "l2_cache_size": 41943040,
    "memory_bandwidth": 1_555_200_000_000,
    "clock_rate_ghz": 1.41,
    "device_memory_size": 42331013120,     # as the device reports it
}

# An L4 (Ada, AD104). NVIDIA L4 datasheet: 24 GB GDDR6, 300 GB/s, 30.3
# TFLOPS FP32, which is 58 SMs x 128 FP32 lanes x 2 x the 2,040 MHz boost
# clock; 48 MB of L2 (AD104's). CUDA C Programming Guide, compute
# capability 8.9: 1536 threads an SM, 100 KB of shared memory an SM, 99 KB
# a block (as XLA's a6000.txtpb has for 8.6).
L4: dict[str, Any] = {
    "device_description_str": "NVIDIA L4",
    "cuda_compute_capability": (8, 9),
    "core_count": 58,
    "fpus_per_core": 128,                  # 7,424 lanes / 58 SMs
    "threads_per_warp": 32,
    "threads_per_block_limit": 1024,
    "threads_per_core_limit": 1536,
    "registers_per_core_limit": 65536,
    "registers_per_block_limit": 65536,
    "shared_memory_per_block": 48 * 1024,
    "shared_memory_per_block_optin": 99 * 1024,
    "shared_memory_per_core": 100 * 1024,
    "l2_cache_size": 48 * 2**20,
    "memory_bandwidth": 300_000_000_000,   # bytes/s, GDDR6
    "clock_rate_ghz": 2.04,                # boost clock
    "device_memory_size": 24 * 2**30,      # nominal 24 GB
}

# A T4 (Turing, TU104). NVIDIA T4 datasheet: 2,560 CUDA cores, 8.1 TFLOPS
# FP32 (40 SMs x 64 lanes x 2 x the 1,590 MHz boost clock), 16 GB GDDR6,
# 320 GB/s; the Turing architecture whitepaper: 4 MB of L2 (TU104). CUDA C
# Programming Guide, compute capability 7.5: 1024 threads an SM, 64 KB of
# shared memory an SM and (opted in) a block.
T4: dict[str, Any] = {
    "device_description_str": "Tesla T4",
    "cuda_compute_capability": (7, 5),
    "core_count": 40,
    "fpus_per_core": 64,                   # 2,560 lanes / 40 SMs
    "threads_per_warp": 32,
    "threads_per_block_limit": 1024,
    "threads_per_core_limit": 1024,
    "registers_per_core_limit": 65536,
    "registers_per_block_limit": 65536,
    "shared_memory_per_block": 48 * 1024,
    "shared_memory_per_block_optin": 64 * 1024,
    "shared_memory_per_core": 64 * 1024,
    "l2_cache_size": 4 * 2**20,
    "memory_bandwidth": 320_000_000_000,   # bytes/s, GDDR6
    "clock_rate_ghz": 1.59,                # boost clock
    "device_memory_size": 16 * 2**30,      # nominal 16 GB
}

# The oldest cuDNN jax 0.10's CUDA plugin accepts (its `with-cuda` extra
# asks for nvidia-cudnn-cu12>=9.8), and a CUDA 12 runtime.
DNN_VERSION = (9, 8)
CUDA_RUNTIME = (12, 8)
# The GPUs by the names `crosscompile.run(..., gpu=...)` takes.
GPUS: dict[str, dict[str, Any]] = {
    "H100": H100_SXM, "A100": A100_SXM4_40GB, "L4": L4, "T4": T4}
DEFAULT = "H100"
# Every field a description needs (a GpuDeviceInfoProto's, by its names).
FIELDS = tuple(H100_SXM)


def spec(gpu: str | dict[str, Any] = DEFAULT) -> dict[str, Any]:
    """The description of ``gpu``: one of `GPUS` by name (any case), or a
    dict with every field of `FIELDS`, returned as given.

    Raises:
        ValueError: an unknown name (the message lists the known ones),
            or a dict that lacks fields (it names them).
        TypeError: ``gpu`` is neither a name nor a dict.
    """
    if isinstance(gpu, dict):
        missing = [name for name in FIELDS if name not in gpu]
        if missing:
            raise ValueError(
                f"a GPU description needs every field of gpu_specs.FIELDS;"
                f" this one lacks {', '.join(missing)} (copy one of "
                f"gpu_specs.GPUS and change what differs).")
        return gpu
    if not isinstance(gpu, str):
        raise TypeError(f"gpu is a name ({', '.join(GPUS)}) or a dict like "
                        f"gpu_specs.H100_SXM; got {type(gpu).__name__}.")
    by_name = {name.lower(): found for name, found in GPUS.items()}
    if gpu.strip().lower() not in by_name:
        raise ValueError(f"no GPU named {gpu!r} to compile for: the known "
                         f"ones are {', '.join(GPUS)} (or pass a dict like "
                         "gpu_specs.H100_SXM).")
    return by_name[gpu.strip().lower()]


def short_name(gpu: str | dict[str, Any] = DEFAULT) -> str:
    """What the text calls ``gpu``: ``'T4'`` for `T4`, ``'A100'`` for
    `A100_SXM4_40GB`."""
    from helpers.measuring import machine
    return machine.short_name(spec(gpu)["device_description_str"])


def with_article(gpu: str | dict[str, Any] = DEFAULT) -> str:
    """``'an H100'``, ``'an L4'``, ``'a T4'``: the GPU's short name as
    it is read aloud (aitch, el: an; tee: a)."""
    name = short_name(gpu)
    return f"{'an' if name[:1].upper() in 'AEFHILMNORSX' else 'a'} {name}"


def target_config(gpu: str | dict[str, Any] = DEFAULT) -> str:
    """``gpu`` (a name of `GPUS` or a description like `H100_SXM`) as the
    GpuTargetConfigProto text JAX's CUDA plugin parses."""
    described = spec(gpu)
    major, minor = described["cuda_compute_capability"]
    info = [f"  {k}: {v}" for k, v in described.items()
            if k not in ("device_description_str", "cuda_compute_capability")]
    info.append(f"  cuda_compute_capability {{ major: {major} "
                f"minor: {minor} }}")
    block_dims = ["  block_dim_limit_x: 2147483647",
                  "  block_dim_limit_y: 65535", "  block_dim_limit_z: 65535"]
    return "\n".join([
        "gpu_device_info {", *info, *block_dims, "}",
        'platform_name: "CUDA"',
        f"dnn_version_info {{ major: {DNN_VERSION[0]} "
        f"minor: {DNN_VERSION[1]} }}",
        f"runtime_version {{ major: {CUDA_RUNTIME[0]} "
        f"minor: {CUDA_RUNTIME[1]} }}",
        f'device_description_str: "{described["device_description_str"]}"'])
