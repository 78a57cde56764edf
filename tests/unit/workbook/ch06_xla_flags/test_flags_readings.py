"""Chapter 6's runs on this machine as the page shows them, and where a
reader meets each flag: words and units, no dicts or powers of ten."""

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
    assert list(shown["× no flags' time"]) == ["1.00", "1.49"]


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
    # a flag no page names is not listed: a table of its own holds it
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


