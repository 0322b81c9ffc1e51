"""The conversation of one case: every byte sent and received, what closed, who stayed silent.

Sessions append events; the plugin renders them into the failure report (hex and decoded), writes them as JSON
(``wirecheck.transcript/1``, see docs/report-schema.md) and attaches them to Allure.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

MAX_EVENTS = 400
HTTP_MESSAGES = ("http-request", "http-response")  # decoded HTTP messages: the line in ``detail``, body in ``data``
HEX_PREVIEW = 512  # bytes of a frame shown in the human-readable rendering
HEX_KEEP = 1 << 20  # bytes of one event kept in the JSON transcript (a 10 MiB frame would be 20 MB of hex)


@dataclass
class Event:
    t: float
    conn: int
    kind: str  # connect, send, recv, partial, closed, reset, silent, close, shutdown (half-close), note;
    # HTTP_MESSAGES, malformed
    data: bytes = b""
    decode: bool = True  # False for bytes that are not a whole frame
    detail: str = ""
    local: str = ""
    peer: str = ""
    endpoint: str = ""  # connect events: the protocol endpoint the connection is to (replay files need it)

    @property
    def incoming(self) -> bool:
        """Bytes the target sent (an answer), as opposed to bytes sent to it."""
        return self.kind in ("recv", "partial")

    def to_dict(self, describe: Callable[[bytes], str]) -> dict:
        out = {"t": round(self.t, 6), "conn": self.conn, "kind": self.kind}
        if self.data:
            out["hex"] = self.data[:HEX_KEEP].hex()
            out["len"] = len(self.data)
            if len(self.data) > HEX_KEEP:
                out["truncated"] = True
            if self.decode:
                out["decoded"] = _safe(describe, self.data)
        for name in ("detail", "local", "peer", "endpoint"):
            value = getattr(self, name)
            if value:
                out[name] = value
        return out


@dataclass
class Transcript:
    protocol: str
    describe: Callable[[bytes], str] = lambda frame: ""
    describe_answer: Callable[[bytes], str] | None = None  # answers (recv, partial); None: ``describe``
    events: deque = field(default_factory=lambda: deque(maxlen=MAX_EVENTS))
    started: float = field(default_factory=time.monotonic)
    _connections: int = 0
    dropped: int = 0

    def new_connection(self) -> int:
        self._connections += 1
        return self._connections

    def add(self, conn: int, kind: str, data: bytes = b"", detail: str = "", decode: bool = True, **addr) -> None:
        """Record an event; decoding for humans waits until the transcript is rendered (hot loops pay nothing)."""
        if len(self.events) == self.events.maxlen:
            self.dropped += 1
        event = Event(time.monotonic() - self.started, conn, kind, bytes(data), decode, detail, **addr)
        self.events.append(event)

    def note(self, text: str) -> None:
        self.add(0, "note", detail=text)

    def clear(self) -> None:
        """Forget earlier events (a property-based case calls this at the start of each example)."""
        self.events.clear()
        self.dropped = 0

    def to_dict(self, case: str, nodeid: str) -> dict:
        return {"schema": "wirecheck.transcript/1", "case": case, "nodeid": nodeid, "protocol": self.protocol,
                "dropped_events": self.dropped, "events": [e.to_dict(self.describer(e)) for e in self.events]}

    def describer(self, event: Event) -> Callable[[bytes], str]:
        """How to show an event's bytes: answers with the answer describer, the rest as sent."""
        return self.describe_answer if event.incoming and self.describe_answer else self.describe

    def render(self, limit: int = 60) -> str:
        """The last ``limit`` events as text: one line per event, hex dumps under sends and receives."""
        events = list(self.events)[-limit:]
        lines = []
        if len(self.events) > limit or self.dropped:
            lines.append(f"... {len(self.events) - len(events) + self.dropped} earlier events not shown")
        for e in events:
            head = f"{e.t:9.4f}s conn#{e.conn} {e.kind.upper():8}"
            if e.kind in ("send", "recv", "partial"):
                decoded = _safe(self.describer(e), e.data) if e.decode else ""
                lines.append(f"{head} {len(e.data)} bytes  {decoded}".rstrip())
                lines.extend("      " + row for row in hexdump(e.data[:HEX_PREVIEW]))
                if len(e.data) > HEX_PREVIEW:
                    lines.append(f"      ... {len(e.data) - HEX_PREVIEW} more bytes")
            elif e.kind in HTTP_MESSAGES:
                lines.append(f"{head} {e.detail}")
                lines.extend("      " + row for row in hexdump(e.data[:HEX_PREVIEW]))
                if len(e.data) > HEX_PREVIEW:
                    lines.append(f"      ... {len(e.data) - HEX_PREVIEW} more bytes")
            else:
                lines.append(f"{head} {e.detail or e.peer}".rstrip())
        return "\n".join(lines)


def _safe(describe: Callable[[bytes], str], data: bytes) -> str:
    """A protocol's decoder must not take the report down with it, whatever the bytes."""
    try:
        return describe(data)
    except Exception as exc:  # noqa: BLE001 - any decoder bug becomes a note in the transcript
        return f"<cannot decode: {type(exc).__name__}: {exc}>"[:200]


def hexdump(data: bytes, width: int = 16) -> list[str]:
    rows = []
    for off in range(0, len(data), width):
        chunk = data[off : off + width]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        rows.append(f"{off:08x}  {chunk.hex(' '):<{width * 3}} {text}")
    return rows
