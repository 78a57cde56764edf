"""The checker's own proof: programs written for it, none of them the
field guide's cases or the book's chapters' code.

`SLOW` holds programs with a slow pattern, in forms the field guide does
not show: state in NamedTuples and dataclasses, loops nested in vmap,
accidental float64, callbacks in vmap, collectives inside shard_map,
linear algebra, the shapes of public JAX issues. `GOOD` holds ordinary
model code a GPU runs well: training steps, a GRU, a decoding step's attention,
convolutions, FFTs, LayerNorm, sorted segment sums, a while loop of heavy
steps. `score` examines every one and counts what the checker got right:
`Score.recall`, the slow programs whose pattern it found, and
`Score.clean`, the good programs it raised no slow finding on.
"""

from __future__ import annotations

import dataclasses

import jax
import pandas as pd

from helpers.examine import examine
from helpers.examine.findings import PATTERNS
from helpers.workbook.ch10_field_guide.checker_suite.good import GOOD
from helpers.workbook.ch10_field_guide.checker_suite.program import Program
from helpers.workbook.ch10_field_guide.checker_suite.slow import SLOW

__all__ = ["GOOD", "SLOW", "Program", "Score", "run", "score"]


@dataclasses.dataclass(frozen=True)
class Score:
    """What the checker made of the suite: for each slow program, whether
    it found its pattern; for each good one, the slow findings it raised
    (none, if it is right)."""

    found: dict[str, bool]
    alarms: dict[str, list[str]]

    @property
    def recall(self) -> float:
        """The share of slow programs whose pattern was found."""
        return self.found_count / len(self.found)

    @property
    def clean(self) -> float:
        """The share of good programs without a slow finding."""
        return self.clean_count / len(self.alarms)

    @property
    def found_count(self) -> int:
        """The slow programs whose pattern was found."""
        return sum(self.found.values())

    @property
    def clean_count(self) -> int:
        """The good programs without a slow finding."""
        return sum(not a for a in self.alarms.values())

    def table(self) -> pd.DataFrame:
        """One row per program: its kind (slow or good), the pattern it
        shows, what the checker found, and whether that is right."""
        expected = {p.name: PATTERNS[p.expected].title for p in SLOW
                    if p.expected}
        rows = [{"program": name, "kind": "slow",
                 "its pattern": expected[name],
                 "checker": "found it" if hit else "missed it",
                 "right": hit} for name, hit in self.found.items()]
        rows += [{"program": name, "kind": "good", "its pattern": "",
                  "checker": ", ".join(PATTERNS[a].title for a in alarms)
                  or "nothing slow", "right": not alarms}
                 for name, alarms in self.alarms.items()]
        return pd.DataFrame(rows)

    @property
    def precision(self) -> float:
        """Of the programs the checker called slow, the share that are."""
        hits = self.found_count
        false = len(self.alarms) - self.clean_count
        return hits / (hits + false) if hits + false else 1.0


def run(program: Program, gpu: bool = True) -> list[str]:
    """The slow patterns `examine` finds in ``program``."""
    with jax.enable_x64(program.x64):
        calls = program.calls() if program.calls else None
        return examine(program.fn, *program.arguments(), calls=calls,
                       gpu=gpu).patterns


def score(gpu: bool = True) -> Score:
    """Examine every program of the suite."""
    return Score(
        found={p.name: p.expected in run(p, gpu) for p in SLOW},
        alarms={p.name: run(p, gpu) for p in GOOD})
