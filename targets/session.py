"""One connection to a framed endpoint: send bytes, receive whole frames with a deadline, record everything.

Every read has a deadline, so a silent target costs seconds, not a hung run. What came back is classified:
a whole frame, the peer closing (EOF), a reset, silence until the deadline, or a header that can never frame
(a negative or oversized length from the target itself). The connection may run over TLS; the transcript
records the plaintext. HTTP endpoints have their own sessions in :mod:`targets.transport`.
"""

from __future__ import annotations

import socket
import ssl
import time
from typing import Protocol

from wirecheck.protocols.framing import Framing
from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport import endpoint_of
from wirecheck.targets.transport.outcome import Outcome, Reply
from wirecheck.targets.transport.stream import PeerGone, Stream, StreamSession

LOOPBACK_PREFIXES = ("127.", "::1", "localhost")


def check_loopback(host: str) -> None:
    """wirecheck's own tests and CI talk to loopback only; users may point it anywhere on purpose."""
    if not host.startswith(LOOPBACK_PREFIXES):
        raise ValueError(f"{host} is not a loopback address")


class FramedSession(Protocol):
    """What a case and the fuzz engine use of a framed connection: a :class:`Session`, or one mirrored to the
    reference broker under --differential (:class:`targets.differential.MirroredSession`)."""

    @property
    def endpoint(self) -> Endpoint: ...

    @property
    def transcript(self) -> Transcript: ...

    deadline: float  # a case may change its connection's default wait

    @property
    def stream(self) -> Stream: ...  # the target's connection

    def send(self, data: bytes, decode: bool = True) -> bool: ...

    def recv(self, deadline: float | None = None) -> Reply: ...

    def request(self, data: bytes, deadline: float | None = None) -> Reply: ...

    def expect_end(self, deadline: float | None = None) -> Reply: ...

    def end_writing(self) -> None: ...

    def close(self) -> None: ...


class Session(StreamSession):
    """A framed endpoint's connection (a ``ProtocolSpec`` means its primary endpoint)."""

    def __init__(self, address: tuple[str, int], spec: ProtocolSpec | Endpoint, transcript: Transcript,
                 deadline: float = 2.0, connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                 server_hostname: str | None = None):
        endpoint = endpoint_of(spec)
        if endpoint.transport != "framed":
            raise ValueError(f"endpoint {endpoint.name} speaks {endpoint.transport}, not framed TCP: "
                             "use targets.transport.open_session")
        super().__init__(address, endpoint, transcript, deadline, connect_timeout, tls, server_hostname)
        assert endpoint.framing is not None  # a framed endpoint has one (Endpoint.__post_init__)
        self.address = address
        self.spec = spec
        self.framing: Framing = endpoint.framing
        self.max_body = endpoint.max_body
        self._buffer = bytearray()
        self._ended: Reply | None = None
        self.sock = self.stream.sock  # callers may half-close it (shutdown(SHUT_WR))

    # -- sending ------------------------------------------------------------------------------------------

    def send(self, data: bytes, decode: bool = True) -> bool:
        """Send bytes; False (and a transcript event) if the peer has already gone."""
        self.transcript.add(self.conn, "send", data, decode=decode)
        try:
            self.stream.sendall(data)
            return True
        except OSError as exc:
            self._ended = Reply(Outcome.RESET, detail=f"send failed: {exc}")
            self.transcript.add(self.conn, "reset", detail=self._ended.detail)
            return False

    def end_writing(self) -> None:
        """Half-close: the target sees the end of what we send (a frame that will never complete ends here)."""
        self.transcript.add(self.conn, "shutdown", detail="we stopped sending (half-close)")
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    # -- receiving ----------------------------------------------------------------------------------------

    def recv(self, deadline: float | None = None) -> Reply:
        """The next whole frame, or what happened instead, within ``deadline`` seconds."""
        framing = self.framing
        end = time.monotonic() + (self.deadline if deadline is None else deadline)
        while True:
            frames, _, problem = framing.split(self._buffer[: framing.header_size + self._wanted()],
                                               self.max_body)
            if frames:
                frame = frames[0]
                del self._buffer[: len(frame)]
                self.transcript.add(self.conn, "recv", frame)
                return Reply(Outcome.FRAME, frame)
            if problem:
                reply = Reply(Outcome.UNFRAMEABLE, partial=bytes(self._buffer), detail=problem)
                self.transcript.add(self.conn, "partial", bytes(self._buffer[:4096]), detail=problem, decode=False)
                self._buffer.clear()
                return reply
            if self._ended is not None:
                return self._finish(self._ended)
            remaining = end - time.monotonic()
            if remaining <= 0:
                waited = self.deadline if deadline is None else deadline
                return self._finish(Reply(Outcome.SILENT, detail=f"no frame within {waited:g}s"), keep_buffer=True)
            self._fill(remaining)

    def _wanted(self) -> int:
        """Body bytes the buffered header asks for (bounded by the spec's limit)."""
        framing = self.framing
        if len(self._buffer) < framing.header_size:
            return 0
        return max(0, min(framing.body_length(self._buffer[: framing.header_size]), self.max_body))

    def _fill(self, timeout: float) -> None:
        try:
            self._buffer += self.stream.read(timeout)
        except PeerGone as gone:
            self._ended = Reply(Outcome(gone.kind), detail=gone.detail)

    def _finish(self, reply: Reply, keep_buffer: bool = False) -> Reply:
        if self._buffer:
            reply = Reply(reply.outcome, partial=bytes(self._buffer), detail=reply.detail)
            self.transcript.add(self.conn, "partial", bytes(self._buffer[:4096]), detail="incomplete frame",
                                decode=False)
            if not keep_buffer:
                self._buffer.clear()
        kind = {Outcome.CLOSED: "closed", Outcome.RESET: "reset", Outcome.SILENT: "silent"}[reply.outcome]
        self.transcript.add(self.conn, kind, detail=reply.detail)
        return reply

    def request(self, data: bytes, deadline: float | None = None) -> Reply:
        if not self.send(data):
            assert self._ended is not None  # send() fails only once the peer has gone, and says how
            return self._finish(self._ended)
        return self.recv(deadline)

    def expect_end(self, deadline: float | None = None) -> Reply:
        """Wait for the peer to end the connection; frames that arrive first are recorded and skipped.

        Returns the first non-frame outcome (CLOSED/RESET, or SILENT if it stays open), with ``frame`` set to
        the last frame seen before it.
        """
        end = time.monotonic() + (self.deadline if deadline is None else deadline)
        last = b""
        while True:
            reply = self.recv(max(0.0, end - time.monotonic()))
            if not reply.is_frame:
                reply.frame = last
                return reply
            last = reply.frame
