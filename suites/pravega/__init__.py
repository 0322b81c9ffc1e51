"""Pravega segment-store conformance cases."""
