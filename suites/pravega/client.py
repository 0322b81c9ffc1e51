"""A strict Pravega segment-store client for the conformance cases.

Every reply is decoded with ``protocols.pravega.commands`` (strict: the length must match the payload, strings
must be modified UTF-8, every required field present) and its requestId checked against the request's. Whatever
the target does instead becomes a :class:`Divergence` of the clause the case names, with the conversation already
in the case's transcript.

Delegation tokens: ``--target-option pravega.token=TOKEN`` is sent in every request (default empty, which a
segment store with auth off accepts). Segments a case creates have unique names (``<scope>/<unique>/0``, scope
``pravega.scope``, default ``wirecheck``), so cases stay independent on a shared target. ``pravega.segments`` names
stream segments that already exist: cases whose checks are relative to their own appends (unique writer ids,
offsets from their acks) share them; nothing seals, truncates or deletes them.

Every connection opens with Hello, as the Java client's do (:func:`login`, the spec's login step); cases about
Hello itself connect with ``target.connect(login=False)``. Helpers judge what they rely on under the clause that
owns it (the isolation rule, ARCHITECTURE.md): a created segment's state under the create clause, a new writer's
AppendSetup under the setup clause, an ack's event number under the ack clause, a request left unanswered under
the no-hang clause (unless the case is about when the answer comes), so that one defect fails its own cases and
only blocks the others.
"""

from __future__ import annotations

import itertools
import uuid

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.clauses import CATALOGUE
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.targets.client import StrictClient, short
from wirecheck.targets.transport.outcome import Outcome, Reply

C = CATALOGUE
MIN = cmd.NULL_ATTRIBUTE_VALUE
#: an answer that never comes (notes §8: the server answers or closes; only reads at the tail park)
NO_HANG = "pravega.robustness.no-hang"
STORED = "pravega.append.stored-verbatim"
_request_ids = itertools.count(1)


def segment_name(target, stem: str = "s") -> str:
    return f"{target.options.get('scope') or 'wirecheck'}/{target.unique(stem)}/0"


def token_of(target) -> str:
    """``--target-option pravega.token=TOKEN``: the delegation token every request carries (default empty)."""
    return target.options.get("token", "")


def configured_segments(target) -> list[str]:
    """``--target-option pravega.segments=NAME,...``: stream segments that exist on the target, shared by cases."""
    return [n.strip() for n in target.options.get("segments", "").split(",") if n.strip()]


