"""The chapters' programs and exercises, in modules a reader can open.

A chapter's notebook keeps its prose and plots; the code it measures and
the exercises it sets live here, so they can be tested and reused:

* 0: `using` (a first exercise);
* 1: `measuring`;
* 2: `fusion`, `fixes` (the formulations that try to beat the cliff);
* 3: `launches` (the loop and its variants), `launches_gpu` (what a GPU
  visit records, and the variants compiled for an H100), `rewrites` (its
  exercises);
* 4: `profiling` (the attention block), `deciding` (its exercises);
* 5: `transforms`, `steps`, `claims`, `tracing` (its exercises);
* 6: `flags`;
* 7: `collectives`, `pipeline`, `scaling` (its exercises);
* `drills`: one more short exercise for each of chapters 1 to 6.

Each exercise is an `Exercise` (from `helpers.exercises`) that knows its
chapter, the name of the learner's answer, a starter a learner begins from
and a reference solution; `helpers.workbook.workshop.exercises()` finds
them here. The workshop kit (`workshop`) and the table of every chapter's
goal (`goals`) live here too: they name chapters, which the general
modules of `helpers` never do.
Tests check that every solution passes, and that the starter and plausible
wrong attempts fail with the hint meant for them.
"""
