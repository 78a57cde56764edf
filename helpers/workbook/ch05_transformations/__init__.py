"""Chapter 5 (Transformations): `transforms` (jit, vmap, scan, remat and
their measurements), `steps` (training steps), `claims` (the source's
claims judged), `predictions` (each worked out before it is measured),
`reference` (the reference GPU's paragraphs), `clocks` (reading the timed
tables' three clocks), `precision` (bf16 and float32's precisions in
sentences), `exercises` (5.1-5.3).
"""
