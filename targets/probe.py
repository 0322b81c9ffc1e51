"""Which protocol a host:port speaks, and whether it is still alive.

Probing sends each endpoint's harmless ``hello`` on a fresh connection and keeps the endpoints whose answer is
right. The liveness probe is the same exchange for one known endpoint. On a framed endpoint ``hello()`` is a
whole request frame and ``is_hello_answer`` judges the answer frame; on an HTTP endpoint (http1, h2c)
``hello()`` is the path of a GET and ``is_hello_answer`` judges the body of its 2xx response.
"""

from __future__ import annotations

import socket
import ssl

from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.session import Session
from wirecheck.targets.transport.outcome import Reply
from wirecheck.targets.transport import endpoint_of, open_session
from wirecheck.targets.transport.http import HttpReply


def hello_answered(address: tuple[str, int], spec: ProtocolSpec | Endpoint, deadline: float,
                   transcript: Transcript | None = None, tls: ssl.SSLContext | None = None,
                   server_hostname: str | None = None) -> tuple[bool, str]:
    """(True, "") when the endpoint's hello gets a correct answer on a new connection; else (False, what
    happened). A spec means its primary endpoint."""
    endpoint = endpoint_of(spec)
    hello, is_hello_answer = endpoint.hello, endpoint.is_hello_answer
    if hello is None or is_hello_answer is None:  # the two go together (Endpoint.__post_init__)
        return False, f"endpoint {endpoint.name} has no hello to probe with"
    transcript = transcript or Transcript(spec.name, endpoint.describe, endpoint.describe_answer)
    try:
        session = open_session(address, endpoint, transcript, deadline=deadline, connect_timeout=deadline, tls=tls,
                               server_hostname=server_hostname)
    except OSError as exc:  # refused, unreachable, or a TLS handshake that failed
        return False, f"cannot connect: {exc}"
    reply: Reply | HttpReply
    with session:
        if isinstance(session, Session):  # a framed endpoint
            reply = session.request(hello())
            answer = reply.frame if reply.is_frame else None
        else:
            reply = session.request("GET", hello().decode("latin-1"))
            ok = reply.complete and reply.status is not None and 200 <= reply.status < 300
            answer = reply.body if ok else None
    if answer is not None and is_hello_answer(answer):
        return True, ""
    if answer is not None:
        return False, f"wrong answer to the liveness request: {(endpoint.describe_answer or endpoint.describe)(answer)}"
    return False, str(reply)


def detect_endpoints(address: tuple[str, int], specs: dict[str, ProtocolSpec], deadline: float = 1.0,
                     tls: ssl.SSLContext | None = None) -> list[tuple[str, str]]:
    """Every (protocol, endpoint name) among ``specs`` whose hello the target answers correctly."""
    return [(name, endpoint.name) for name, spec in specs.items() for endpoint in spec.endpoints
            if endpoint.hello is not None and hello_answered(address, endpoint, deadline, tls=tls)[0]]


def detect(address: tuple[str, int], specs: dict[str, ProtocolSpec], deadline: float = 1.0,
           tls: ssl.SSLContext | None = None) -> list[str]:
    """Every protocol in ``specs`` one of whose endpoints answers its hello correctly."""
    found = []
    for name, _ in detect_endpoints(address, specs, deadline, tls):
        if name not in found:
            found.append(name)
    return found


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{text!r} is not host:port")
    host = host.strip("[]")
    socket.getaddrinfo(host, int(port))  # fail early on an unresolvable name
    return host, int(port)
