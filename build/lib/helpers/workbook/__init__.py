"""The book's exercises, one module per chapter.

Each module defines `Exercise` objects (from `helpers.exercises`), the
starter each learner begins from, and a reference solution. Tests check
that every solution passes and every untouched starter fails.
"""
