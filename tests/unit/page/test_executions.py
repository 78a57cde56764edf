"""Which execution the book shows of a chapter (helpers.page.executions):
the reference GPU's while the code is the code that ran there, this
machine's, folded under the GPU's outputs, after a code edit."""

import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers.page import executions, reference_pages
from helpers.workbook.ch09_reproducibility import executed_pages
from scripts import notebooks

H100 = {"device": "NVIDIA H100 80GB HBM3", "backend": "gpu", "jax": "0.11.2",
        "date": "2026-12-01T09:30:00+00:00"}
CPU = {"device": "cpu", "backend": "cpu", "jax": "0.10.2",
       "machine": "Linux x86_64", "date": "2026-11-28T10:00:00+00:00"}


def text(value):
    return nbformat.v4.new_output("stream", name="stdout", text=value)


def glued(name, value):
    return nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain":
                              repr(value)},
        metadata={"scrapbook": {"name": name,
                                "mime_prefix": "application/papermill."
                                               "record/"}})


def chapter(outputs, *, prose="The copy ran at the rate below.",
            measure="rate = measure()"):
    """A chapter executed on ``outputs``' machine: a title, a setup cell,
    one measurement and one cell that compiles for the H100 (the same
    output everywhere)."""
    cells = [new_markdown_cell("# Copying\n\nKey concepts."),
             new_code_cell("import helpers"),
             new_markdown_cell(prose),
             new_code_cell(measure, outputs=[text(outputs["rate"]),
                                             glued("rate", outputs["rate"])],
                           metadata={"tags": ["measurement"]}),
             new_code_cell("hlo.fusions(step)",
                           outputs=[text("kLoop fusion, 1 kernel")])]
    notebook = new_notebook(cells=cells)
    executions.stamp(notebook, executor=outputs["executor"],
                     started=outputs["executor"]["date"], seconds=12.5,
                     gpu_start=None, gpu_end=None)
    return notebook


ON_H100 = {"rate": "3005 GB/s", "executor": H100}
ON_CPU = {"rate": "48.5 GB/s", "executor": CPU}


def outputs_text(cell):
    return "".join(o.get("text", "") for o in cell.outputs)


def executor_line(page):
    lines = [line for line in page.cells[0].source.splitlines()
             if line.startswith("Executed")]
    assert len(lines) == 1, page.cells[0].source
    return lines[0]


def test_same_code_shows_the_gpu_execution_with_todays_prose():
    here = chapter(ON_CPU, prose="Edited prose: the copy ran as below.")
    page = reference_pages.page(here, chapter(ON_H100))
    code = [c for c in page.cells if c.cell_type == "code"]
    assert outputs_text(code[1]) == "3005 GB/s"
    assert code[1].outputs[1]["metadata"]["scrapbook"]["name"] == "rate"
    assert page.cells[2].source == "Edited prose: the copy ran as below."
    assert executor_line(page) == (
        "Executed on an NVIDIA H100 80GB HBM3 with jax 0.11.2 on "
        "1 December 2026.")
    assert executions.execution(page)["executor"] == H100
    assert "fallback" not in page.cells[0].source


def test_a_code_edit_falls_back_to_this_machine_with_the_gpu_leading():
    here = chapter(ON_CPU, measure="rate = measure(repeat=5)")
    gpu = chapter(ON_H100)
    page = reference_pages.page(here, gpu)
    line = executor_line(page)
    assert line.startswith("Executed on a CPU (Linux x86_64) with jax 0.10.2"
                           " on 28 November 2026. Its code changed after")
    assert "executed it on 1 December 2026" in line
    assert "{container} page-executor fallback" in page.cells[0].source
    code = [c for c in page.cells if c.cell_type == "code"]
    # the edited measurement never ran on the GPU: no GPU output leads it,
    # and this machine's follows, folded and labelled
    led, folded = code[1], code[2]
    assert led.outputs == [] and outputs_text(folded) == "48.5 GB/s"
    assert {"remove-input", "hide-output"} <= set(folded.metadata["tags"])
    assert folded.metadata["mystnb"]["code_prompt_show"] == (
        "Show the output on this machine (CPU)")
    # a cell that is not a measurement shows this machine's output as is
    assert outputs_text(code[3]) == "kLoop fusion, 1 kernel"
    assert len(code) == 4


def test_after_a_code_edit_an_unchanged_measurement_leads_with_the_gpu():
    here = chapter(ON_CPU)
    here.cells[4].source = "hlo.fusions(step, fused=True)"  # another edit
    page = reference_pages.page(here, chapter(ON_H100))
    code = [c for c in page.cells if c.cell_type == "code"]
    led, folded = code[1], code[2]
    assert outputs_text(led) == "3005 GB/s"
    # the prose reads this machine's glue: the GPU's copy carries none
    assert all("scrapbook" not in o.get("metadata", {}) for o in led.outputs)
    assert [o["metadata"]["scrapbook"]["name"] for o in folded.outputs
            if "scrapbook" in o.get("metadata", {})] == ["rate"]


