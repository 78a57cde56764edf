"""Compile every chapter's GPU programs here for the GPUs Colab lends (a
T4, an L4, an A100) and the H100, and record what came of it for the
how-to page's table (`helpers.workbook.ch00_how_to_use.colab_gpus`):

    .venv/bin/python scripts/colab_costs.py [CHAPTER ...]

With chapters named, only theirs are compiled again; the others' results
are kept. About ten minutes for the whole book on two cores. Run it again
after changing a chapter's programs (its ``gpu_workload`` module): a test
fails while the recording lists other programs than the modules do.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from helpers.measuring import recorded  # noqa: E402
from helpers.workbook.ch00_how_to_use import colab_gpus  # noqa: E402


def main(chapters: list[str]) -> None:
    unknown = sorted(set(chapters) - set(colab_gpus.WORKLOADS))
    if unknown:
        sys.exit(f"no chapter named {', '.join(unknown)}: name one of "
                 f"{', '.join(colab_gpus.WORKLOADS)}.")
    kept = colab_gpus.load() or {}
    new = colab_gpus.measure(chapters or None)
    for gpu, by_chapter in new.items():
        kept.setdefault(gpu, {}).update(by_chapter)
    print(recorded.save(colab_gpus.RESULT, kept))


if __name__ == "__main__":
    main(sys.argv[1:])
