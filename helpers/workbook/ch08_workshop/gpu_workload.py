"""The programs the workshop page runs on a GPU (`helpers.xla.gpu_floors`),
for the how-to page's table of Colab's GPUs: its kit check runs every
exercise's solution and starter through its check, and only exercise
2.1's speed check moves more than a few kilobytes.
"""

from __future__ import annotations

from helpers.workbook.ch02_fusion.gpu_workload import exercise_checks
from helpers.xla.gpu_floors import Program


def programs() -> list[Program]:
    """Exercise 2.1's check of its solution and of its starter."""
    return exercise_checks(2)


def facilitators() -> list[Program]:
    """The facilitators' page: exercise 2.1's check of its three wrong
    attempts and of its solution."""
    return exercise_checks(4)
