"""Keep the chapters in shape: pair, set up, execute.

Authors edit the MyST twin ``chapters/NN_slug.md``; the ``.ipynb`` carries
the outputs that the book, Colab and nbval use. This script:

* ``sync``: makes each chapter's twins agree, keeping edits made on either
  side as ``jupytext --sync`` does: when the inputs differ, the file
  modified last (an ``.ipynb`` saved from Jupyter or Colab, or the ``.md``)
  supplies them; stored outputs of unchanged cells are kept; the standard
  setup cell goes first (with the repository URL from ``_config.yml``) and
  the Colab metadata on;
* ``execute [NN_slug ...]``: runs chapters top to bottom and stores the
  outputs, stamped with who executed them, when, in how many seconds,
  and the GPU's clocks, power and temperature before and after
  (`helpers.page.executions.stamp`); on a GPU with ``BOOK_RECORD=1`` the
  executed notebook is also kept as that GPU's page,
  ``recorded/<device>/<chapter>.ipynb``, which the book shows while the
  chapter's code stays the same;
* ``check``: exits non-zero when a chapter is out of sync (for tests).

Usage: python scripts/notebooks.py sync|execute|check [chapter ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # helpers, on a host where it is not installed
CHAPTERS = ROOT / "chapters"
FORMATS = "ipynb,md:myst"
COLAB_METADATA = {
    "accelerator": "GPU",
    "colab": {"gpuType": "T4", "provenance": []},
    "kernelspec": {"display_name": "Python 3", "language": "python",
                   "name": "python3"},
}

SETUP_TEMPLATE = '''\
# Setup: make `helpers` importable on Colab, in a checkout or a workshop.
import os
import subprocess
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# BOOK_REPOSITORY: a fork or a mirror of the book to clone instead
REPO = os.environ.get("BOOK_REPOSITORY",
                      "{url}")
ON_COLAB = "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
if ON_COLAB and not os.path.isdir("{name}"):
    subprocess.run(["git", "clone", "-q", "--depth", "1", REPO,
                    "{name}"], check=True)
for path in ("{name}", ".."):
    if os.path.isdir(os.path.join(path, "helpers")):
        sys.path.insert(0, os.path.abspath(path))
        break
from helpers.measuring import machine  # noqa: E402
from helpers.page import tables  # noqa: E402

# On Colab, install what it lacks; elsewhere this does nothing.
installed = machine.colab_setup()
# Tables print rounded and without a 0..n-1 index column.
shows_tidy_tables = tables.tidy_display()'''


def repository_url() -> str:
    """The repository URL, from the one place that sets it."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"].rstrip("/")


def setup_cell_source() -> str:
    """The first code cell of every chapter."""
    url = repository_url()
    return SETUP_TEMPLATE.format(url=url, name=url.split("/")[-1])


def chapter_paths(names: list[str] | None = None,
                  folder: Path = CHAPTERS) -> list[Path]:
    """The ``.md`` sources of the chapters named (all by default)."""
    if not names:
        return sorted(folder.glob("[0-9][0-9]_*.md"))
    paths = [folder / f"{Path(n).stem}.md" for n in names]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        sys.exit(f"no such chapter: {', '.join(missing)}")
    return paths


def edited_side(md_path: Path) -> Path:
    """The twin whose inputs count: the ``.ipynb`` when it was modified
    after the ``.md`` and its inputs differ (an edit made in Jupyter or
    Colab), else the ``.md``."""
    ipynb = md_path.with_suffix(".ipynb")
    if not ipynb.exists() or \
            ipynb.stat().st_mtime <= md_path.stat().st_mtime:
        return md_path
    stored = nbformat.read(ipynb, as_version=4)
    differs = cell_inputs(jupytext.read(md_path)) != cell_inputs(stored)
    return ipynb if differs else md_path


def expected_notebook(md_path: Path) -> nbformat.NotebookNode:
    """The notebook the twins describe (inputs from `edited_side`), set
    up and with metadata, carrying the outputs stored in the ``.ipynb``."""
    notebook = jupytext.read(edited_side(md_path))
    code = [c for c in notebook.cells if c.cell_type == "code"]
    if not code:
        raise SystemExit(f"{md_path.name} has no code cells")
    code[0].source = setup_cell_source()
    code[0].metadata["tags"] = ["hide-input"]
    notebook.metadata.update(COLAB_METADATA)
    notebook.metadata.setdefault("jupytext", {})["formats"] = FORMATS
    ipynb = md_path.with_suffix(".ipynb")
    if ipynb.exists():
        stored = nbformat.read(ipynb, as_version=4)
        notebook = jupytext.combine.combine_inputs_with_outputs(
            notebook, stored, fmt="md:myst")
    return notebook


