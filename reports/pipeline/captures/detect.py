"""Which protocol a flow speaks: the server port first (a port map), else the first bytes the client sent."""

from __future__ import annotations

from protocols.registry import all_specs


def default_ports() -> dict[int, str]:
    """Each protocol's default server port (protocols.<name>.SPEC)."""
    return {spec.default_port: name for name, spec in all_specs().items()}


def _looks_rustlog(data: bytes) -> bool:
    # u32 length, then a JSON object: the payload's first byte is "{"
    return len(data) >= 5 and data[4:5] == b"{" and 1 <= int.from_bytes(data[:4], "big") <= 10_485_760


def _looks_kafka(data: bytes) -> bool:
    # int32 size, int16 api key known to the message definitions, int16 version, int32 correlation id
    if len(data) < 12:
        return False
    from protocols.kafka import messages

    size = int.from_bytes(data[:4], "big", signed=True)
    api_key = int.from_bytes(data[4:6], "big", signed=True)
    version = int.from_bytes(data[6:8], "big", signed=True)
    return 8 <= size <= 104_857_600 and api_key in messages.api_keys() and 0 <= version <= 50


SNIFFERS = {"rustlog": _looks_rustlog, "kafka": _looks_kafka}


def detect(server_port: int, client_bytes: bytes, ports: dict[int, str]) -> tuple[str | None, str]:
    """(protocol or None, how it was told: "port", "bytes" or "unknown")."""
    if server_port in ports:
        return ports[server_port], "port"
    for name, looks in SNIFFERS.items():
        try:
            if looks(client_bytes):
                return name, "bytes"
        except Exception:  # a sniffer never decides on an exception
            continue
    return None, "unknown"
