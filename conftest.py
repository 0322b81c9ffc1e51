"""Root conftest: loads wirecheck's pytest plugin (options, target fixtures, verdicts, reports)."""

pytest_plugins = ["targets.plugin"]