def write_pair(notebook: nbformat.NotebookNode, md_path: Path) -> None:
    """Write the ``.ipynb`` and its ``.md`` twin from one notebook."""
    jupytext.write(notebook, md_path.with_suffix(".ipynb"))
    jupytext.write(notebook, md_path, fmt="md:myst")


def sync(paths: list[Path]) -> None:
    for md_path in paths:
        write_pair(expected_notebook(md_path), md_path)
        print(f"synced {md_path.stem}")


# Run in the chapter's kernel after its last cell: the provenance of the
# machine that executed it, as the kernel itself sees it.
_EXECUTOR_PROBE = ("import json\nfrom helpers.measuring import machine\n"
                   "print(json.dumps(machine.describe()))")


def execute(paths: list[Path]) -> None:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    for md_path in paths:
        notebook = expected_notebook(md_path)
        seconds = execute_notebook(notebook, md_path.parent)
        write_pair(notebook, md_path)
        kept = keep_as_page(notebook, md_path.stem)
        print(f"executed {md_path.stem} in {seconds:.1f} s"
              + (f"; kept as {kept}" if kept else ""))


def execute_notebook(notebook: nbformat.NotebookNode, folder: Path) -> float:
    """Run ``notebook`` in a fresh kernel in ``folder``, store its outputs
    and stamp it with its execution (`helpers.page.executions.stamp`);
    returns the seconds it took."""
    from nbclient import NotebookClient

    from helpers.measuring import gpu_state
    from helpers.page import executions

    # No widget state is stored: the book draws each widget's static
    # view, and a live front end rebuilds the widget when run.
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop(executions.KEY, None)
    probe = nbformat.v4.new_code_cell(_EXECUTOR_PROBE)
    notebook.cells.append(probe)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    gpu_start = gpu_state.snapshot()
    begin = time.perf_counter()
    try:
        NotebookClient(notebook, timeout=900, kernel_name="python3",
                       store_widget_state=False,
                       resources={"metadata": {"path": str(folder)}}
                       ).execute()
    finally:
        notebook.cells.remove(probe)
    seconds = time.perf_counter() - begin
    executor = json.loads("".join(
        o.get("text", "") for o in probe.outputs if o.output_type == "stream"))
    executions.stamp(notebook, executor=executor, started=started,
                     seconds=seconds, gpu_start=gpu_start,
                     gpu_end=gpu_state.snapshot())
    return seconds


def keep_as_page(notebook: nbformat.NotebookNode, chapter: str
                 ) -> Path | None:
    """On a GPU with ``BOOK_RECORD=1``, keep the executed ``notebook`` as
    that GPU's page of ``chapter``; elsewhere keep nothing."""
    from helpers.measuring import machine
    from helpers.page import executions

    run = executions.execution(notebook)
    if run is None:
        raise ValueError(f"{chapter}: the notebook to keep as a page has "
                         "no execution stamp: execute it with "
                         "execute_notebook first, which stamps it.")
    executor = run["executor"]
    if os.environ.get("BOOK_RECORD") != "1" or executor["backend"] != "gpu":
        return None
    path = executions.page_path(chapter, machine.device_slug(executor),
                                writing=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path


def check(paths: list[Path]) -> int:
    """Number of chapters whose ``.ipynb`` inputs differ from the ``.md``."""
    stale = 0
    for md_path in paths:
        want = jupytext.read(md_path)
        have = nbformat.read(md_path.with_suffix(".ipynb"), as_version=4)
        if cell_inputs(want) != cell_inputs(have):
            print(f"{md_path.stem}: .ipynb and .md differ; run "
                  "`make sync`")
            stale += 1
    return stale


def cell_inputs(notebook: nbformat.NotebookNode) -> list[tuple]:
    """What must agree between the twins: cell types, sources and tags
    (the setup cell, which sync writes, left out)."""
    code = [c for c in notebook.cells if c.cell_type == "code"]
    setup = code[0] if code else None
    return [(c.cell_type, c.source.strip(),
             tuple(c.metadata.get("tags", []))) for c in notebook.cells
            if c is not setup]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["sync", "execute", "check"])
    parser.add_argument("chapters", nargs="*")
    parser.add_argument("--chapters-dir", type=Path, default=CHAPTERS,
                        help="where the chapters are (tests use a copy)")
    args = parser.parse_args()
    paths = chapter_paths(args.chapters, args.chapters_dir)
    if args.command == "sync":
        sync(paths)
    elif args.command == "execute":
        execute(paths)
    else:
        sys.exit(1 if check(paths) else 0)


if __name__ == "__main__":
    main()
