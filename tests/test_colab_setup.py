"""Every chapter's setup cell, run the way Colab runs it: from an empty
working folder, as a Colab runtime (``COLAB_RELEASE_TAG``), with no copy
of the book beside it. It must clone the book, import `helpers` from that
clone, install nothing the environment already has, and say how to keep
one's edits. The clone comes from this checkout (``BOOK_REPOSITORY``), so
the test needs no network; the suite runs it at both JAX ends.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import notebooks  # noqa: E402

REPORT = ("\nimport json\nimport helpers\n"
          "print(json.dumps({'helpers': helpers.__file__, "
          "'installed': installed}))")


def test_the_setup_cell_clones_the_book_and_imports_it_there(tmp_path):
    folder = notebooks.repository_url().split("/")[-1]
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "XLA_FLAGS")}
    env.update(COLAB_RELEASE_TAG="test", JAX_PLATFORMS="cpu",
               BOOK_REPOSITORY=f"file://{ROOT}")
    ran = subprocess.run(
        [sys.executable, "-c", notebooks.setup_cell_source() + REPORT],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    said = ran.stdout.strip().splitlines()
    report = json.loads(said[-1])
    clone = tmp_path / folder
    assert (clone / "helpers").is_dir() and (clone / "chapters").is_dir()
    assert Path(report["helpers"]).resolve().is_relative_to(clone)
    assert report["installed"] == []  # the environment has them all
    assert "To keep your edits, save a copy: File > Save a copy in " \
        "Drive." in said
