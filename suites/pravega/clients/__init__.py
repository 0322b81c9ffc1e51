"""Drivers of the real Pravega client (run as child processes by suites/pravega/test_clients.py)."""
