"""How bytes reach a target: TCP streams with optional TLS, framed sessions, HTTP/1.1 (h11) and h2c (h2).

An endpoint's ``transport`` picks the session class (:func:`open_session`): ``framed`` ->
:class:`targets.session.Session`, ``http1`` -> :class:`targets.transport.http1.Http1Session`, ``h2c`` ->
:class:`targets.transport.h2c.H2Session`. All of them record every byte in the case's transcript.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.tls import client_context

if TYPE_CHECKING:  # the session modules import this one
    from wirecheck.targets.session import Session
    from wirecheck.targets.transport.h2c import H2Session
    from wirecheck.targets.transport.http1 import Http1Session

__all__ = ["client_context", "endpoint_of", "open_session"]


def endpoint_of(spec_or_endpoint: ProtocolSpec | Endpoint) -> Endpoint:
    """An endpoint as given, or a spec's primary endpoint (callers written for one-endpoint protocols)."""
    if isinstance(spec_or_endpoint, Endpoint):
        return spec_or_endpoint
    return spec_or_endpoint.primary


def open_session(address: tuple[str, int], spec_or_endpoint: ProtocolSpec | Endpoint, transcript: Transcript,
                 deadline: float = 2.0, connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                 server_hostname: str | None = None) -> Session | Http1Session | H2Session:
    """A connected session of the endpoint's transport (a caller narrows it with ``isinstance``)."""
    endpoint = endpoint_of(spec_or_endpoint)
    cls: type[Session | Http1Session | H2Session]
    if endpoint.transport == "framed":
        from wirecheck.targets.session import Session as cls
    elif endpoint.transport == "http1":
        from wirecheck.targets.transport.http1 import Http1Session as cls
    else:
        from wirecheck.targets.transport.h2c import H2Session as cls
    return cls(address, endpoint, transcript, deadline=deadline, connect_timeout=connect_timeout, tls=tls,
               server_hostname=server_hostname)
