"""The chapters' programs and exercises, one folder per chapter.

A chapter's notebook keeps its prose and plots; the code it measures, the
sentences it computes from the reference GPU's data and the exercises it
sets live here, so they can be tested and reused. Each folder is named
after its chapter (``ch03_launches`` for ``chapters/03_launches.md``) and
uses the same file names where it has such a part:

- ``exercises``: the chapter's exercises, each an `Exercise`
  (`helpers.grading.exercises`) that knows its chapter, the name of the
  learner's answer, a starter and a reference solution;
- ``verdicts``: the chapter's sentences about the reference GPU, each a
  function of the recording (the unit tests give each opposite outcomes);
- ``on_gpu``: what a GPU visit measures and records;
- the chapter's own programs, named for what they hold (``reductions``,
  ``fixes``, ``variants``, ``attention``, ``transforms``, ``flag_runs``,
  ``collectives``, ``pipeline``), the workshop kit (``ch08_workshop``) and
  the table of every chapter's goal (``ch09_reproducibility.goals``).

`helpers.workbook.ch08_workshop.workshop.exercises()` finds every
exercise here. These modules name chapters, which the general parts of
`helpers` never do. Tests check that every solution passes, and that the
starter and plausible wrong attempts fail with the hint meant for them.
"""
