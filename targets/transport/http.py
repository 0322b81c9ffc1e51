"""What an HTTP exchange came to, for both HTTP sessions (h11 and h2): the reply model and its transcript lines.

A reply is a whole response (status, headers, body), or what happened instead: the connection closed or reset,
silence until the deadline, or bytes that break HTTP (malformed). What arrived before that is kept (status,
headers, the partial body), as a framed session keeps a partial frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.transport.outcome import Outcome

Headers = list[tuple[bytes, bytes]]
#: the headers a caller gives a request: names and values as bytes or text (latin-1)
RequestHeaders = Sequence[tuple[bytes | str, bytes | str]]
HEADER_PREVIEW = 6  # headers shown on a transcript line


@dataclass
class HttpReply:
    outcome: Outcome  # RESPONSE, CLOSED, RESET, SILENT or MALFORMED
    status: int | None = None  # None until a response head arrived
    headers: Headers = field(default_factory=list)
    body: bytes = b""  # the whole body, or what arrived of it
    detail: str = ""
    stream_id: int | None = None  # HTTP/2 only

    @property
    def complete(self) -> bool:
        return self.outcome is Outcome.RESPONSE

    @property
    def ended(self) -> bool:
        """The connection (or, in HTTP/2, the stream) is over."""
        return self.outcome in (Outcome.CLOSED, Outcome.RESET)

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), as text."""
        wanted = name.lower().encode()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return None

    def __str__(self) -> str:
        if self.complete:
            return f"a {self.status} response with a {len(self.body)}-byte body"
        head = f" after a {self.status} head and {len(self.body)} body bytes" if self.status is not None else ""
        return {
            Outcome.CLOSED: "the connection closed",
            Outcome.RESET: "the connection reset" if self.stream_id is None else "the stream reset",
            Outcome.SILENT: "silence until the deadline",
            Outcome.MALFORMED: f"a malformed response ({self.detail})",
        }[self.outcome] + head


def as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("latin-1")


def text(value: bytes | str) -> str:
    return value if isinstance(value, str) else value.decode("latin-1")


def headers_line(headers: Headers) -> str:
    shown = ", ".join(f"{text(k)}: {text(v)}" for k, v in headers[:HEADER_PREVIEW])
    return shown + (f", ... {len(headers) - HEADER_PREVIEW} more" if len(headers) > HEADER_PREVIEW else "")


def record_request(transcript: Transcript, conn: int, method: str, path: str, version: str, headers: Headers,
                   body: bytes, stream_id: int | None = None) -> None:
    prefix = f"stream {stream_id}: " if stream_id is not None else ""
    transcript.add(conn, "http-request", body, decode=False,
                   detail=f"{prefix}{method} {path} {version} ({headers_line(headers)})")


def record_reply(transcript: Transcript, conn: int, reply: HttpReply) -> None:
    """The decoded response as one event, or the outcome event when there was no whole response."""
    prefix = f"stream {reply.stream_id}: " if reply.stream_id is not None else ""
    if reply.complete:
        transcript.add(conn, "http-response", reply.body, decode=False,
                       detail=f"{prefix}{reply.status} ({headers_line(reply.headers)}) {len(reply.body)}-byte body")
        return
    transcript.add(conn, reply.outcome.value, reply.body[:4096], decode=False, detail=f"{prefix}{reply}: {reply.detail}")
