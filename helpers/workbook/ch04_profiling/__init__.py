"""Chapter 4 (Profiling and statistics): `attention` (the attention block
and its profiled runs), `verdicts`, `exercises` (4.1-4.3).
"""
