"""Check your own code: `examine(fn, *args)` finds the field guide's slow
patterns in a function and says, for each, the evidence, how sure it is,
the fix and the section to read.

From a terminal: ``python -m helpers.examine module:function``.
"""

from helpers.examine.checker import ExamineError, examine
from helpers.examine.findings import PATTERNS, Finding, Report

__all__ = ["examine", "ExamineError", "Finding", "Report", "PATTERNS"]
