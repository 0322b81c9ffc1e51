"""The registry: every protocol package under ``protocols/`` that exposes ``SPEC`` (a :class:`ProtocolSpec`).

Shared code (plugin, prober, reports, pipeline, self-tests) iterates over it and never names a protocol.
A protocol defined elsewhere joins through ``WIRECHECK_PROTOCOLS`` (comma-separated modules exposing
``SPEC``; it reaches xdist workers and child processes, being an environment variable) or, inside one process,
through :func:`registered`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from contextlib import contextmanager

from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec

__all__ = ["CaptureSupport", "Endpoint", "ProtocolSpec", "all_specs", "spec_for", "registered"]

ENV = "WIRECHECK_PROTOCOLS"
_EXTRA: dict[str, ProtocolSpec] = {}  # protocols registered at run time (tests)


def all_specs() -> dict[str, ProtocolSpec]:
    """Every protocol package under ``protocols/`` that exposes ``SPEC``."""
    import protocols

    specs = {}
    for info in pkgutil.iter_modules(protocols.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"wirecheck.protocols.{info.name}")
        spec = getattr(module, "SPEC", None)
        if spec is not None:
            specs[spec.name] = spec
    for module_name in filter(None, (m.strip() for m in os.environ.get(ENV, "").split(","))):
        spec = importlib.import_module(module_name).SPEC
        specs[spec.name] = spec
    specs.update(_EXTRA)
    return specs


def spec_for(name: str) -> ProtocolSpec:
    specs = all_specs()
    if name not in specs:
        raise KeyError(f"unknown protocol {name!r}; known: {sorted(specs)}")
    return specs[name]


@contextmanager
def registered(spec: ProtocolSpec):
    """Register ``spec`` for the duration of a ``with`` block (a protocol defined outside ``protocols/``)."""
    _EXTRA[spec.name] = spec
    try:
        yield spec
    finally:
        _EXTRA.pop(spec.name, None)
