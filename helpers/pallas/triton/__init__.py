"""The Triton backend of `fused_scan` (GPUs before Hopper, and where
Mosaic GPU cannot run a step).

- `padding`: a function run on arrays padded to powers of two.
- `chains`: many independent chains side by side in each program.
- `ir`: a Pallas kernel lowered to Triton's IR, on any machine.
"""
