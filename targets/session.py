"""One connection to a target: send bytes, receive whole frames with a deadline, record everything.

Every read has a deadline, so a silent target costs seconds, not a hung run. What came back is classified:
a whole frame, the peer closing (EOF), a reset, silence until the deadline, or a header that can never frame
(a negative or oversized length from the target itself).
"""

from __future__ import annotations

import enum
import socket
import time
from dataclasses import dataclass

from protocols.registry import ProtocolSpec
from reports.transcript import Transcript

LOOPBACK_PREFIXES = ("127.", "::1", "localhost")


class Outcome(enum.Enum):
    FRAME = "frame"
    CLOSED = "closed"  # EOF from the peer
    RESET = "reset"  # connection reset / broken pipe
    SILENT = "silent"  # nothing (or only part of a frame) before the deadline
    UNFRAMEABLE = "unframeable"  # the target sent a header whose length can never frame


@dataclass
class Reply:
    outcome: Outcome
    frame: bytes = b""
    partial: bytes = b""  # bytes that arrived without completing a frame
    detail: str = ""

    @property
    def is_frame(self) -> bool:
        return self.outcome is Outcome.FRAME

    @property
    def ended(self) -> bool:
        """The connection is over (closed or reset)."""
        return self.outcome in (Outcome.CLOSED, Outcome.RESET)

    def __str__(self) -> str:
        if self.is_frame:
            return f"a {len(self.frame)}-byte frame"
        extra = f" after {len(self.partial)} bytes of an incomplete frame" if self.partial else ""
        return {
            Outcome.CLOSED: "the connection closed",
            Outcome.RESET: "the connection reset",
            Outcome.SILENT: "silence until the deadline",
            Outcome.UNFRAMEABLE: f"an unframeable header ({self.detail})",
        }[self.outcome] + extra


def check_loopback(host: str) -> None:
    """wirecheck's own tests and CI talk to loopback only; users may point it anywhere on purpose."""
    if not host.startswith(LOOPBACK_PREFIXES):
        raise ValueError(f"{host} is not a loopback address")


class Session:
    def __init__(self, address: tuple[str, int], spec: ProtocolSpec, transcript: Transcript,
                 deadline: float = 2.0, connect_timeout: float = 3.0):
        self.address = address
        self.spec = spec
        self.transcript = transcript
        self.deadline = deadline
        self.conn = transcript.new_connection()
        self._buffer = bytearray()
        self._ended: Reply | None = None
        self.sock = socket.create_connection(address, timeout=connect_timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        local, peer = self.sock.getsockname(), self.sock.getpeername()
        transcript.add(self.conn, "connect", local=f"{local[0]}:{local[1]}", peer=f"{peer[0]}:{peer[1]}")

    # -- sending ------------------------------------------------------------------------------------------

    def send(self, data: bytes, decode: bool = True) -> bool:
        """Send bytes; False (and a transcript event) if the peer has already gone."""
        self.transcript.add(self.conn, "send", data, decode=decode)
        try:
            self.sock.sendall(data)
            return True
        except OSError as exc:
            self._ended = Reply(Outcome.RESET, detail=f"send failed: {exc}")
            self.transcript.add(self.conn, "reset", detail=self._ended.detail)
            return False

    # -- receiving ----------------------------------------------------------------------------------------

    def recv(self, deadline: float | None = None) -> Reply:
        """The next whole frame, or what happened instead, within ``deadline`` seconds."""
        framing = self.spec.framing
        end = time.monotonic() + (self.deadline if deadline is None else deadline)
        while True:
            frames, used, problem = framing.split(self._buffer[: framing.header_size + self._wanted()],
                                                  self.spec.max_body)
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
        framing = self.spec.framing
        if len(self._buffer) < framing.header_size:
            return 0
        return max(0, min(framing.body_length(self._buffer[: framing.header_size]), self.spec.max_body))

    def _fill(self, timeout: float) -> None:
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            return
        except OSError as exc:  # ECONNRESET and friends: the peer is gone without a FIN
            self._ended = Reply(Outcome.RESET, detail=str(exc))
            return
        if not chunk:
            self._ended = Reply(Outcome.CLOSED, detail="EOF from the peer")
            return
        self._buffer += chunk

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

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            self.transcript.add(self.conn, "close", detail="by us")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
