"""Per-protocol capture checks: ``check(client_frames, server_frames) -> list[Finding]``.

Adding a protocol = one module here and one line in ``CHECKERS``; a protocol without a checker still gets
its frames split and its framing checked.
"""

from __future__ import annotations

import importlib

CHECKERS = {
    "rustlog": "reports.pipeline.captures.checks.rustlog",
    "kafka": "reports.pipeline.captures.checks.kafka",
}


def checker_for(protocol: str):
    module = CHECKERS.get(protocol)
    return None if module is None else importlib.import_module(module).check
