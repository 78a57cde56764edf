"""The strict check (helpers.page.reproduction) on two real executions of
one chapter here: they reproduce each other, and a changed structural
output is caught. Chapter 7 runs on simulated devices and compiled
programs, so its structure is the same on any machine; its measured
numbers (the psum sweep's times) move with the load."""

import copy

import pytest

from helpers.page import reproduction
from scripts import notebooks

pytestmark = pytest.mark.slow

CHAPTER = "07_multi_gpu"
# Two executions on a shared CPU of two cores, beside the test suite's
# other processes: a measured time may move by several times its value
# (on the GPU the check's own tolerance applies).
CPU_TOLERANCE = 3.0


@pytest.fixture(scope="module")
def executions():
    """The chapter executed twice, each in a fresh kernel, outputs kept in
    memory (the stored chapter stays as it is)."""
    md_path = notebooks.CHAPTERS / f"{CHAPTER}.md"
    runs = []
    for _ in range(2):
        notebook = notebooks.expected_notebook(md_path)
        notebooks.execute_notebook(notebook, md_path.parent)
        runs.append(notebook)
    return runs


def test_two_executions_reproduce_each_other(executions):
    first, second = executions
    differences = reproduction.compare(first, second,
                                       tolerance=CPU_TOLERANCE)
    assert differences == [], "\n".join(map(str, differences))


def structural_cell(notebook):
    """The index among code cells, and the cell, of the first output that
    is neither a measurement nor drawn at random and holds a number."""
    code = [c for c in notebook.cells if c.cell_type == "code"]
    for index, cell in enumerate(code):
        tags = set(cell.metadata.get("tags", []))
        if tags & {"measurement", "reference-result", "nbval-ignore-output",
                   "nbval-skip"}:
            continue
        for output in cell.outputs:
            if output.get("output_type") == "stream" and any(
                    ch.isdigit() for ch in output["text"]):
                return index, output
    raise AssertionError(f"{CHAPTER} prints no structural number")


def test_a_changed_structural_output_is_caught(executions):
    first, second = executions
    changed = copy.deepcopy(second)
    index, output = structural_cell(changed)
    digit = next(ch for ch in output["text"] if ch.isdigit())
    output["text"] = output["text"].replace(
        digit, str((int(digit) + 1) % 10), 1)
    found = reproduction.compare(first, changed, tolerance=CPU_TOLERANCE)
    assert [d.cell for d in found] == [index]
    assert "a number changed" in str(found[0])
