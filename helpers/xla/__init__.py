"""What XLA compiles, read back: HLO, dumps and flags.

- `hlo`: the compiled module as a typed model (fusions, kernels, while
  loops, collectives, aliasing).
- `crosscompile`: XLA:GPU compiling for an H100 on a machine without one
  (or for a T4, an L4 or an A100: `gpu_specs` describes them).
- `gpu_export`: the same for any function (a notebook's, a reader's),
  exported with `jax.export` and compiled in the child.
- `xla_dump`: the files ``xla_dump_to`` writes (the thunk sequence, which
  loop bodies become CUDA graphs).
- `known_flags`: ``XLA_FLAGS`` checked against the flags this jaxlib knows.
- `flag_registry`: the XLA flags the book uses, with their defaults read
  from the installed jaxlib.
- `fresh_process`: call a function in a new Python process, where
  ``XLA_FLAGS`` and the platforms are read again.
"""
