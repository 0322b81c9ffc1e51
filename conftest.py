"""Root conftest: loads wirecheck's pytest plugin (options, target fixtures, verdicts, reports) when running from
a checkout in which wirecheck is not installed; an installed wirecheck registers it through its pytest11 entry
point, and registering the same module twice is an error."""

from importlib.metadata import entry_points

PLUGIN = "wirecheck.targets.plugin"
pytest_plugins = [] if any(ep.value == PLUGIN for ep in entry_points(group="pytest11")) else [PLUGIN]
