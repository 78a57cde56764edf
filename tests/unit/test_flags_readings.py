"""Chapter 6's runs on this machine as the page shows them, and where a
reader meets each flag: words and units, no dicts or powers of ten, and
each sentence flips with its data."""

import pandas as pd

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


def pgle_run(on, median, wall, compilations):
    return {"pgle": on, "compilations": compilations, "median s": median,
            "wall s": wall, "spread": 0.02}


def test_the_pgle_table_says_on_and_off_in_the_unit_asked():
    runs = {"without": pgle_run(False, 2.88e-4, 3e-4, 1),
            "with": pgle_run(True, 4.27e-4, 4.4e-4, 2)}
    shown = readings.pgle_table(runs, "µs")
    assert list(shown["automatic PGLE"]) == ["off", "on"]
    assert shown.loc["with", "profiled span, µs"] == 427.0
    assert "wall clock, ms" in readings.pgle_table(runs, "ms").columns


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


def test_the_registry_list_says_where_you_meet_each_flag(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_toc.yml").write_text(TOC)
    for stem, text in PAGES.items():
        (tmp_path / "chapters" / f"{stem}_page.md").write_text(text)
    registry = flag_registry.table(read_installed=False)
    shown = registry_page.as_list(registry, tmp_path)
    lines = dict(line.split(": ", 1) for line in shown.splitlines())
    assert lines["- `--xla_gpu_enable_command_buffer`"].endswith(
        "where you meet it: 1.2 and 2.2")
    assert lines["- `--xla_dump_to`"].endswith("where you meet it: —")
    does = registry.loc["--xla_dump_to", "what it does"]
    assert lines["- `--xla_dump_to`"].startswith(
        does[:1].upper() + does[1:].rstrip(".") + ". Default")
    assert "used in" not in shown and "chapter" not in lines[
        "- `--xla_dump_to`"]
    assert isinstance(registry, pd.DataFrame)
