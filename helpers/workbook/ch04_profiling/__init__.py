"""Chapter 4 (Profiling and statistics): `attention` (the attention block
and its profiled runs), `noise` (A/A trials, power, coverage),
`profile_views` (XProf, Perfetto and thunk readings as the page shows
them), `verdicts`, `exercises` (4.1-4.3).
"""
