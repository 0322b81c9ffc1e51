"""Values a server chose (a producer id, a member id: the protocol's volatile fields; a broker id: its chosen
fields) that later requests carry.

Two servers, or one server on two runs, choose them differently: a replay learns what the target chose where the
failing run's server chose another value, and ``--differential`` learns what the oracle chose where the target
chose another; later requests get the learnt value substituted, as a client of that server would have sent them.

Volatile values are carried by their bytes, so only values unlikely to occur by chance. Chosen fields
(``ProtocolSpec.chosen_fields``: small integers such as broker ids 0 and 111) are mapped by what the field means
instead: one-to-one per kind, learnt where an answer first shows one, written into the request fields that carry
that kind (``ProtocolSpec.chosen_request_fields``) by the protocol's own codec.
"""

from __future__ import annotations

import uuid
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Mapping, TypeGuard

from wirecheck.targets.differential import Comparator
from wirecheck.targets.transport.outcome import Reply

if TYPE_CHECKING:
    from wirecheck.protocols.spec import ProtocolSpec

SHOWN = 3  # uncarried values named in a NOT REPLAYABLE line
ZERO_UUID = uuid.UUID(int=0)


class ServerChosen:
    """Values one server chose (``old``: the failing run's, or the target's) and what the other chose for them
    (``new``: the target's now, or the oracle's). Later requests that carry an old value get the new one, so a
    conversation that builds on them can still be played.

    Only values that are unlikely to occur by chance are carried over: integers of at least 256 as 8-byte
    big-endian (the width of Kafka's ids), strings of at least 4 bytes whose new value has the same length."""

    def __init__(self, reseal=None, request_fields=None, map_request=None, sentinels=None, counters=()):
        self.reseal = reseal  # ProtocolSpec.reseal: fixes embedded checksums after an edit
        self.substitutions: dict[bytes, bytes] = {}
        self.request_fields = dict(request_fields or {})  # ProtocolSpec.chosen_request_fields
        self.map_request = map_request  # ProtocolSpec.map_request
        self.sentinels = dict(sentinels or {})  # ProtocolSpec.chosen_sentinels
        #: ProtocolSpec.chosen_counters: counted kind -> the field beside it whose value scopes the count ("": none)
        self.counters = dict(counters) if isinstance(counters, Mapping) else dict.fromkeys(counters, "")
        #: (counted kind, scope) -> the oracle's count minus the target's at their latest sighting: a request's count
        #: that neither server answered (a stale or future epoch a case makes up) moves by it, so it stays stale or
        #: future
        self.shift: dict[tuple[str, object], int] = {}
        #: kind (a counted kind: with its scope) -> (old value -> new value, new value -> old value): the chosen
        #: fields' mappings, one to one but for counted kinds
        self.mapped: dict[object, tuple[dict, dict]] = {}
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

    @classmethod
    def for_spec(cls, spec: "ProtocolSpec") -> "ServerChosen":
        return cls(spec.reseal, spec.chosen_request_fields, spec.map_request, spec.chosen_sentinels,
                   spec.chosen_counters)

    def same(self, kind: str, old, new, scope=None) -> bool:
        """Do two values of a chosen field agree under the kind's mapping (lists element by element, in order)?
        The first sighting of a value learns its counterpart; a sentinel of the kind (Kafka's -1: no leader, no
        coordinator) is no choice and must be equal. A counted kind's count is each ``scope``'s own (the value of
        the field ``counters`` names beside it: a member's epoch is that member's)."""
        if isinstance(old, list) and isinstance(new, list):
            return len(old) == len(new) and all(self.same(kind, a, b, scope) for a, b in zip(old, new))
        old, new = _number(old), _number(new)
        sentinels = self.sentinels.get(kind, (-1,))
        if not (_plain_int(old) and _plain_int(new)) or old in sentinels or new in sentinels:
            return old == new
        if kind in self.counters:  # each server's own count: what the oracle answered beside it, latest first
            self.mapped.setdefault((kind, scope), ({}, {}))[0][old] = new
            self.shift[kind, scope] = new - old
            return True
        forward, backward = self.mapped.setdefault(kind, ({}, {}))
        if old in forward or new in backward:
            return forward.get(old) == new
        forward[old], backward[new] = new, old
        return True

    def mapped_value(self, kind: str, value, scope=None):
        """``value`` (or each element of a list) as the other server chose it; unknown values unchanged."""
        counted = kind in self.counters
        forward = self.mapped.get((kind, scope) if counted else kind, ({}, {}))[0]
        if _plain_int(value) and value in self.sentinels.get(kind, (-1,)):
            return value
        if counted and _plain_int(value) and value not in forward:  # a count never answered (a stale or future
            return value + self.shift.get((kind, scope), 0)  # epoch): as far from the oracle's latest
        if isinstance(value, list):
            return [self.mapped_value(kind, item, scope) for item in value]
        if isinstance(value, str) and _plain_int(_number(value)):  # a broker id written as text (a config resource)
            return str(forward.get(int(value), int(value)))
        return forward.get(value, value) if _plain_int(value) else value

    def apply(self, data: bytes, before: bytes | None = None) -> bytes:
        """``data`` with the learnt values substituted, its checksums fixed against ``before`` (the bytes as
        recorded, when ``data`` already carries other same-length edits, such as renamed resources), then the
        chosen fields' mapped values written into the request fields that carry them."""
        before = data if before is None else before
        edited = data
        for old, new in self.substitutions.items():
            edited = edited.replace(old, new)
        edited = self.reseal(before, edited) if self.reseal is not None and edited != before else edited
        if self.map_request is not None and self.request_fields and (any(self.shift.values()) or any(
                old != new for forward, _ in self.mapped.values() for old, new in forward.items())):
            edited = self.map_request(edited, self._rewrite)
        return edited

    def scope_of(self, kind: str, beside) -> object:
        """The scope of a counted kind's value: what ``beside(field name)`` reads of the field that scopes it."""
        name = self.counters.get(kind)
        return beside(name) if name else None

    def _rewrite(self, path: str, value, struct: Mapping):
        kind = next((kind for pattern, kind in self.request_fields.items() if fnmatchcase(path, pattern)), None)
        if kind is None:
            return value
        return self.mapped_value(kind, value, self.scope_of(kind, lambda name: _scope_value(struct.get(name))))

    def uncarried_text(self) -> str:
        """Why a difference may be the replay's own ("" when every server-chosen value was carried over)."""
        if not self.uncarried:
            return ""
        return f"server-chosen values changed that later requests may carry: {', '.join(self.uncarried)}"


def _scope_value(value):
    """A scope as one server's value of it (a member id as the oracle chose it): plain values only, else none."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _number(value):
    """A decimal string as the integer it writes (Kafka names a broker's config resource "0"); else as given."""
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 10 else value


def _plain_int(value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _encoded(before, after) -> tuple[bytes, bytes] | None:
    if isinstance(before, int) and isinstance(after, int) and not isinstance(before, bool):
        if abs(before) < 256 or not all(-(1 << 63) <= v < (1 << 63) for v in (before, after)):
            return None
        return before.to_bytes(8, "big", signed=True), after.to_bytes(8, "big", signed=True)
    if isinstance(before, uuid.UUID) and isinstance(after, uuid.UUID):
        if ZERO_UUID in (before, after):  # no id (Kafka's "TopicId": zero when named by name), never a choice:
            return None  # carried over, every later request naming a topic by name would name one by id too
        return before.bytes, after.bytes
    if isinstance(before, str) and isinstance(after, str):
        before, after = before.encode(), after.encode()
    if isinstance(before, (bytes, bytearray)) and isinstance(after, (bytes, bytearray)):
        if len(before) >= 4 and len(before) == len(after):
            return bytes(before), bytes(after)
    return None
