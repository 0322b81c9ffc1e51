"""What the harness needs to know about each protocol, in one object per protocol.

The plugin, the prober and the capture reassembler are protocol-agnostic; they ask a ``ProtocolSpec`` how to
frame the stream, what a harmless known-good request looks like (for probing and liveness), and how to show a
frame to a human.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

from protocols.clauses import Catalogue
from protocols.framing import Framing


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    framing: Framing
    default_port: int
    catalogue: Catalogue
    max_body: int  # the largest body a conforming peer may send us; larger claims are a violation
    hello: Callable[[], bytes]  # a harmless, always-valid request (probe and liveness)
    is_hello_answer: Callable[[bytes], bool]  # does this whole frame answer ``hello`` correctly?
    describe: Callable[[bytes], str]  # one whole frame -> readable text, never raises


def all_specs() -> dict[str, ProtocolSpec]:
    """Every protocol package under ``protocols/`` that exposes ``SPEC``."""
    import protocols

    specs = {}
    for info in pkgutil.iter_modules(protocols.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"protocols.{info.name}")
        spec = getattr(module, "SPEC", None)
        if spec is not None:
            specs[spec.name] = spec
    return specs


def spec_for(name: str) -> ProtocolSpec:
    specs = all_specs()
    if name not in specs:
        raise KeyError(f"unknown protocol {name!r}; known: {sorted(specs)}")
    return specs[name]
