"""The strict check of a new execution against the stored page
(helpers.page.reproduction): measured numbers within a tolerance,
everything else exact, run-to-run noise (dates, addresses) sanitised."""

import copy

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from helpers.page import reproduction


def printed(text):
    return new_output("stream", name="stdout", text=text)


def table(html):
    return new_output("execute_result", data={"text/html": html,
                                              "text/plain": "a table"},
                      execution_count=1)


def figure():
    return new_output("display_data", data={"image/png": "iVBOR",
                                            "text/plain": "<Figure>"})


def glued(name, text):
    return new_output(
        "display_data",
        data={"application/papermill.record/text/markdown": text},
        metadata={"scrapbook": {"name": name, "mime_prefix":
                                "application/papermill.record/"}})


def page(measured="took 980 µs on 2026-12-01", kernels="3 kLoop fusions",
         drawn="passed 40 random cases with seed 1234",
         story="It took 2.8 ms."):
    return new_notebook(cells=[
        new_code_cell("time_it()", outputs=[printed(measured), figure()],
                      metadata={"tags": ["measurement"]}),
        new_code_cell("hlo.fusions(f)", outputs=[table(
            f"<table><tr><td>{kernels}</td></tr></table>")]),
        new_code_cell("check(answer)", outputs=[printed(drawn)],
                      metadata={"tags": ["nbval-ignore-output"]}),
        new_code_cell("glue_story()", outputs=[glued("story", story)],
                      metadata={"tags": ["remove-cell", "measurement"]})])


def test_two_executions_that_agree_reproduce():
    fresh = page(measured="took 1.02 ms on 2026-12-09",  # 4% apart
                 drawn="passed 40 random cases with seed 99",
                 story="It took 2.9 ms.")
    assert reproduction.compare(page(), fresh) == []


def test_a_measured_number_beyond_the_tolerance_is_reported():
    fresh = page(measured="took 3.0 ms on 2026-12-09")
    [found] = reproduction.compare(page(), fresh)
    assert found.cell == 0
    assert "moved by more than 50%: 0.00098 stored, 0.003 now" in str(found)
    assert reproduction.compare(page(), fresh, tolerance=3.0) == []


def test_a_cell_can_state_its_own_tolerance():
    stored = page()
    stored.cells[0].metadata["book"] = {"tolerance": 0.01}
    found = reproduction.compare(stored, page(
        measured="took 1.02 ms on 2026-12-09"))
    assert "more than 1%" in str(found[0])


def test_a_changed_structural_output_is_reported():
    [found] = reproduction.compare(page(), page(kernels="4 kLoop fusions"))
    assert (found.cell, "a number changed: 3 stored, 4 now") == (
        1, str(found).split(": ", 2)[-1])
    [found] = reproduction.compare(page(), page(kernels="3 kInput fusions"))
    assert "the words changed" in str(found) and "kInput" in str(found)


def test_words_count_even_where_numbers_are_drawn_at_random():
    assert reproduction.compare(page(), page(
        drawn="passed 38 random cases with seed 7")) == []
    [found] = reproduction.compare(page(), page(
        drawn="failed 40 random cases with seed 1234"))
    assert found.cell == 2 and "failed" in str(found)


def test_a_glued_sentence_is_compared_like_its_cell():
    [found] = reproduction.compare(page(), page(story="It took 9.9 ms."))
    assert "glued 'story'" in str(found)
    fresh = page()
    fresh.cells[3].outputs = []
    [found] = reproduction.compare(page(), fresh)
    assert "glued 'story' is gone" in str(found)


def test_an_error_a_lost_figure_and_changed_code_are_reported():
    fresh = page()
    fresh.cells[0].outputs = [printed("took 980 µs on 2026-12-01")]
    fresh.cells[1].outputs = [new_output("error", ename="ValueError",
                                         evalue="bad shape", traceback=[])]
    fresh.cells[2].source = "check(other_answer)"
    found = [str(d) for d in reproduction.compare(page(), fresh)]
    assert found == ["code cell 0: 1 figures stored, 0 now",
                     "code cell 1: raised ValueError: bad shape",
                     "code cell 2: its code is not in the new execution"]


def test_run_to_run_noise_is_sanitised():
    assert reproduction.sanitized(
        "<Foo at 0x7f00aa> /tmp/tmpab12/plugins jax 0.11.2, driver "
        "580.159.04, 1 December 2026") == (
        "<Foo at ADDRESS> TMPPATH VERSION, VERSION, DATE")


def test_the_stored_page_is_left_as_it_was():
    stored, fresh = page(), page(kernels="4 kLoop fusions")
    before = copy.deepcopy(stored), copy.deepcopy(fresh)
    reproduction.compare(stored, fresh)
    assert (stored, fresh) == before
    assert isinstance(stored, nbformat.NotebookNode)


def test_the_reference_gpus_result_moves_like_a_measurement():
    """A cell showing the reference GPU's result reads its recording
    elsewhere and this run on that GPU: its numbers move as measured."""
    stored = page()
    stored.cells[1].metadata["tags"] = ["reference-result"]
    assert reproduction.compare(stored, page(
        kernels="3.2 kLoop fusions")) == []
