"""Reading a `jax.profiler` trace.

- `trace`: the trace's events as a DataFrame (kernels, scopes, Perfetto's
  SQL), and trimmed copies that keep only device events.
- `xprof_tables`: XProf's analyses of the same trace (kernel statistics,
  HLO op statistics, roofline) as DataFrames.
"""
