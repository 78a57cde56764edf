"""Measuring honestly: what a call costs, how sure we are, and against what
limit.

- `bench`: `benchmark(fn, *args)` -> `Timing`, wall-clock time of a call
  that waits for its result.
- `device_time`: the device's own time of a call, from the profiler's
  kernel events, beside the wall time and the host's overhead.
- `stats`: is a difference real? Bootstrap intervals and decisions.
- `roofline`: measured ceilings (copy bandwidth, matmul rate) and the floors
  they imply.
- `recorded`: the reference GPU's results, saved with their provenance,
  and the paragraphs that quote them on any machine.
- `machine`: where this runs (provenance), problem sizes, Colab setup.
"""
