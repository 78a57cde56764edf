"""Measuring honestly: what a call costs, how sure we are, and against what
limit.

- `bench`: `benchmark(fn, *args)` -> `Timing`, wall-clock time of a call
  that waits for its result.
- `device_time`: the device's own time of a call, from the profiler's
  kernel events, beside the wall time and the host's overhead.
- `stats`: is a difference real? Bootstrap intervals and decisions.
- `roofline`: measured ceilings (copy bandwidth, matmul rate) and the floors
  they imply.
- `recorded`: GPU results saved with their provenance, and read back.
- `results`: the reference GPU's results as a page quotes them: this run
  on that GPU, its recording elsewhere (`narrated`, `Recording`).
- `gpu_state`: the GPU's clocks, power and temperature, by NVML.
- `machine`: where this runs (provenance), problem sizes, Colab setup.
- `capability`: what a GPU can run of what the book uses (bf16 tensor
  cores, Pallas's backends, CuPy), and why not.
"""
