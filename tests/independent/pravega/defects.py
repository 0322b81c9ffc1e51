"""Deliberate defects, each breaking ONE requirement of the notes.

``DEFECTS`` maps a defect name to (the requirement it breaks, the notes section).
The server consults ``Defects.on(name)`` at a clearly named point; grep for the name.
"""

from __future__ import annotations

DEFECTS: dict[str, tuple[str, str]] = {
    "hello-versions-swapped": (
        "Hello's payload is highVersion:i32 then lowVersion:i32, and the server replies "
        "Hello(17, 5); this writes the two fields the other way round: Hello(5, 17).",
        "4.1 Hello; 6 Handshake"),
    "incompatible-hello-kept-open": (
        "After replying to an incompatible Hello (low > 17 or high < 5) the server closes the "
        "connection; this keeps it open.",
        "6 Handshake; 8 error matrix"),
    "keepalive-not-echoed": (
        "The server echoes a KeepAlive back; this ignores it.",
        "4.1 KeepAlive; 7.5"),
    "frame-limit-ignored": (
        "length + 8 > 0xFFFFFF closes the connection (TooLongFrameException); this accepts "
        "payloads up to 32 MiB.",
        "1 Framing (server frame limit); 8"),
    "unknown-type-ignored": (
        "An unknown type code closes the connection; this skips the frame and carries on.",
        "1 Type lookup; 3; 8"),
    "surplus-bytes-rejected": (
        "Bytes past the known fields (inside length) are skipped; this closes the connection.",
        "1 Surplus payload; 8"),
    "utf8-4byte-accepted": (
        "readUTF rejects 4-byte UTF-8 sequences and the connection is closed; this accepts them.",
        "2 Primitive encodings (str); 8"),
    "wrong-request-id": (
        "The server copies the request's requestId into every reply; this echoes requestId+1 "
        "in replies to segment/table requests (not on the append path).",
        "7.1 requestId"),
    "dataappended-event-off-by-one": (
        "DataAppended.eventNumber is the block's lastEventNumber; this sends lastEventNumber+1.",
        "0 Key facts; 7.2"),
    "dataappended-prev-not-setup-value": (
        "The first ack's previousEventNumber is AppendSetup.lastEventNumber (Long.MIN_VALUE for "
        "a new writer); this sends 0 when the previous ack level is Long.MIN_VALUE.",
        "7.2 Ack invariants; 11.6"),
    "dataappended-stale-offset": (
        "currentSegmentWriteOffset is the segment length after the append; this sends the "
        "length before it.",
        "0 Key facts; 7.2"),
    "equal-event-number-acked": (
        "An append with an event number equal to the last stored one is appended but not acked "
        "(acks strictly increase); this acks it again.",
        "7.2 Equal event number; Ack invariants"),
    "lower-event-number-accepted": (
        "An event number lower than the last stored closes the connection with no reply; this "
        "appends and acks it.",
        "7.2 Lower event number; 8"),
    "sealed-append-silent-close": (
        "An append to a sealed segment gets SegmentIsSealed; this closes the connection with "
        "no reply.",
        "7.2 writer state machine; 8"),
    "sealed-append-byte-offset": (
        "SegmentIsSealed on the append path carries the event number in offset; this sends "
        "the segment length.",
        "7.2; 11.15"),
    "invalid-event-number-kept-open": (
        "A writer-attribute CAS conflict replies InvalidEventNumber and then closes; this keeps "
        "the connection open.",
        "7.2; 7.6; 8"),
    "conditional-offset-ignored": (
        "A conditional append whose expectedOffset differs from the segment length gets "
        "ConditionalCheckFailed and is not appended; this appends it.",
        "7.3 Conditional appends"),
    "longpoll-ignores-seal": (
        "A read parked at the tail is ended by a seal with SegmentIsSealed; this leaves it "
        "parked.",
        "7.4 Outcomes by case"),
    "sealed-read-no-eos": (
        "A read at the end of a sealed segment is SegmentRead(atTail=false, endOfSegment=true); "
        "this sends endOfSegment=false.",
        "7.4 Flags; Outcomes by case"),
    "truncated-read-served": (
        "A read below startOffset gets SegmentIsTruncated; this serves data from startOffset.",
        "7.4 Outcomes by case"),
    "nosuchsegment-read-offset": (
        "A read of an unknown segment gets NoSuchSegment(offset = the requested offset); this "
        "sends offset -1.",
        "7.4 Outcomes by case"),
    "read-length-unclamped": (
        "suggestedLength is clamped to [8, 2 MiB]; this returns up to 16 MiB in one SegmentRead.",
        "0 Key facts; 7.4 Size; 9"),
    "create-twice-succeeds": (
        "CreateSegment of an existing segment gets SegmentAlreadyExists; this replies "
        "SegmentCreated.",
        "7.5 CreateSegment"),
    "seal-twice-succeeds": (
        "SealSegment of a sealed segment gets SegmentIsSealed(-1); this replies SegmentSealed.",
        "7.5 SealSegment"),
    "truncate-beyond-length": (
        "TruncateSegment beyond the length gets SegmentIsTruncated; this truncates to the "
        "length and replies SegmentTruncated.",
        "7.5 TruncateSegment"),
    "attribute-cas-ignored": (
        "UpdateSegmentAttribute succeeds only when expected matches; this always sets it and "
        "replies success=true.",
        "7.5 UpdateSegmentAttribute"),
    "table-version-unchecked": (
        "A conditional table update with a wrong key version gets TableKeyBadVersion (or "
        "TableKeyDoesNotExist); this ignores the version and updates.",
        "4.6 TableKey versions; 7.6"),
    "table-missing-key-version": (
        "ReadTable returns a missing key with version -1 (NOT_EXISTS) and an empty value; this "
        "returns version Long.MIN_VALUE.",
        "4.6 TableRead"),
}


class Defects:
    def __init__(self, names: list[str] | None = None) -> None:
        names = list(names or [])
        unknown = [n for n in names if n not in DEFECTS]
        if unknown:
            raise ValueError("unknown defect(s): %s" % ", ".join(unknown))
        self.active = frozenset(names)

    def on(self, name: str) -> bool:
        assert name in DEFECTS, name
        return name in self.active
