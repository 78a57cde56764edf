"""Chapter 3 (Kernel launches): `variants` (the loop and its variants),
`on_gpu` (what a GPU visit records, and the variants compiled for an
H100), `predictions` (the one-chain goal worked out before it is
measured), `verdicts`, `exercises` (3.1-3.3).
"""
