"""Chapter 2 (Fusion heuristics): `reductions` (XLA:GPU's reduction rule,
compiled for an H100), `fixes` (the formulations that try to beat the
cliff), `on_gpu` (the sweep with the fusion autotuner on and off),
`verdicts`, `exercises` (2.1-2.3).
"""
