"""Chapter 11 (For facilitators): `kit`, each workshop block's goal, its
exercises, the mistakes participants make in them with what the check says
to each, and the answer key.
"""
