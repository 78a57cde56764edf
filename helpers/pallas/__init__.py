"""A whole `lax.scan` as one Pallas kernel.

- `scan`: `fused_scan`, its meaning, its VJP, and the choice of kernel.
- `backends`: which Pallas GPU backend runs on this machine, and how.
- `jaxprs`: the jaxpr tools both backends share.
- `triton`: the Triton backend (pre-Hopper GPUs): `padding` (arrays padded
  to powers of two), `chains` (many chains in one program), `ir` (the
  Triton IR, on any machine).
- `mosaic`: the Mosaic GPU backend (Hopper and newer): `scalarise` (a step
  as lane vectors), `chains` (one chain per thread).
"""