class Pravega(StrictClient):
    """One connection to the segment store."""

    framing_clause = "pravega.framing.reply"

    def __init__(self, target, session=None):
        super().__init__(target, session)
        self.token = token_of(target)
        self._segments: dict[uuid.UUID, str] = {}  # writer -> the segment it was set up on

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

    def decode(self, reply: Reply, clause_id: str, what: str = "a reply", silence: str = NO_HANG) -> cmd.Decoded:
        """The reply decoded; a close breaks ``clause_id``, silence ``silence`` (the no-hang clause, unless the case
        is about when the answer comes), a reply that is not exactly its command's fields the framing clause."""
        if reply.outcome is Outcome.SILENT and not reply.partial:
            raise self.diverge(silence, what, str(reply))
        frame = self.frame_of(reply, clause_id, what)
        try:
            decoded = cmd.decode(frame)
        except DecodeError as exc:
            raise self.diverge("pravega.framing.reply", "a reply that decodes as the command its type names",
                               f"{exc} ({len(frame)} bytes: {frame[:64].hex()})") from None
        if decoded.trailing:  # e.g. a length field one short: the last field cut, its rest read as the next frame
            raise self.diverge("pravega.framing.reply", "a reply that ends with its last field",
                               f"{decoded.trailing} bytes after the fields of {self.show(frame)}")
        return decoded

    def receive(self, clause_id: str, deadline: float | None = None, what: str = "a reply",
                silence: str = NO_HANG) -> cmd.Decoded:
        return self.decode(self.session.recv(deadline), clause_id, what, silence)

    def expect(self, clause_id: str, rid: int | None, names: tuple[str, ...], deadline: float | None = None,
               decoded: cmd.Decoded | None = None, silence: str = NO_HANG) -> cmd.Decoded:
        """The next reply: it must be one of ``names`` and carry ``rid`` (when it has a requestId)."""
        answer = decoded or self.receive(clause_id, deadline, " or ".join(names), silence)
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
        """The connection still answers: a Hello gets a Hello (any range: that is the hello cases' business). Hello
        rather than KeepAlive, so that a KeepAlive left unanswered fails the keepalive cases only; silence or a
        close here breaks ``clause_id``."""
        self.hello(clause_id=clause_id)

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
        return self.expect(clause_id, None, ("Hello",), silence=clause_id)

    # -- segments -------------------------------------------------------------------------------------------

    def create(self, segment: str, clause_id: str = "pravega.segment.create", **options) -> cmd.Decoded:
        values = {"target_rate": 0, "scale_type": 0, **options}
        answer = self.call("CreateSegment", clause_id, ("SegmentCreated",), segment=segment, **values)
        if answer["segment"] != segment:
            raise self.diverge(clause_id, f"SegmentCreated naming {segment!r}", repr(answer["segment"]))
        self.created(segment)
        return answer

    def created(self, segment: str) -> None:
        """A segment just created exists, empty and unsealed: the create clause's, whichever case creates it."""
        info = self.info(segment, "pravega.segment.create")
        if not info["exists"] or info["is_sealed"] or info["write_offset"] != 0:
            raise self.diverge("pravega.segment.create", f"{segment!r} existing, unsealed and empty once created",
                               self._text(info))

    def info(self, segment: str, clause_id: str = "pravega.segment.info") -> cmd.Decoded:
        return self.call("GetStreamSegmentInfo", clause_id, ("StreamSegmentInfo",), segment=segment)

    def seal(self, segment: str, clause_id: str = "pravega.segment.seal") -> cmd.Decoded:
        return self.call("SealSegment", clause_id, ("SegmentSealed",), segment=segment)

    def truncate(self, segment: str, offset: int, clause_id: str = "pravega.segment.truncate") -> cmd.Decoded:
        return self.call("TruncateSegment", clause_id, ("SegmentTruncated",), segment=segment,
                         truncation_offset=offset)

    def delete(self, segment: str, clause_id: str = "pravega.segment.delete") -> cmd.Decoded:
        return self.call("DeleteSegment", clause_id, ("SegmentDeleted",), segment=segment)

    def absent(self, segment: str, clause_id: str) -> None:
        """``segment`` does not exist: GetStreamSegmentInfo answers NoSuchSegment or exists=false."""
        answer = self.call("GetStreamSegmentInfo", clause_id, ("NoSuchSegment", "StreamSegmentInfo"),
                           segment=segment)
        if answer.name == "StreamSegmentInfo" and answer["exists"]:
            raise self.diverge(clause_id, f"no segment {segment!r}", self._text(answer))

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
        self._segments[writer] = segment
        return answer["last_event_number"]

    def new_writer(self, segment: str) -> uuid.UUID:
        """A writer id the segment has never seen, set up on this connection; its lastEventNumber is Long.MIN_VALUE
        (the setup clause's, whichever case starts from it)."""
        writer = uuid.uuid4()
        last = self.setup_append(segment, writer)
        if last != MIN:
            raise self.diverge("pravega.append.setup", f"lastEventNumber {MIN} for the new writer {writer}",
                               str(last))
        return writer

    def send_events(self, writer: uuid.UUID, events: list[bytes], last_event_number: int) -> int:
        """A standalone AppendBlockEnd carrying whole Event frames (the Rust client's shape); returns the rid."""
        data = b"".join(cmd.event(e) for e in events)
        return self.send("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(data), data=data,
                         num_events=len(events), last_event_number=last_event_number)

    def acked(self, writer: uuid.UUID, rid: int, event_number: int, clause_id: str = "pravega.append.ack",
              previous: int | None = None, offset: int | None = None, stores: str = STORED,
              decoded: cmd.Decoded | None = None) -> cmd.Decoded:
        """The DataAppended of an append: a DataAppended at all is ``clause_id``'s; its writer and event number are
        the ack clause's, its previousEventNumber the ack-previous clause's; ``offset``, the segment's expected
        length after the append, see :meth:`_wrong_length`; ``decoded``: its answer, already received."""
        answer = self.expect(clause_id, rid, ("DataAppended",), decoded=decoded)
        if answer["writer_id"] != writer or answer["event_number"] != event_number:
            raise self.diverge("pravega.append.ack", f"DataAppended(writer {writer}, eventNumber {event_number})",
                               self._text(answer))
        if previous is not None and answer["previous_event_number"] != previous:
            raise self.diverge("pravega.append.ack-previous", f"previousEventNumber {previous}",
                               self._text(answer))
        if offset is not None and answer["current_segment_write_offset"] != offset:
            raise self._wrong_length(writer, answer, offset, stores)
        return answer

    def _wrong_length(self, writer: uuid.UUID, answer: cmd.Decoded, offset: int, stores: str) -> Divergence:
        """An ack whose currentSegmentWriteOffset is not the expected length. When the segment's length agrees
        with the ack, the ack is right and the segment took other bytes than were sent: ``stores`` (the clause that
        decides what this append stores) broke; else the ack's offset is wrong."""
        got = answer["current_segment_write_offset"]
        segment = self._segments.get(writer)
        if segment is not None and self.info(segment)["write_offset"] == got:
            return self.diverge(stores, f"the segment {offset} bytes long after the append",
                                f"{got} bytes, as the ack and StreamSegmentInfo both say")
        return self.diverge("pravega.append.write-offset", f"currentSegmentWriteOffset {offset}", self._text(answer))

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

    def put_key(self, table: str, key: bytes, value: bytes, version: int = cmd.NO_VERSION, above: int | None = None,
                clause_id: str = "pravega.table.update") -> int:
        """Write one key; its new version, which must exceed ``above`` (the key's previous version) under the
        version-bump clause, whichever case relies on it."""
        (new,) = self.put(table, [(key, version, value)], clause_id)["updated_versions"]
        if above is not None and new <= above:
            raise self.diverge("pravega.table.version-bump", f"{key!r} at a version above {above}", str(new))
        return new

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

    def removed(self, table: str, keys: list[tuple[bytes, int]]) -> None:
        """Remove ``keys`` (key, version condition); they then read as missing, under the remove clause whichever
        case relies on it."""
        self.remove(table, keys)
        read = self.get(table, [k for k, _ in keys], "pravega.table.remove")
        kept = {k: v for k, (v, _) in read.items() if v != cmd.NOT_EXISTS}
        if kept:
            raise self.diverge("pravega.table.remove", "the removed keys read as missing (version -1)",
                               f"still there: {kept}")


