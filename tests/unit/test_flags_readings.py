"""Chapter 6's runs on this machine as the page shows them, and where a
reader meets each flag: words and units, no dicts or powers of ten, and
each sentence flips with its data."""

from helpers.workbook.ch06_xla_flags import readings, registry_page
from helpers.xla import flag_registry


def fusion_run(kinds, median, spread=0.05):
    return {"fusion kinds": kinds, "kernels": sum(kinds.values()),
            "median s": median, "spread": spread}


LIBRARY = fusion_run({"kCustom": 1}, 6.25e-5)
OWN = fusion_run({"kLoop": 3}, 9.3e-5)


def test_the_fusions_table_reads_as_words_and_microseconds():
    shown = readings.fusions_table({"no flags": LIBRARY, "own": OWN})
    assert shown.loc["no flags", "fusions"] == "1 kCustom"
    assert shown.loc["own", "median time, µs"] == 93.0
    assert shown.loc["own", "spread within the run"] == "5%"


def test_the_medians_answer_which_fusion_is_faster_here():
    text = readings.library_answer(LIBRARY, OWN)
    assert text.startswith("On this machine, XLA's own fusions (3 kLoop) "
                           "took 93 µs a call against 62.5 µs for the "
                           "library's (1 kCustom): 1.49 times as long, ")
    assert "so here the library's fusion is faster" in text
    quick = readings.library_answer(LIBRARY, fusion_run({"kLoop": 3}, 4e-5))
    assert "so here XLA's own fusion is faster" in quick
    close = readings.library_answer(LIBRARY, fusion_run({"kLoop": 3}, 6.4e-5))
    assert "no difference these medians can show" in close


def pgle_run(on, median, wall, compilations, wall_spread=None):
    run = {"pgle": on, "compilations": compilations, "median s": median,
           "wall s": wall, "spread": 0.02}
    if wall_spread is not None:
        run["wall spread"] = wall_spread
    return run


def test_the_pgle_table_says_on_and_off_in_the_unit_asked():
    runs = {"without": pgle_run(False, 2.88e-4, 3e-4, 1),
            "with": pgle_run(True, 4.27e-4, 4.4e-4, 2)}
    shown = readings.pgle_table(runs, "µs")
    assert list(shown["automatic PGLE"]) == ["off", "on"]
    assert shown.loc["with", "profiled span, µs"] == 427.0
    assert "wall clock, ms" in readings.pgle_table(runs, "ms").columns
    assert "spread of the wall clock" not in shown.columns
    for run in runs.values():
        run["wall spread"] = 0.04
    shown = readings.pgle_table(runs, "µs")
    assert list(shown["spread of the wall clock"]) == ["4%", "4%"]


def test_pgle_on_the_cpu_is_judged_against_a_second_process():
    runs = {"without": pgle_run(False, 2.88e-4, 3e-4, 1),
            "without, again": pgle_run(False, 2.9e-4, 3e-4, 1),
            "with": pgle_run(True, 4.27e-4, 4.4e-4, 2)}
    text = readings.cpu_pgle(runs)
    assert text.startswith("On this machine's CPU, the small-kernel loop "
                           "took 1.48 times as long with automatic PGLE as "
                           "without (427 µs against 288 µs; ")
    assert "a real effect." in text and "not about PGLE on a GPU" in text
    runs["without, again"]["median s"] = 4.5e-4  # the noise is larger
    assert "no difference was expected" in readings.cpu_pgle(runs)
    del runs["without, again"]
    assert readings.cpu_pgle(runs) is None


def test_a_cpu_span_longer_than_the_call_is_read_by_the_wall_clock():
    # as on a CPU run: the span 2.5 times the call, shorter with PGLE, the
    # wall clock longer with it
    runs = {"without": pgle_run(False, 337e-6, 137e-6, 1, 0.05),
            "without, again": pgle_run(False, 296e-6, 138e-6, 1, 0.05),
            "with": pgle_run(True, 283e-6, 163e-6, 2, 0.05)}
    text = readings.cpu_pgle(runs)
    assert text.startswith("On this machine's CPU, without PGLE, the "
                           "small-kernel loop's device span under the "
                           "profiler, 337 µs, is 2.46 times its whole "
                           "unprofiled call (137 µs by the wall clock)")
    assert "0.84" not in text  # the span's ratio is not read
    assert "with automatic PGLE it took 1.19 times the time without" in text
    assert "larger than both: a real effect." in text
    assert "whatever made the difference" in text
    for run in runs.values():
        run["wall spread"] = 0.25  # the wall times spread more than 19%
    text = readings.cpu_pgle(runs)
    assert "no larger than the larger of the two: no effect shown." in text
    assert "no difference was expected" in text
    runs["with"]["wall s"] = 138e-6
    for run in runs.values():
        del run["wall spread"]  # a run that kept no spread of them
    assert "no larger than that: no effect shown." in readings.cpu_pgle(runs)


