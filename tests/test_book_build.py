"""The book builds from the stored outputs, with warnings as errors."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_book_builds_without_warnings(tmp_path):
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book) if jupyter_book.exists() else
               shutil.which("jupyter-book"), "build", str(ROOT),
               "--path-output", str(tmp_path), "--warningiserror",
               "--nitpick", "--keep-going"]
    result = subprocess.run(command, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr
    html = tmp_path / "_build" / "html"
    measuring = (html / "chapters" / "01_measuring.html").read_text()
    # the prose carries the glued numbers, and the Colab button is there
    assert "GB/s" in measuring and "colab.research.google.com" in measuring
    # the reference GPU's result is shown with its provenance, or said
    # to be missing
    recorded = (ROOT / "recorded" / "nvidia-h100-80gb-hbm3" /
                "01_measuring" / "summary.json").exists()
    assert ("recorded: NVIDIA H100 80GB HBM3" if recorded
            else "no recording of") in measuring
    # every widget is drawn from its static view: no dead slider, no
    # empty box waiting for a widget manager that has no kernel to talk to
    for page in (html / "chapters").glob("*.html"):
        assert "widget-view+json" not in page.read_text(), page.name
    fusion = (html / "chapters" / "02_fusion.html").read_text()
    assert "Controls, live when the page runs" in fusion
