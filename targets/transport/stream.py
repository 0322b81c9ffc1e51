"""One TCP connection (optionally TLS) whose reads say what happened: bytes, silence, EOF or a reset.

Every session type (framed, HTTP/1.1, h2c) sits on a :class:`Stream`, so connecting, TLS, the ``connect``
transcript event and the classification of a dead peer are written once.
"""

from __future__ import annotations

import socket
import ssl

from wirecheck.protocols.transcript import Transcript

CLOSED, RESET = "closed", "reset"  # the same words as Outcome.CLOSED / Outcome.RESET values


class PeerGone(Exception):
    """The peer ended the connection: ``kind`` is CLOSED (EOF) or RESET; ``detail`` says how."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class Stream:
    def __init__(self, address: tuple[str, int], transcript: Transcript, connect_timeout: float = 3.0,
                 tls: ssl.SSLContext | None = None, server_hostname: str | None = None, endpoint: str = ""):
        self.transcript = transcript
        self.conn = transcript.new_connection()
        sock = socket.create_connection(address, timeout=connect_timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        detail = ""
        if tls is not None:
            try:  # the handshake runs under the connect timeout
                sock = tls.wrap_socket(sock, server_hostname=server_hostname or address[0])
            except BaseException:
                sock.close()
                raise
            alpn, cipher = sock.selected_alpn_protocol(), sock.cipher()  # cipher: None only before a handshake
            detail = f"{sock.version()} {cipher[0] if cipher else '?'}" + (f" alpn={alpn}" if alpn else "")
        self.sock = sock
        local, peer = sock.getsockname(), sock.getpeername()
        transcript.add(self.conn, "connect", detail=detail, local=f"{local[0]}:{local[1]}",
                       peer=f"{peer[0]}:{peer[1]}", endpoint=endpoint)

    @property
    def tls(self) -> bool:
        return isinstance(self.sock, ssl.SSLSocket)

    def sendall(self, data: bytes) -> None:
        """Send everything; raises OSError when the peer has gone."""
        self.sock.sendall(data)

    def read(self, timeout: float) -> bytes:
        """Whatever arrives within ``timeout`` seconds (b"" when nothing did); raises :class:`PeerGone`."""
        self.sock.settimeout(max(timeout, 1e-6))
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            return b""
        except ssl.SSLEOFError as exc:  # TCP FIN without TLS close_notify: the peer closed, untidily
            raise PeerGone(CLOSED, f"EOF without TLS close_notify ({exc})") from None
        except OSError as exc:  # ECONNRESET and friends: the peer is gone without a FIN
            raise PeerGone(RESET, str(exc)) from None
        if not chunk:
            raise PeerGone(CLOSED, "EOF from the peer")
        return chunk

    def close(self) -> None:
        self.sock.close()


class StreamSession:
    """What every session shares: its endpoint, transcript, default deadline and one :class:`Stream`; closing
    is recorded. Subclasses speak the endpoint's transport over ``self.stream``."""

    def __init__(self, address: tuple[str, int], spec_or_endpoint, transcript: Transcript, deadline: float = 2.0,
                 connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                 server_hostname: str | None = None):
        from wirecheck.targets.transport import endpoint_of

        self.endpoint = endpoint_of(spec_or_endpoint)
        self.transcript = transcript
        self.deadline = deadline
        self.stream = Stream(address, transcript, connect_timeout, tls, server_hostname, self.endpoint.name)
        self.conn = self.stream.conn

    def _before_close(self) -> None:
        """A last goodbye in the transport's own terms (e.g. HTTP/2 GOAWAY); nothing by default."""

    def close(self) -> None:
        try:
            self._before_close()
            self.stream.close()
        finally:
            self.transcript.add(self.conn, "close", detail="by us")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
