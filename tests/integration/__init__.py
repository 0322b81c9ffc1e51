"""Tests that start processes: pytest runs of a suite (the plugin, verdicts, ordering, reports), reference brokers,
servers and real clients. tests/unit/ stays in-process and fast."""
