"""Made-up recordings for the unit tests: each test builds the data with
the outcome it needs from these, so a claim's check is fed both sides.

The numbers are like an H100's but invented; the reference recordings
in ``recorded/`` are read as they are, never through these.
"""

import json

from helpers.measuring import roofline

H100 = "NVIDIA H100 80GB HBM3"

# The provenance a recording made on an H100 carries (`helpers.measuring.
# machine.describe` on that GPU).
H100_PROVENANCE = {
    "backend": "gpu", "device": H100, "device_count": 1,
    "compute_capability": "9.0", "memory_bytes": 85 * 10**9,
    "driver": "550.54", "jax": "0.11.0", "jaxlib": "0.11.0",
    "xla_flags": "", "colab": False, "date": "2026-11-22T00:00:00+00:00"}


def timing(span_s, wall_s, name="t"):
    """A DeviceTiming's dict with constant samples."""
    return {"name": name, "span": {"name": name, "times": [span_s] * 5,
                                   "compile_s": None},
            "kernel": {"name": name, "times": [span_s] * 5,
                       "compile_s": None},
            "wall": {"name": name, "times": [wall_s] * 5,
                     "compile_s": None},
            "kernels_per_call": 1.0, "in_graph": 0.0,
            "kernels_from": "device events", "overhead_s": wall_s - span_s}


def device_recording(**changes):
    """A device-clock recording of chapter 1, numbers like an H100's."""
    moved = 2**31
    data = {
        "clock": "device", "matmul_n": 8192,
        "ceilings": {
            "device": H100, "copy_bytes_per_s": moved / 700e-6,
            "matmul_flops_per_s": {
                "float32": 380e12, f"float32, {roofline.HIGHEST}": 51e12},
            "timings": {"copy": timing(700e-6, 900e-6)}},
        "dispatch": {"enqueue_us": 50.0, "blocked_ms": 3.2,
                     "device_ms": 2.9, "floor_ms": 2.89},
        "compile": {"first_call_ms": 1400.0, "steady_ms": 3.0,
                    "trace_lower_ms": 20.0, "compile_ms": 900.0,
                    "retrace_ms": 950.0},
        "first_30_calls_ms": [4000.0, 5.8] + [3.1] * 28,
        "profile": {"elements": [1024, 2**28], "wall_us": [150.0, 1000.0],
                    "back_to_back_us": [20.0, 712.0],
                    "span_us": [1.0, 705.0], "kernel_us": [1.0, 705.0],
                    "xprof_kernel_us": [1.0, 706.0]},
        "cache": {"MiB": [1.0, 4.0, 1024.0],
                  "same device GB/s": [850.0, 1500.0, 3000.0],
                  "rotated device GB/s": [800.0, 1450.0, 3000.0],
                  "same wall GB/s": [20.0, 80.0, 2300.0],
                  "rotated wall GB/s": [20.0, 80.0, 2300.0]},
        "floors": {"kernel": ["2x + 1", "matmul"],
                   "bytes (hand)": [2**31, 2**29],
                   "bytes (XLA)": [2**31, 2**29],
                   "flops (hand)": [2**29, 2 * 8192**3],
                   "flops (XLA)": [2**29, 2 * 8192**3],
                   "bound": ["memory", "compute"],
                   "floor ms": [0.7, 2.89], "device ms": [0.74, 3.1],
                   "device spread": [0.01, 0.01], "wall ms": [0.95, 3.3]},
    }
    for key, value in changes.items():
        data[key] = value
    return json.loads(json.dumps(data))


def fusion_sweep(times, versions=("a @ b",), fusions="kInput reduce",
              ks=(10, 25, 35, 50), copy_gbps=3000.0):
    """A device-clock sweep: ``times[(version, dtype, k)]`` in ms, or 1 ms.
    """
    rows = {c: [] for c in ("K", "dtype", "version", "device ms",
                            "wall ms", "spread", "GB/s", "achieved",
                            "fusions")}
    for dtype in ("float32", "float64"):
        for k in ks:
            for version in versions:
                ms = times.get((version, dtype, k), 1.0)
                for column, value in (
                        ("K", k), ("dtype", dtype), ("version", version),
                        ("device ms", ms), ("wall ms", ms + 0.2),
                        ("spread", 0.01), ("GB/s", 0.0), ("achieved", 0.0),
                        ("fusions", fusions)):
                    rows[column].append(value)
    return {"copy_gbps": copy_gbps, "batch": [1000, 1000], "rows": rows}
