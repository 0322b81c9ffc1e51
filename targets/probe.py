"""Which protocol a host:port speaks, and whether it is still alive.

Probing sends each protocol's harmless ``hello`` on a fresh connection and keeps the protocols whose answer
is right. The liveness probe is the same exchange for one known protocol.
"""

from __future__ import annotations

import socket

from protocols.registry import ProtocolSpec
from reports.transcript import Transcript
from targets.session import Session


def hello_answered(address: tuple[str, int], spec: ProtocolSpec, deadline: float,
                   transcript: Transcript | None = None) -> tuple[bool, str]:
    """(True, "") when ``spec.hello`` gets a correct answer on a new connection; else (False, what happened)."""
    transcript = transcript or Transcript(spec.name, spec.describe)
    try:
        session = Session(address, spec, transcript, deadline=deadline, connect_timeout=deadline)
    except OSError as exc:
        return False, f"cannot connect: {exc}"
    with session:
        reply = session.request(spec.hello())
    if reply.is_frame and spec.is_hello_answer(reply.frame):
        return True, ""
    if reply.is_frame:
        return False, f"wrong answer to the liveness request: {spec.describe(reply.frame)}"
    return False, str(reply)


def detect(address: tuple[str, int], specs: dict[str, ProtocolSpec], deadline: float = 1.0) -> list[str]:
    """Every protocol in ``specs`` whose hello the target answers correctly."""
    found = []
    for name, spec in specs.items():
        ok, _ = hello_answered(address, spec, deadline)
        if ok:
            found.append(name)
    return found


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{text!r} is not host:port")
    host = host.strip("[]")
    socket.getaddrinfo(host, int(port))  # fail early on an unresolvable name
    return host, int(port)
