"""Fluvio SPU conformance cases (protocols/fluvio/clauses.py)."""
