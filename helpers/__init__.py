"""Helpers for the book *Making JAX fast on GPUs*: the code its chapters
call, written to be read.

One folder per job; import the modules a cell needs, e.g.
``from helpers.measuring import bench, machine``:

- `measuring`: timing a call honestly (`bench`, `device_time`), deciding
  whether a difference is real (`stats`), the device's limits
  (`roofline`), the GPU's recordings (`recorded`) and how a page quotes
  them (`results`), where this runs (`machine`, `gpu_state`,
  `environment`).
- `page`: what the page shows: numbers and computed paragraphs glued into
  the prose (`prose`), worked estimates (`arithmetic`), tables
  (`tables`), figures (`plots`, `diagrams`, `legends`), widgets (`widgets`).
- `xla`: what XLA compiles, read back: the HLO (`hlo`), compiling for an
  H100 without one (`crosscompile`, `gpu_export`), dumps (`xla_dump`), flags
  (`known_flags`, `flag_registry`), and a fresh process to set them in
  (`fresh_process`).
- `profiler`: a `jax.profiler` trace as DataFrames (`trace`), and XProf's
  analyses of it (`xprof_tables`).
- `multi_device`: meshes, processes, point-to-point transfers and the
  cost of collectives.
- `pallas`: `fused_scan`, a whole `lax.scan` as one Pallas kernel, with
  its `triton` and `mosaic` backends.
- `grading`: auto-checked exercises, their criteria and reports.
- `examine`: a reader's own function checked for the field guide's slow
  patterns (`examine(fn, *args)`), with the evidence and the fix.
- `workbook`: one folder per chapter (``ch03_launches``...), with the
  programs the chapter measures, what a GPU visit records (``on_gpu``),
  the sentences computed from the reference GPU's data (``verdicts``) and
  the chapter's ``exercises``.

How a number reaches the prose, for example chapter 1's copy ceiling:

1. the chapter keeps what each section measures (by `measuring.roofline`
   and `measuring.device_time`) in its `measuring.results.Recording`,
   ``01_measuring/summary``;
2. on the reference GPU the prose quotes that run, and with
   ``BOOK_RECORD=1`` it is saved under ``recorded/<device>/`` with its
   provenance (`measuring.machine`); on any other machine the prose
   quotes the reference GPU's recording;
3. `workbook.ch01_measuring.verdicts` computes the paragraph that reads
   it, and `page.prose.glue_reference` glues it into the text;
4. the page the book shows is the reference GPU's execution of the
   chapter (`page.executions`), kept while its code is unchanged.

Importing this package imports none of its parts, so it has no side
effects.
"""
