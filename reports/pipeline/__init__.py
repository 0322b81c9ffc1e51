"""PySpark jobs: run warehouse, conformance report, regression gate, capture conformance (``python -m wirecheck.reports.pipeline``)."""
