"""Chapter 3 (Kernel launches): `variants` (the loop and its variants),
`on_gpu` (what a GPU visit records, and the variants compiled for an
H100), `verdicts`, `exercises` (3.1-3.3).
"""
