"""Chapter 0 (How to use this book): `exercises`, a first exercise.
"""
