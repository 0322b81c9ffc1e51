"""Which protocol a flow speaks: the server port first (a port map), else the first bytes the client sent."""

from __future__ import annotations

import functools
import importlib

from wirecheck.protocols.registry import all_specs


def default_ports() -> dict[int, str]:
    """Every endpoint's default server port, for every registered protocol."""
    return {endpoint.default_port: name for name, spec in all_specs().items() for endpoint in spec.endpoints}


@functools.lru_cache(maxsize=None)
def capture_module(protocol: str):
    """The protocol's capture module (sniff, check, screen), or None when it has no capture support."""
    spec = all_specs().get(protocol)
    if spec is None or spec.capture is None:
        return None
    return importlib.import_module(spec.capture.module)


def detect(server_port: int, client_bytes: bytes, ports: dict[int, str]) -> tuple[str | None, str]:
    """(protocol or None, how it was told: "port", "bytes" or "unknown")."""
    if server_port in ports:
        return ports[server_port], "port"
    for name in sorted(all_specs()):
        module = capture_module(name)
        if module is None:
            continue
        try:
            if module.sniff(client_bytes):
                return name, "bytes"
        except Exception:  # a sniffer never decides on an exception
            continue
    return None, "unknown"
