"""Learners' attempts at each chapter's exercises, one module per chapter."""
