"""The Mosaic GPU backend of `fused_scan` (Hopper and newer).

- `scalarise`: one chain's step as elementwise arithmetic on lane vectors.
- `chains`: 128 chains side by side, one per thread of a warpgroup.
- `lanes`: arrays moved between the caller's layout and the kernel's,
  where the chains are the minor axis.
"""
