"""Auto-checked exercises.

- `exercises`: `Exercise` (criteria, hints, starter, solution, level) and
  its check.
- `criteria`: the kinds of criterion exercises are built from (matches a
  reference, an HLO or jaxpr fact, a time).
- `answer_forms`: a learner's answer read in whatever natural form it
  comes.
- `report`: what a check found, one `Outcome` per criterion in a
  `Report`.
"""
