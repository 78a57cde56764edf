"""The Mosaic GPU backend of `fused_scan` (Hopper and newer).

- `scalarise`: one chain's step as elementwise arithmetic on lane vectors.
- `chains`: 128 chains side by side, one per thread of a warpgroup.
"""