def server_range(target) -> tuple[int, int]:
    """(high, low): the server's own version range, from its Hello on a connection of its own."""
    answer = Pravega(target, target.connect(login=False)).hello()
    return answer["high_version"], answer["low_version"]


def needs_wire_version(target, version: int, command: str) -> None:
    """A command newer than the server's wire version is not one it has (UNIMPLEMENTED): Pravega 0.13.0 speaks 16
    (WireCommands.java:66 at v0.13.0) and closes the connection on a type it does not know. Under --differential an
    oracle that speaks an older version than the command's is asked it too, but its answer is no comparison."""
    session = target.connect(login=False)
    high = Pravega(target, session).hello()["high_version"]
    if high < version:
        raise Unimplemented(f"{command} is a wire version {version} command; the server's Hello tops at {high}")
    oracle = getattr(session, "oracle_reply", None)  # a mirrored session: the oracle's Hello
    try:
        oracle_high = cmd.decode(oracle.frame)["high_version"] if oracle is not None and oracle.is_frame else version
    except (DecodeError, KeyError):
        oracle_high = version
    if oracle_high < version:
        target.beyond_comparison(f"{command} is a wire version {version} command; the oracle's Hello tops at "
                                 f"{oracle_high}")


def new_segment(target, stem: str = "s", data: list[bytes] = ()) -> tuple[Pravega, str]:
    """A client and a fresh segment (optionally holding ``data`` as events, appended by a throwaway writer)."""
    client = Pravega(target)
    name = segment_name(target, stem)
    with target.precondition(f"segment {name} created"):
        client.create(name)
    if data:
        with target.precondition(f"{len(data)} event(s) appended to {name}"):
            writer = client.new_writer(name)
            client.append(writer, list(data), len(data), offset=sum(len(cmd.event(e)) for e in data))
    return client, name


def segment_with(target, data: list[bytes], stem: str = "s") -> tuple[Pravega, str, int]:
    """(client, segment, offset where ``data`` starts): a configured segment when the user named one (it may hold
    older bytes and gain newer ones from other writers while the case runs), else a fresh one."""
    shared = configured_segments(target)
    if not shared:
        client, name = new_segment(target, stem, data)
        return client, name, 0
    client, name = Pravega(target), shared[0]
    size = sum(len(cmd.event(e)) for e in data)
    with target.precondition(f"{len(data)} event(s) appended to {name}"):
        writer = client.new_writer(name)
        end = client.append(writer, list(data), len(data))["current_segment_write_offset"] if data else \
            client.info(name)["write_offset"]
    return client, name, end - size


def table_with_keys(target, stem: str = "t") -> tuple[Pravega, str, bytes]:
    """(client, table, key prefix): a configured table (``pravega.tables=NAME,...``) with a prefix no other case
    uses, when the user named one; else a fresh table and an empty prefix."""
    named = [n.strip() for n in target.options.get("tables", "").split(",") if n.strip()]
    if not named:
        return (*new_table(target, stem), b"")
    return Pravega(target), named[0], target.unique(stem).encode() + b"/"


def new_table(target, stem: str = "t") -> tuple[Pravega, str]:
    client = Pravega(target)
    name = segment_name(target, stem)
    with target.precondition(f"table segment {name} created"):
        client.create_table(name)
    return client, name
