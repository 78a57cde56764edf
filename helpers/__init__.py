"""Helpers for the book *Making JAX fast on GPUs*: the code its chapters
call, written to be read.

One folder per job; import the modules a cell needs, e.g.
``from helpers.measuring import bench, machine``:

- `measuring`: timing a call honestly (`bench`, `device_time`), deciding
  whether a difference is real (`stats`), the device's limits
  (`roofline`), the reference GPU's recordings (`recorded`) and where this
  runs (`machine`).
- `page`: what the page shows: numbers and computed paragraphs glued into
  the prose (`prose`), worked estimates (`arithmetic`), tables
  (`tables`), figures (`plots`, `diagrams`, `legends`), widgets (`widgets`).
- `xla`: what XLA compiles, read back: the HLO (`hlo`), compiling for an
  H100 without one (`crosscompile`, `gpu_export`), dumps (`xla_dump`), flags
  (`xla_flags`, `flag_registry`), and a fresh process to set them in
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

1. a chapter cell asks `measuring.recorded.narrated` for the recording
   ``01_measuring/summary``, with the function that gathers this run's
   numbers (measured by `measuring.roofline` and `measuring.device_time`);
2. on a GPU with ``BOOK_RECORD=1`` the result is saved under
   ``recorded/<device>/`` with its provenance (`measuring.machine`);
3. on every machine the chapter reads the reference GPU's recording,
   and `workbook.ch01_measuring.verdicts` computes the paragraph that
   reads it;
4. `page.prose.glue_reference` glues that paragraph into the text, so a
   new recording changes the sentence.

Importing this package imports none of its parts, so it has no side
effects.
"""