TOC = """parts:
  - caption: Start
    chapters:
      - file: chapters/00_how_to_use
  - caption: Numbered
    numbered: true
    chapters:
      - file: chapters/03_launches
      - file: chapters/06_xla_flags
  - caption: Workshop
    chapters:
      - file: chapters/08_workshop
"""
PAGES = {
    "03": "# Launches\n\nIntro names --xla_gpu_graph_min_graph_size.\n\n"
          "## One\n\nnothing\n\n## Two\n\n```python\n## not a heading\n"
          "flags = '--xla_gpu_enable_command_buffer='\n```\n",
    "06": "# Flags\n\n## A\n\n## B\n\n`--xla_gpu_enable_command_buffer`\n",
    "08": "# Workshop\n\n## Ex\n\n--xla_gpu_autotune_level=0\n"}


def test_a_flag_is_met_where_the_built_book_numbers_its_section():
    numbers = registry_page.chapter_numbers(TOC)
    assert numbers == {"03": 1, "06": 2}
    assert registry_page.where_met("--xla_gpu_enable_command_buffer",
                                   PAGES, numbers) == "1.2 and 2.2"
    assert registry_page.where_met("--xla_gpu_graph_min_graph_size",
                                   PAGES, numbers) == "chapter 1's opening"
    assert registry_page.where_met("--xla_gpu_autotune_level", PAGES,
                                   numbers) == "*Workshop*"
    assert registry_page.where_met("--xla_dump_to", PAGES,
                                   numbers) == registry_page.NOWHERE


def test_the_registry_list_shows_the_flags_a_reader_meets(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_toc.yml").write_text(TOC)
    for stem, text in PAGES.items():
        (tmp_path / "chapters" / f"{stem}_page.md").write_text(text)
    registry = flag_registry.table(read_installed=False)
    shown = registry_page.as_list(registry, tmp_path)
    lines = dict(line.split(": ", 1) for line in shown.splitlines())
    assert lines["- `--xla_gpu_enable_command_buffer`"].endswith(
        "where you meet it: 1.2 and 2.2")
    does = registry.loc["--xla_gpu_autotune_level", "what it does"]
    assert lines["- `--xla_gpu_autotune_level`"].startswith(
        does[:1].upper() + does[1:].rstrip(".") + ". Default")
    # a flag no page names is not listed: the sentence says it instead
    assert "- `--xla_dump_to`" not in lines and "—" not in shown
    assert "used in" not in shown
    unmet = registry_page.unmet(registry, tmp_path)
    assert "--xla_dump_to" in unmet
    assert "--xla_gpu_enable_command_buffer" not in unmet
    assert len(lines) + len(unmet) == len(registry)


def test_a_flag_no_page_names_is_traced_to_the_code_that_uses_it(tmp_path):
    package = tmp_path / "helpers" / "workbook" / "ch06_flags"
    package.mkdir(parents=True)
    (package / "runs.py").write_text('OPTIONS = {"xla_dump_to": "/x"}\n')
    (tmp_path / "helpers" / "tool.py").write_text("'--xla_dump_to=/y'\n")
    numbers = registry_page.chapter_numbers(TOC)
    assert registry_page.code_users("--xla_dump_to", tmp_path, numbers) == [
        "`helpers.tool`", "chapter 2's code"]
    assert registry_page.code_users("--xla_gpu_autotune_level", tmp_path,
                                    numbers) == []


def test_the_unmet_flags_are_said_in_one_sentence():
    text = registry_page.unmet_sentence({
        "--xla_a": ["chapter 7's code"], "--xla_b": ["chapter 7's code"],
        "--xla_c": []})
    assert text.startswith("The registry holds 3 more flags that no "
                           "page's text names, left out of the list: "
                           "chapter 7's code uses `--xla_a` and `--xla_b`; "
                           "no code uses `--xla_c`. They stay registered")
    one = registry_page.unmet_sentence({"--xla_c": []})
    assert one.startswith("The registry holds 1 more flag that")
    assert "It stays registered" in one
    assert registry_page.unmet_sentence({}) is None
