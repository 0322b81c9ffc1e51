"""Values a server chose (a producer id, a member id: the protocol's volatile fields) that later requests carry.

Two servers, or one server on two runs, choose them differently: a replay learns what the target chose where the
failing run's server chose another value, and ``--differential`` learns what the oracle chose where the target
chose another; later requests get the learnt value substituted, as a client of that server would have sent them.
"""

from __future__ import annotations

import uuid

from wirecheck.targets.differential import Comparator
from wirecheck.targets.session import Reply

SHOWN = 3  # uncarried values named in a NOT REPLAYABLE line


class ServerChosen:
    """Values one server chose (``old``: the failing run's, or the target's) and what the other chose for them
    (``new``: the target's now, or the oracle's). Later requests that carry an old value get the new one, so a
    conversation that builds on them can still be played.

    Only values that are unlikely to occur by chance are carried over: integers of at least 256 as 8-byte
    big-endian (the width of Kafka's ids), strings of at least 4 bytes whose new value has the same length."""

    def __init__(self, reseal=None):
        self.reseal = reseal  # ProtocolSpec.reseal: fixes embedded checksums after an edit
        self.substitutions: dict[bytes, bytes] = {}
        #: the first "path: old -> new" that could not be substituted (a differential case of thousands of answers
        #: keeps no more than it shows)
        self.uncarried: list[str] = []

    def learn(self, comparator: Comparator, request: bytes | None, old_answer: Reply, new_answer: Reply) -> None:
        """Compare the server-chosen fields of two answers to one request."""
        if not (old_answer.is_frame and new_answer.is_frame):
            return
        old = comparator.fields(old_answer.frame, request, volatile=True) or {}
        new = comparator.fields(new_answer.frame, request, volatile=True) or {}
        for path in old.keys() & new.keys():
            before, after = old[path], new[path]
            if before == after:
                continue
            pattern = _encoded(before, after)
            if pattern is None:
                if len(self.uncarried) < SHOWN:
                    self.uncarried.append(f"{path}: {before!r} -> {after!r}")
            elif pattern[0] != pattern[1]:
                self.substitutions[pattern[0]] = pattern[1]

    def apply(self, data: bytes, before: bytes | None = None) -> bytes:
        """``data`` with the learnt values substituted, its checksums fixed against ``before`` (the bytes as
        recorded, when ``data`` already carries other same-length edits, such as renamed resources)."""
        before = data if before is None else before
        edited = data
        for old, new in self.substitutions.items():
            edited = edited.replace(old, new)
        return self.reseal(before, edited) if self.reseal is not None and edited != before else edited

    def uncarried_text(self) -> str:
        """Why a difference may be the replay's own ("" when every server-chosen value was carried over)."""
        if not self.uncarried:
            return ""
        return f"server-chosen values changed that later requests may carry: {', '.join(self.uncarried)}"


def _encoded(before, after) -> tuple[bytes, bytes] | None:
    if isinstance(before, int) and isinstance(after, int) and not isinstance(before, bool):
        if abs(before) < 256 or not all(-(1 << 63) <= v < (1 << 63) for v in (before, after)):
            return None
        return before.to_bytes(8, "big", signed=True), after.to_bytes(8, "big", signed=True)
    if isinstance(before, uuid.UUID) and isinstance(after, uuid.UUID):
        return before.bytes, after.bytes
    if isinstance(before, str) and isinstance(after, str):
        before, after = before.encode(), after.encode()
    if isinstance(before, (bytes, bytearray)) and isinstance(after, (bytes, bytearray)):
        if len(before) >= 4 and len(before) == len(after):
            return bytes(before), bytes(after)
    return None
