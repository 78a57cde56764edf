"""Chapter 9 (Reproducibility): `goals`, every chapter's headline goal read
back from its executed notebook.
"""