def test_without_a_gpu_execution_the_line_names_the_recordings_quoted():
    page = reference_pages.page(chapter(ON_CPU), None, recorded_on=H100)
    assert executor_line(page).endswith(
        "The results the text quotes are the book's reference GPU's, an "
        "NVIDIA H100 80GB HBM3 (jax 0.11.2, recorded on 1 December 2026); "
        "this machine's outputs are folded.")
    page = reference_pages.page(chapter(ON_CPU), None)
    assert executor_line(page) == ("Executed on a CPU (Linux x86_64) with "
                                   "jax 0.10.2 on 28 November 2026.")


def test_the_chapter_given_is_left_as_it_was():
    here, gpu = chapter(ON_CPU), chapter(ON_H100)
    before = copy.deepcopy(here), copy.deepcopy(gpu)
    reference_pages.page(here, gpu)
    reference_pages.page(chapter(ON_CPU, measure="x = 2"), gpu)
    assert (here, gpu) == before


def test_a_stamp_needs_the_kernels_provenance():
    with pytest.raises(ValueError, match="machine.describe"):
        executions.stamp(new_notebook(), executor={"device": "cpu"},
                         started="", seconds=0, gpu_start=None, gpu_end=None)


def test_a_page_is_kept_only_on_a_gpu_recording(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path))
    monkeypatch.setenv("BOOK_RECORD", "1")
    assert notebooks.keep_as_page(chapter(ON_CPU), "01_copying") is None
    kept = notebooks.keep_as_page(chapter(ON_H100), "01_copying")
    assert kept == tmp_path / "nvidia-h100-80gb-hbm3" / "01_copying.ipynb"
    page = executions.reference_page("01_copying")
    assert executions.execution(page)["executor"] == H100
    assert outputs_text(page.cells[3]) == "3005 GB/s"
    monkeypatch.setenv("BOOK_RECORD", "0")
    assert notebooks.keep_as_page(chapter(ON_H100), "02_other") is None


def test_a_chapter_name_is_checked():
    with pytest.raises(ValueError, match="01_measuring"):
        executions.page_path("chapters/01_measuring.ipynb")


def test_the_reproducibility_table_says_which_execution_each_page_shows(
        tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path / "recorded"))
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    hot = {"sm_clock_mhz": 1755, "temperature_c": 63,
           "reasons": ["software power cap"]}
    cool = {"sm_clock_mhz": 1980, "temperature_c": 41, "reasons": ["idle"]}
    gpu = chapter(ON_H100)
    gpu.metadata["book"]["execution"].update(gpu_start=cool, gpu_end=hot)
    for name, here in (("01_copying", chapter(ON_CPU)),
                       ("02_edited", chapter(ON_CPU, measure="x = 2"))):
        nbformat.write(here, chapters / f"{name}.ipynb")
        page = executions.page_path(name)
        page.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(gpu, page)
    table = executed_pages.executions_table(chapters).splitlines()
    assert table[2] == ("| 1 copying | H100 | 2026-12-01 | 12 | "
                        "1980 → 1755 | 41 → 63 | software power cap |")
    assert table[3] == ("| 2 edited | CPU | 2026-11-28 | 12 | — | — "
                        "| — |")
    assert table[-1] == ("Shown from this machine because their code "
                         "changed after the reference GPU executed them: "
                         "Copying (1 December 2026).")


def test_this_machines_fold_follows_the_h100s_result():
    """The fold of a measurement waits behind what follows it from the
    H100: the removed cell that glues its paragraph, the paragraph, and a
    cell showing its recorded result; the next prose comes after it."""
    here = chapter(ON_CPU)
    glue_cell = new_code_cell("glue_reference(...)",
                              metadata={"tags": ["remove-cell"]})
    paragraph = new_markdown_cell("```{glue:md} gpu_rate\n:format: myst\n"
                                  "```")
    recorded_table = new_code_cell("show(h100)", outputs=[text("3005")],
                                   metadata={"tags": ["reference-result"]})
    prose = new_markdown_cell("**Explain.** Why it is so.")
    here.cells[4:4] = [glue_cell, paragraph, recorded_table, prose]
    page = reference_pages.page(here, None)
    order = [c.source.splitlines()[0][:12] for c in page.cells]
    assert order == ["# Copying", "import helpe", "The copy ran",
                     "rate = measu", "glue_referen", "```{glue:md}",
                     "show(h100)", "rate = measu", "**Explain.**",
                     "hlo.fusions("]
    assert "remove-input" in page.cells[7].metadata["tags"]  # the fold


def test_a_glued_paragraph_that_opens_a_cell_leads_its_prose():
    here = chapter(ON_CPU)
    here.cells.insert(4, new_markdown_cell(
        "```{glue:md} gpu_rate\n:format: myst\n```\n\n**Explain.** Why."))
    page = reference_pages.page(here, None)
    order = [c.source.splitlines()[0][:12] for c in page.cells]
    assert order[3:] == ["rate = measu", "```{glue:md}", "rate = measu",
                         "**Explain.**", "hlo.fusions("]


def test_a_folded_figure_keeps_its_alt_text():
    here = chapter(ON_CPU)
    here.cells[3].metadata["mystnb"] = {"image": {"alt": "a roofline"}}
    folded = reference_pages.page(here, None).cells[4]
    assert folded.metadata["mystnb"]["image"] == {"alt": "a roofline"}
    assert folded.metadata["mystnb"]["code_prompt_show"].startswith("Show")
