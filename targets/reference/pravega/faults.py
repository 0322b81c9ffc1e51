"""The clauses the Pravega personality can be told to break (``--fault pravega.NAME``), one line each.

Each description names the rule and where it is stated: the byte-level notes (specs/pravega.md §n, An =
ambiguity n of §11) and the upstream file they cite.
"""

FAULTS: dict[str, str] = {
    "pravega.ack-previous-wrong":
        "DataAppended.previousEventNumber is the previous ack's eventNumber (the AppendSetup value for the first; "
        "notes §7.2, WS:191-197); this always answers previousEventNumber = eventNumber - 1",
    "pravega.write-offset-before-append":
        "DataAppended.currentSegmentWriteOffset is the segment length after the append (notes §7.2); this answers "
        "the length before it",
    "pravega.read-tail-answered":
        "A read at the tail of an unsealed segment is parked until data arrives (notes §7.4, SSRI:739-812); this "
        "answers at once with an empty SegmentRead",
    "pravega.sealed-accepts-appends":
        "An append to a sealed segment gets SegmentIsSealed and appends nothing (notes §7.2, AP:471-474); this "
        "appends and acknowledges",
    "pravega.hello-version-too-low":
        "The server's Hello carries its version range, 17/5 (notes §6, §9); this answers Hello(4, 4), below the "
        "oldest compatible version",
    "pravega.unknown-type-error-frame":
        "An unknown type code closes the connection without a reply (notes §8, CD:77-84); this answers an "
        "ErrorMessage and keeps the connection open",
    "pravega.table-version-not-bumped":
        "Updating a table key gives it a new, greater version (notes §4.6); this keeps the key's old version",
    "pravega.error-request-id-zero":
        "Error replies carry the request's requestId (notes §7.1); this sends NoSuchSegment and "
        "SegmentAlreadyExists with requestId 0",
    "pravega.truncated-read-served":
        "A read below the start offset gets SegmentIsTruncated (notes §7.4, PRP:289-297); this answers an empty "
        "SegmentRead",
    "pravega.lower-event-number-acked":
        "An event number lower than the writer's last closes the connection (notes §7.2, WS:125, AD:170-176); "
        "this appends and acknowledges it",
    "pravega.conditional-offset-ignored":
        "A conditional append at the wrong offset gets ConditionalCheckFailed (notes §7.3, AP:383-390); this "
        "appends it anyway",
    "pravega.attribute-cas-ignored":
        "UpdateSegmentAttribute changes the value only when expectedValue matches (notes §7.5, PRP:382-415); this "
        "always sets it",
    "pravega.create-twice-ok":
        "Creating an existing segment gets SegmentAlreadyExists (notes §7.5); this answers SegmentCreated",
    "pravega.keepalive-ignored":
        "KeepAlive is echoed (notes §6, AP:167-170); this never answers it",
    "pravega.oversize-waits":
        "A length above 16,777,207 closes the connection at once (notes §1, PCL:180); this waits for the payload",
    "pravega.partial-event-dropped":
        "A PartialEvent trailer's bytes are part of the append (notes §5.3 rule 4, AD:215-241); this drops them",
    "pravega.standard-utf8-replies":
        "Reply strings are modified UTF-8 (NUL as C0 80; notes §2, A2); this writes them as standard UTF-8",
    "pravega.crash-on-huge-count":
        "A hostile list count costs one connection at most (notes §8; ARCHITECTURE 'reference broker'); a table "
        "command whose count exceeds its payload wedges the whole broker",
    "pravega.no-such-segment-offset-lost":
        "A read of a missing segment gets NoSuchSegment carrying the requested offset (notes §7.4, PRP:1169-1172); "
        "this sends offset -1",
}
