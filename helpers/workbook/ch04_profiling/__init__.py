"""Chapter 4 (Profiling and statistics): `attention` (the attention block
and its profiled runs), `noise` (A/A trials, power, coverage),
`profile_views` (XProf, Perfetto, thunk and HLO-diff readings as the
page shows them), `xprof_rates` (XProf's tables by version, against
chapter 1's ceilings), `verdicts`, `exercises` (4.1-4.3).
"""
