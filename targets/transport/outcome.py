"""What one read of a connection came to (a whole frame, the peer closing or resetting, silence, a header that can
never frame, a whole or malformed HTTP response): every transport answers with a Reply, so the types live beside them."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.Enum):
    FRAME = "frame"
    CLOSED = "closed"  # EOF from the peer
    RESET = "reset"  # connection reset / broken pipe
    SILENT = "silent"  # nothing (or only part of a frame) before the deadline
    UNFRAMEABLE = "unframeable"  # the target sent a header whose length can never frame
    RESPONSE = "response"  # a whole HTTP response (targets.transport.http)
    MALFORMED = "malformed"  # HTTP bytes that break the message syntax (h11 / h2 refused them)


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
