"""Chapter 6 (XLA flags and PGLE): `flag_runs` (programs compiled and timed
under different flags, each in a fresh process), `predictions` (each GPU
setting's effect worked out before it is measured), `verdicts` (the
reference GPU's sentences and tables), `clocks` (the profiled span
against the wall clock, and automatic PGLE judged by them), `readings`
(this machine's runs as the page shows them), `registry_page` (the
book's flags and where a reader meets them), `figure` (each setting
against its default, with the noise between processes), `exercises`
(6.1-6.3).
"""
