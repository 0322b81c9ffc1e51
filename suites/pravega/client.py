"""A strict Pravega segment-store client for the conformance cases.

Every reply is decoded with ``protocols.pravega.commands`` (strict: the length must match the payload, strings
must be modified UTF-8, every required field present) and its requestId checked against the request's. Whatever
the target does instead becomes a :class:`Divergence` of the clause the case names, with the conversation already
in the case's transcript.

Delegation tokens: ``--target-option pravega.token=TOKEN`` is sent in every request (default empty, which a
segment store with auth off accepts). Segment names are unique per case (``wirecheck/<unique>/0``), so cases stay
independent on a shared target.
"""

from __future__ import annotations

import itertools
import uuid

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.clauses import CATALOGUE
from wirecheck.targets.client import StrictClient, short
from wirecheck.targets.session import Reply

C = CATALOGUE
MIN = cmd.NULL_ATTRIBUTE_VALUE
_request_ids = itertools.count(1)


def segment_name(target, stem: str = "s") -> str:
    return f"wirecheck/{target.unique(stem)}/0"


class Pravega(StrictClient):
    """One connection to the segment store."""

    framing_clause = "pravega.framing.reply"

    def __init__(self, target, session=None):
        super().__init__(target, session)
        self.token = target.options.get("token", "")

    # -- raw exchange ---------------------------------------------------------------------------------------

    @staticmethod
    def next_request_id() -> int:
        return next(_request_ids)

    def send(self, name: str, **values) -> int | None:
        """Send one command; fills requestId (returned) and the delegation token when the command has them."""
        command = cmd.BY_NAME[name]
        names = {f.name for f in command.fields}
        rid = None
        if "request_id" in names:
            rid = values.setdefault("request_id", self.next_request_id())
        if "delegation_token" in names:
            values.setdefault("delegation_token", self.token)
        self.send_frame(cmd.encode(name, values))
        return rid

    def decode(self, reply: Reply, clause_id: str, what: str = "a reply") -> cmd.Decoded:
        frame = self.frame_of(reply, clause_id, what)
        try:
            return cmd.decode(frame)
        except DecodeError as exc:
            raise self.diverge("pravega.framing.reply", "a reply that decodes as the command its type names",
                               f"{exc} ({len(frame)} bytes: {frame[:64].hex()})") from None

    def receive(self, clause_id: str, deadline: float | None = None, what: str = "a reply") -> cmd.Decoded:
        return self.decode(self.session.recv(deadline), clause_id, what)

    def expect(self, clause_id: str, rid: int | None, names: tuple[str, ...], deadline: float | None = None,
               decoded: cmd.Decoded | None = None) -> cmd.Decoded:
        """The next reply: it must be one of ``names`` and carry ``rid`` (when it has a requestId)."""
        answer = decoded or self.receive(clause_id, deadline, " or ".join(names))
        if rid is not None and answer.get("request_id") is not None and answer["request_id"] != rid:
            raise self.diverge("pravega.request-id.echo", f"requestId {rid} in the {answer.name}",
                               f"requestId {answer['request_id']}: {self._text(answer)}")
        if answer.name not in names:
            raise self.diverge(clause_id, " or ".join(names), short(self._text(answer)))
        return answer

    def call(self, name: str, clause_id: str, replies: tuple[str, ...], **values) -> cmd.Decoded:
        rid = self.send(name, **values)
        return self.expect(clause_id, rid, replies)

    @staticmethod
    def _text(decoded: cmd.Decoded) -> str:
        return cmd.describe(cmd.encode(decoded.code, decoded.fields))

    def error_codes_of(self, frame: bytes, context=None) -> set[int] | None:
        try:
            return {cmd.decode(frame).code}
        except DecodeError:
            return None

    def closes(self, clause_id: str, allowed: tuple[str, ...] = (), deadline: float | None = None,
               what: str = "the connection closed") -> list[set[int]]:
        return super().closes(clause_id, tuple(cmd.CODE[n] for n in allowed), deadline, what=what)

    def stays_open(self, clause_id: str) -> None:
        """KeepAlive must still be echoed on this connection."""
        self.send("KeepAlive")
        self.expect(clause_id, None, ("KeepAlive",))

    def silent(self, clause_id: str, deadline: float = 0.3, what: str = "no reply yet") -> None:
        reply = self.session.recv(deadline)
        if reply.is_frame:
            raise self.diverge(clause_id, what, f"a reply: {self.show(reply.frame)}")
        if reply.ended:
            raise self.diverge(clause_id, what, f"{reply}: the connection closed")

    # -- handshake ------------------------------------------------------------------------------------------

    def hello(self, high: int = cmd.WIRE_VERSION, low: int = cmd.OLDEST_COMPATIBLE_VERSION,
              clause_id: str = "pravega.hello.reply") -> cmd.Decoded:
        self.send("Hello", high_version=high, low_version=low)
        return self.expect(clause_id, None, ("Hello",))

    # -- segments -------------------------------------------------------------------------------------------

    def create(self, segment: str, clause_id: str = "pravega.segment.create", **options) -> cmd.Decoded:
        values = {"target_rate": 0, "scale_type": 0, **options}
        answer = self.call("CreateSegment", clause_id, ("SegmentCreated",), segment=segment, **values)
        if answer["segment"] != segment:
            raise self.diverge(clause_id, f"SegmentCreated naming {segment!r}", repr(answer["segment"]))
        return answer

    def info(self, segment: str, clause_id: str = "pravega.segment.info") -> cmd.Decoded:
        return self.call("GetStreamSegmentInfo", clause_id, ("StreamSegmentInfo",), segment=segment)

    def seal(self, segment: str, clause_id: str = "pravega.segment.seal") -> cmd.Decoded:
        return self.call("SealSegment", clause_id, ("SegmentSealed",), segment=segment)

    def truncate(self, segment: str, offset: int, clause_id: str = "pravega.segment.truncate") -> cmd.Decoded:
        return self.call("TruncateSegment", clause_id, ("SegmentTruncated",), segment=segment,
                         truncation_offset=offset)

    def delete(self, segment: str, clause_id: str = "pravega.segment.delete") -> cmd.Decoded:
        return self.call("DeleteSegment", clause_id, ("SegmentDeleted",), segment=segment)

    def read(self, segment: str, offset: int, length: int = 1 << 20, clause_id: str = "pravega.read.in-range",
             replies: tuple[str, ...] = ("SegmentRead",), deadline: float | None = None) -> cmd.Decoded:
        rid = self.send("ReadSegment", segment=segment, offset=offset, suggested_length=length)
        return self.expect(clause_id, rid, replies, deadline)

    def read_all(self, segment: str, start: int = 0, clause_id: str = "pravega.append.stored-verbatim") -> bytes:
        """Every byte from ``start`` to the length (several reads when the target answers short)."""
        length = self.info(segment)["write_offset"]
        data = b""
        while start + len(data) < length:
            answer = self.read(segment, start + len(data), clause_id=clause_id)
            if not answer["data"]:
                raise self.diverge("pravega.read.in-range", "data below the segment's length",
                                   f"an empty SegmentRead at {start + len(data)} of {length}")
            data += answer["data"]
        return data

    # -- appends --------------------------------------------------------------------------------------------

    def setup_append(self, segment: str, writer: uuid.UUID, clause_id: str = "pravega.append.setup") -> int:
        answer = self.call("SetupAppend", clause_id, ("AppendSetup",), writer_id=writer, segment=segment)
        if answer["writer_id"] != writer or answer["segment"] != segment:
            raise self.diverge(clause_id, f"AppendSetup for {writer} on {segment!r}", self._text(answer))
        return answer["last_event_number"]

    def send_events(self, writer: uuid.UUID, events: list[bytes], last_event_number: int) -> int:
        """A standalone AppendBlockEnd carrying whole Event frames (the Rust client's shape); returns the rid."""
        data = b"".join(cmd.event(e) for e in events)
        return self.send("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(data), data=data,
                         num_events=len(events), last_event_number=last_event_number)

    def acked(self, writer: uuid.UUID, rid: int, event_number: int, clause_id: str = "pravega.append.ack",
              previous: int | None = None, offset: int | None = None) -> cmd.Decoded:
        answer = self.expect(clause_id, rid, ("DataAppended",))
        if answer["writer_id"] != writer or answer["event_number"] != event_number:
            raise self.diverge(clause_id, f"DataAppended(writer {writer}, eventNumber {event_number})",
                               self._text(answer))
        if previous is not None and answer["previous_event_number"] != previous:
            raise self.diverge("pravega.append.ack-previous", f"previousEventNumber {previous}",
                               self._text(answer))
        if offset is not None and answer["current_segment_write_offset"] != offset:
            raise self.diverge("pravega.append.write-offset", f"currentSegmentWriteOffset {offset}",
                               self._text(answer))
        return answer

    def append(self, writer: uuid.UUID, events: list[bytes], last_event_number: int,
               clause_id: str = "pravega.append.ack", previous: int | None = None,
               offset: int | None = None) -> cmd.Decoded:
        rid = self.send_events(writer, events, last_event_number)
        return self.acked(writer, rid, last_event_number, clause_id, previous, offset)

    # -- attributes -----------------------------------------------------------------------------------------

    def get_attribute(self, segment: str, attribute: uuid.UUID, clause_id: str = "pravega.attribute.cas") -> int:
        return self.call("GetSegmentAttribute", clause_id, ("SegmentAttribute",), segment=segment,
                         attribute_id=attribute)["value"]

    def update_attribute(self, segment: str, attribute: uuid.UUID, new: int, expected: int,
                         clause_id: str = "pravega.attribute.cas") -> bool:
        return self.call("UpdateSegmentAttribute", clause_id, ("SegmentAttributeUpdated",), segment=segment,
                         attribute_id=attribute, new_value=new, expected_value=expected)["success"]

    # -- tables ---------------------------------------------------------------------------------------------

    def create_table(self, table: str, clause_id: str = "pravega.table.create") -> cmd.Decoded:
        return self.call("CreateTableSegment", clause_id, ("SegmentCreated",), segment=table)

    def put(self, table: str, entries: list[tuple[bytes, int, bytes]], clause_id: str = "pravega.table.update",
            replies: tuple[str, ...] = ("TableEntriesUpdated",)) -> cmd.Decoded:
        answer = self.call("UpdateTableEntries", clause_id, replies, segment=table, entries=entries)
        if answer.name == "TableEntriesUpdated" and len(answer["updated_versions"]) != len(entries):
            raise self.diverge("pravega.table.update", f"{len(entries)} versions",
                               str(answer["updated_versions"]))
        return answer

    def get(self, table: str, keys: list[bytes], clause_id: str = "pravega.table.read") -> dict:
        """{key: (version, value)} as ReadTable answers, checked to list the keys asked for, in order."""
        answer = self.call("ReadTable", clause_id, ("TableRead",), segment=table,
                           keys=[(k, cmd.NO_VERSION) for k in keys])
        got = [e[0] for e in answer["entries"]]
        if got != keys:
            raise self.diverge("pravega.table.read", f"entries for keys {keys}", f"entries for keys {got}")
        return {k: (v, value) for k, v, value in answer["entries"]}

    def remove(self, table: str, keys: list[tuple[bytes, int]], clause_id: str = "pravega.table.remove",
               replies: tuple[str, ...] = ("TableKeysRemoved",)) -> cmd.Decoded:
        return self.call("RemoveTableKeys", clause_id, replies, segment=table, keys=keys)


def new_segment(target, stem: str = "s", data: list[bytes] = ()) -> tuple[Pravega, str]:
    """A client and a fresh segment (optionally holding ``data`` as events, appended by a throwaway writer)."""
    client = Pravega(target)
    name = segment_name(target, stem)
    client.create(name)
    if data:
        writer = uuid.uuid4()
        client.setup_append(name, writer)
        client.append(writer, list(data), len(data))
    return client, name


def new_table(target, stem: str = "t") -> tuple[Pravega, str]:
    client = Pravega(target)
    name = segment_name(target, stem)
    client.create_table(name)
    return client, name
