"""Drivers of the real Fluvio client (run as child processes by suites/fluvio/test_clients.py)."""
