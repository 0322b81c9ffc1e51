"""An independent Fluvio SPU server written from the wirecheck research notes only.

Run with ``python -m tests.independent.fluvio --help``.
"""
