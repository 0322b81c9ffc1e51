"""What a capture check reports: one violated clause at one frame of one flow."""

from __future__ import annotations

from dataclasses import dataclass

HEX_EXCERPT = 48  # bytes of the frame shown in the violations table


@dataclass(frozen=True)
class Finding:
    clause: str  # a clause ID of the protocol's catalogue
    side: str  # "client" or "server": who sent the offending frame
    frame_index: int  # index of the frame in that side's stream (-1: the stream, not one frame)
    message: str
    frame: bytes = b""

    @property
    def hex(self) -> str:
        excerpt = self.frame[:HEX_EXCERPT].hex()
        return excerpt + ("…" if len(self.frame) > HEX_EXCERPT else "")
