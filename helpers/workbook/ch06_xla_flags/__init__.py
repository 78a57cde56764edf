"""Chapter 6 (XLA flags and PGLE): `flag_runs` (programs compiled and timed
under different flags, each in a fresh process), `verdicts`, `figure`
(each setting against its default, with the noise between processes),
`exercises` (6.1-6.3).
"""
