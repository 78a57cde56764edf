"""Chapter 7 (Multi-GPU communication): `collectives`, `pipeline`,
`exercises`.
"""
