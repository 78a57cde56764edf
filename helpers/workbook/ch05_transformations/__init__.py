"""Chapter 5 (Transformations): `transforms` (jit, vmap, scan, remat and
their measurements), `steps` (training steps), `claims` (the source's
claims judged), `exercises` (5.1-5.3).
"""
