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
    "pravega.sealed-append-offset-is-length":
        "SegmentIsSealed on the append path carries the event number in its offset (notes §7.2, A15, AP:473); "
        "this sends the segment's length",
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
        "Creating an existing stream segment gets SegmentAlreadyExists (notes §7.5); this answers SegmentCreated "
        "(a table segment's second creation is table-create-twice-ok's)",
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
    # -- appends
    "pravega.ack-first-event-number":
        "DataAppended.eventNumber is the block's lastEventNumber (notes §7.2, AP:358-410); this acks the block's "
        "first event number (lastEventNumber - numEvents + 1)",
    "pravega.num-events-unchecked":
        "An AppendBlockEnd with numEvents <= 0 closes the connection (notes §5.3 rule 3, AD:167-188); this appends "
        "and acknowledges it",
    "pravega.conditional-event-type-unchecked":
        "A ConditionalAppend whose nested event type is not 0 closes the connection (notes §4.2); this appends it",
    "pravega.writer-moved-unchecked":
        "An append after another connection moved the writer's event number gets InvalidEventNumber and a close "
        "(notes §7.2, AP:479-482); this appends and acknowledges it",
    "pravega.padding-trailer-rejected":
        "A block ended by a Padding trailer stores its whole events (notes §5.2 B1, §5.3 rule 4); this closes the "
        "connection on such a block",
    "pravega.resetup-returns-min":
        "A new SetupAppend returns the writer's last acknowledged event number (notes §7.2 Client numbering); this "
        "always answers Long.MIN_VALUE",
    "pravega.setup-new-writer-zero":
        "AppendSetup.lastEventNumber is Long.MIN_VALUE for a writer the segment never saw (notes §7.2, AP:179-233); "
        "this answers 0",
    "pravega.setup-missing-closes":
        "SetupAppend on a missing segment gets NoSuchSegment, the connection staying open (notes §7.2); this closes "
        "the connection",
    "pravega.standalone-size-checked":
        "A standalone AppendBlockEnd appends its data whatever sizeOfWholeEvents says (notes §5.2 C, AD:191-193); "
        "this closes the connection when the size is outside 0..len(data)",
    "pravega.event-headers-stripped":
        "Appended bytes are stored verbatim, Event headers included (notes §5.1); this stores whole events' payloads "
        "without their 8-byte headers",
    "pravega.transient-name-is-parent":
        "CreateTransientSegment answers SegmentCreated naming a new segment (notes §4.2); this names the parent",
    "pravega.unset-writer-ignored":
        "An append for a writerId without SetupAppend on this connection closes it (notes §5.3 rule 2, AD:242-248); "
        "this ignores the append and keeps the connection open",
    # -- framing, strings, Hello
    "pravega.max-payload-refused":
        "A payload of exactly 16,777,207 bytes is accepted (notes §1, §9, PCL:180); this limit is one byte lower",
    "pravega.reply-type-ignored":
        "A reply-only, embedded-only or admin-port command closes the connection (notes §4.1, §8); this ignores it",
    "pravega.read-requires-request-id":
        "Optional trailing fields may be absent (notes §1); this closes the connection on a ReadSegment without its "
        "requestId",
    "pravega.top-level-padding-closes":
        "A top-level Padding frame is accepted and not answered (notes §5.3 rule 7, AD:113-115); this closes the "
        "connection",
    "pravega.split-frame-dropped":
        "A frame arriving in pieces is processed once complete (notes §1); this closes the connection when a started "
        "frame is not whole within 50 ms",
    "pravega.pipelined-info-coalesced":
        "Pipelined frames are each answered (notes §7.1); this leaves unanswered a GetStreamSegmentInfo for the "
        "segment the previous one named when it was sent before that one's answer (queued behind it)",
    "pravega.info-length-short":
        "A reply's length field counts its payload exactly (notes §1); this writes StreamSegmentInfo's length one "
        "byte short",
    "pravega.trailing-bytes-close":
        "Bytes after a command's known fields are skipped (notes §1 Surplus payload, CD:58-62); this closes the "
        "connection",
    "pravega.truncated-answered":
        "A payload shorter than its fields closes the connection without a reply (notes §1, §8, SCIH:74-77); this "
        "answers an ErrorMessage and keeps the connection open (other undecodable payloads still close it)",
    "pravega.invalid-utf8-accepted":
        "A string readUTF rejects (4-byte sequence, stray continuation) closes the connection (notes §2, §8); this "
        "decodes it leniently and serves the request",
    "pravega.hello-echoes-client-range":
        "Hello is answered with the server's own version range, 17/5, whatever the client's (notes §6, "
        "AP:157-164); this echoes the client's range",
    "pravega.incompatible-hello-stays-open":
        "A Hello whose range does not meet the server's is answered, then the connection closes (notes §6); this "
        "keeps it open",
    "pravega.hello-required":
        "Commands are served without a prior Hello (notes §6); this closes a connection whose first command is not "
        "Hello",
    # -- reads
    "pravega.beyond-sealed-read-served":
        "A read beyond a sealed segment's end gets ErrorMessage or a close (notes §7.4); this answers an empty "
        "SegmentRead with endOfSegment",
    "pravega.sealed-end-not-flagged":
        "A read at a sealed segment's length gets an empty SegmentRead with endOfSegment (notes §7.4, SSRI:920-934); "
        "this answers atTail and endOfSegment false",
    "pravega.read-skips-first-byte":
        "A SegmentRead holds the segment's bytes from the requested offset (notes §7.4, PRP:222-371); this starts one "
        "byte later",
    "pravega.parked-read-ignores-seal":
        "A read parked at the tail is answered when the segment is sealed (notes §7.4, triggerFutureReads); this "
        "leaves it parked",
    "pravega.suggested-length-unclamped":
        "suggestedLength is clamped to at least 8 (notes §7.4 Size, A9; PRP:160); this honours 0 and negative "
        "values with an empty SegmentRead",
    # -- segments and attributes
    "pravega.created-sealed":
        "A created segment is empty and unsealed (notes §7.5, PRP:470-503); this creates it sealed",
    "pravega.delete-keeps-segment":
        "A deleted segment is gone (notes §7.5); this answers SegmentDeleted and keeps it",
    "pravega.info-start-offset-zero":
        "StreamSegmentInfo.startOffset is the segment's start offset (notes §7.5, PRP:445-467); this always sends 0",
    "pravega.locate-offset-past-length":
        "OffsetLocated.offset is at most the segment's length (notes §4.3, §7.5); this answers the length + 1",
    "pravega.merge-offset-before":
        "SegmentsMerged.newTargetWriteOffset is the target's length after the merge (notes §4.4, §7.5, PRP:522-576); "
        "this sends the length before it",
    "pravega.merge-batch-offset-before":
        "SegmentsBatchMerged lists each source with the target's length after it (notes §4.4, WC:1634-1709); this "
        "lists the length before it",
    "pravega.seal-missing-error-message":
        "Sealing a missing segment gets NoSuchSegment (notes §7.5, §7.6); this answers ErrorMessage",
    "pravega.policy-unsupported":
        "UpdateSegmentPolicy on an existing segment gets SegmentPolicyUpdated (notes §7.5); this answers "
        "OperationUnsupported",
    "pravega.seal-twice-ok":
        "Sealing a sealed segment gets SegmentIsSealed (notes §7.5, SMUT:360-363); this answers SegmentSealed",
    "pravega.truncate-past-length-ok":
        "TruncateSegment beyond the length gets SegmentIsTruncated (notes §7.5, SMUT:378-384); this answers "
        "SegmentTruncated and moves nothing",
    "pravega.unset-attribute-zero":
        "An attribute never set reads as Long.MIN_VALUE (notes §4.3, §7.5, WC:72); this answers 0",
    # -- tables
    "pravega.table-conditional-partial":
        "A batch with a failed version condition changes none of its keys (notes §4.6, §7.6); this still applies "
        "the batch's unconditional entries",
    "pravega.table-create-twice-ok":
        "Creating an existing table segment gets SegmentAlreadyExists (notes §4.6, §7.6); this answers "
        "SegmentCreated",
    "pravega.delete-table-ignores-must-be-empty":
        "DeleteTableSegment with mustBeEmpty on a table holding keys gets TableSegmentNotEmpty (notes §4.6, §7.6); "
        "this deletes it",
    "pravega.delta-ignores-position":
        "ReadTableEntriesDelta returns only changes after fromPosition (notes §4.6); this always reads from 0",
    "pravega.table-info-count-zero":
        "TableSegmentInfo.entryCount is the number of live keys (notes §4.6); this always sends 0",
    "pravega.iterate-token-first-key":
        "Table iteration returns every key once, following the continuation token (notes §4.6); this token resumes "
        "after the page's first key, so keys repeat",
    "pravega.read-table-drops-missing":
        "ReadTable returns every requested key, a missing one with version -1 (notes §4.6); this leaves missing keys "
        "out",
    "pravega.remove-keys-ignored":
        "Removed keys then read as missing (notes §4.6); this answers TableKeysRemoved and keeps them",
    "pravega.update-versions-reversed":
        "TableEntriesUpdated holds one version per entry, in order (notes §4.6); this lists them in reverse order",
    "pravega.table-update-hangs":
        "A request that permits an answer is answered (notes §8); this applies UpdateTableEntries and never answers",
    # -- auth
    "pravega.auth-failure-closes":
        "A wrong delegation token gets AuthTokenCheckFailed(code 0) and the connection stays open (notes §7.6: only "
        "an expired token closes, and only on the append path); this closes the connection after the rejection",
}


#: Other readings the notes permit (``--variant``): the whole suite must pass against each.
VARIANTS: dict[str, str] = {
    "pravega.equal-event-number-closes":
        "An append whose event number equals the writer's last closes the connection, nothing stored (notes §7.2 "
        "Equal event number, A24: derived from the code, no upstream test; the reference stores it without an ack)",
    "pravega.beyond-sealed-closes":
        "A read beyond a sealed segment's end or at a negative offset closes the connection (notes §7.4: upstream's "
        "path when the segment's metadata is loaded; the reference answers ErrorMessage(code 0))",
    "pravega.read-auth-offset-as-request-id":
        "A ReadSegment with a wrong token gets AuthTokenCheckFailed whose requestId is the read's offset, as "
        "upstream does (notes §7.4, A16, PRP:228; the reference echoes the requestId). Only with --pravega-auth-token",
    "pravega.short-reads":
        "A SegmentRead holds at most half the bytes left from its offset (rounded up): fewer than asked even when "
        "more exist (notes §7.4 Size, A8: one reply, possibly short; the reference gives up to suggestedLength)",
}
