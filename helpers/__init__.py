"""Helpers for the book *Making JAX fast on GPUs*.

Each module has one job; import the ones a chapter needs::

    from helpers import bench, env, roofline

- `env`: where this runs (provenance), problem sizes, Colab setup.
- `bench`: `benchmark(fn, *args)` -> `Timing`, measured honestly.
- `roofline`: measured ceilings and the floors they imply.
- `recorded`: reference GPU results with provenance; live or recorded.
- `hlo`: fusions, kernels, while loops, collectives and aliasing of the
  compiled module.
- `crosscompile`: XLA:GPU compiling for an H100 on a machine without one.
- `fused`: `fused_scan`, a whole `lax.scan` as one Pallas kernel.
- `trace`: jax.profiler traces as DataFrames.
- `plots`: the book's figure style; live and recorded sweeps.
- `exercises`: auto-checked exercises with hints.
- `widgets`: interactive views of measured tables.

Importing this package imports none of them, so it has no side effects.
"""
