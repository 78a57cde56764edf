"""Attempts at every exercise as learners write them: at least three wrong
ones, each with the hint the check must give it, and two right ones
written differently from the solution.

One module per chapter (``ch02`` ...), each with an ``ATTEMPTS`` table:
``{answer name: {"starter": hint, "wrong": {attempt: hint},
"right": [attempt, ...]}}``. The tests run every attempt through its
exercise's check (tests/unit/grading/test_exercise_attempts.py), and the
facilitators' page shows the wrong ones as the common mistakes of each
block, with what the check says to each (`mistakes`).
"""

from __future__ import annotations

from typing import Any

from helpers.workbook.ch08_workshop.attempts import (
    ch00,
    ch01,
    ch02,
    ch03,
    ch04,
    ch05,
    ch06,
    ch07,
)

ATTEMPTS: dict[str, dict[str, Any]] = {
    **ch00.ATTEMPTS, **ch01.ATTEMPTS, **ch02.ATTEMPTS, **ch03.ATTEMPTS,
    **ch04.ATTEMPTS, **ch05.ATTEMPTS, **ch06.ATTEMPTS, **ch07.ATTEMPTS}
