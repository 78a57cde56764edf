"""Chapter 1 (Measuring JAX on a GPU correctly): `exercises` (1.1-1.3),
`verdicts` (the chapter's sentences about the reference GPU).
"""
