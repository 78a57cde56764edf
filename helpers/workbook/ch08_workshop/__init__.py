"""Chapter 8 (Workshop): `workshop`, the kit a teacher runs.
"""
