"""What a given target is, found once per run: one line per target for the user, and the protocols it speaks.

Every known endpoint's hello goes out at once, each on its own connection, so a silent target costs one deadline
per connection (in parallel), never one per case. When nothing answers right, the line says what happened
instead: connection refused, accepts but never answers, closes without answering, answers HTTP.
"""

from __future__ import annotations

import socket
import ssl
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from wirecheck.protocols.spec import ProtocolSpec
from wirecheck.targets import probe
from wirecheck.targets.runner.health import stopped_answering


@dataclass(frozen=True)
class Survey:
    address: tuple[str, int]
    protocols: tuple[str, ...]  # the protocols whose hello got a right answer
    found: str  # what the probe found, e.g. "answers like rustlog", "connection refused"
    #: a named protocol's target that answers like no known protocol, but answers (a wrong frame; HTTP where the
    #: protocol speaks HTTP): it runs as named
    answers: bool = False

    @property
    def text(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"


def survey(address: tuple[str, int], specs: dict[str, ProtocolSpec], deadline: float,
           tls: ssl.SSLContext | None = None, named: str | None = None) -> Survey:
    """Probe ``address``. With ``named``, only that protocol is tried first; the others only to say what the
    target speaks instead."""
    refused = _connect_problem(address, deadline)
    if refused:
        return Survey(address, (), refused)
    if named is not None:
        ok, _ = _any_hello(address, specs[named], deadline, tls)
        if ok:
            return Survey(address, (named,), f"answers like {named}")
    results, http, speaks_tls = _all_hellos(address, specs, deadline, tls)
    found = tuple(dict.fromkeys(name for name, ok, _ in results if ok))
    if found:
        return Survey(address, found, "answers like " + ", ".join(found))
    if speaks_tls:
        return Survey(address, (), "answers TLS (give --target-tls, with --target-ca or --target-insecure)")
    return Survey(address, (), _what_instead([what for _, _, what in results], http, deadline),
                  answers=named is not None and _answers_as(specs[named], results, http))


def _answers_as(spec: ProtocolSpec, results: list, http: bool) -> bool:
    """Does a target that answers like no known protocol answer at all, in a way the named ``spec`` could (an HTTP
    answer only if the protocol has HTTP endpoints)? Then it runs as named, its broken hello a failure to report."""
    if http:
        return any(endpoint.transport != "framed" for endpoint in spec.endpoints)
    return any(not stopped_answering(what) for _, _, what in results)


def _connect_problem(address: tuple[str, int], deadline: float) -> str:
    try:
        socket.create_connection(address, timeout=deadline).close()
    except ConnectionRefusedError:
        return "connection refused"
    except TimeoutError:
        return f"no TCP answer within {deadline:g} s"
    except OSError as exc:
        return f"cannot connect: {exc.strerror or exc}"
    return ""


def _any_hello(address, spec: ProtocolSpec, deadline: float, tls) -> tuple[bool, str]:
    what = ""
    for endpoint in spec.endpoints:
        if endpoint.hello is not None:
            ok, what = probe.hello_answered(address, endpoint, deadline, tls=tls)
            if ok:
                return True, ""
    return False, what


def _all_hellos(address, specs: dict[str, ProtocolSpec], deadline: float, tls) -> tuple[list, bool, bool]:
    """Every endpoint's hello, an HTTP request and (in plaintext) a TLS handshake, at once:
    ([(protocol, answered right, what)], answers HTTP, speaks TLS)."""
    jobs = [(name, endpoint) for name, spec in specs.items() for endpoint in spec.endpoints
            if endpoint.hello is not None]
    with ThreadPoolExecutor(max_workers=len(jobs) + 2) as pool:
        http = pool.submit(_answers_http, address, deadline, tls)
        handshake = pool.submit(_speaks_tls, address, deadline) if tls is None else None
        answers = list(pool.map(lambda job: probe.hello_answered(address, job[1], deadline, tls=tls), jobs))
        return ([(name, ok, what) for (name, _), (ok, what) in zip(jobs, answers)], http.result(),
                handshake is not None and handshake.result())


def _what_instead(failures: list[str], http: bool, deadline: float) -> str:
    if http:
        return "answers HTTP"
    if failures and all(what.startswith("silence") for what in failures):
        return f"accepts but never answers within {deadline:g} s"
    if failures and all(what.startswith(("the connection closed", "the connection reset")) for what in failures):
        return "accepts, then closes without answering"
    return "answers, but like no known protocol (" + (failures[0] if failures else "no hello to send") + ")"


def _answers_http(address, deadline: float, tls) -> bool:
    try:
        with socket.create_connection(address, timeout=deadline) as raw:
            sock = tls.wrap_socket(raw, server_hostname=address[0]) if tls is not None else raw
            sock.sendall(b"GET / HTTP/1.1\r\nHost: " + address[0].encode() + b"\r\nConnection: close\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except (OSError, ssl.SSLError):
        return False


def _speaks_tls(address, deadline: float) -> bool:
    """A target given without --target-tls that completes a TLS handshake (its certificate is not checked: this
    only names the likely mistake)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection(address, timeout=deadline) as raw, context.wrap_socket(raw):
            return True
    except (OSError, ssl.SSLError):
        return False
