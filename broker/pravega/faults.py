"""The clauses the Pravega personality can be told to break (``--fault pravega.NAME``), one line each, and the
other readings the notes permit (``--variant pravega.NAME``), as the personality's two typed objects (switches.py).

Each description names the rule and where it is stated: the byte-level notes (specs/pravega.md §n, An =
ambiguity n of §11) and the upstream file they cite. A handler asks ``self.faults.<name>`` (or
``self.variants.<name>``) at the point where the clause is kept or broken.
"""

from wirecheck.broker.pravega.faults_safety import SafetyFaults
from wirecheck.broker.switches import Switch, Switches


class PravegaFaults(SafetyFaults, Switches):
    personality = "pravega"

    ack_previous_wrong = Switch(
        "DataAppended.previousEventNumber is the previous ack's eventNumber (the AppendSetup value for the first; "
        "notes §7.2, WS:191-197); this always answers previousEventNumber = eventNumber - 1")
    write_offset_before_append = Switch(
        "DataAppended.currentSegmentWriteOffset is the segment length after the append (notes §7.2); this answers "
        "the length before it")
    read_tail_answered = Switch(
        "A read at the tail of an unsealed segment is parked until data arrives (notes §7.4, SSRI:739-812); this "
        "answers at once with an empty SegmentRead")
    sealed_append_offset_is_length = Switch(
        "SegmentIsSealed on the append path carries the event number in its offset (notes §7.2, A15, AP:473); "
        "this sends the segment's length")
    sealed_accepts_appends = Switch(
        "An append to a sealed segment gets SegmentIsSealed and appends nothing (notes §7.2, AP:471-474); this "
        "appends and acknowledges")
    hello_version_too_low = Switch(
        "The server's Hello carries its version range, 17/5 (notes §6, §9); this answers Hello(4, 4), below the "
        "oldest compatible version")
    unknown_type_error_frame = Switch(
        "An unknown type code closes the connection without a reply (notes §8, CD:77-84); this answers an "
        "ErrorMessage and keeps the connection open")
    table_version_not_bumped = Switch(
        "Updating a table key gives it a new, greater version (notes §4.6); this keeps the key's old version")
    error_request_id_zero = Switch(
        "Error replies carry the request's requestId (notes §7.1); this sends NoSuchSegment and "
        "SegmentAlreadyExists with requestId 0")
    truncated_read_served = Switch(
        "A read below the start offset gets SegmentIsTruncated (notes §7.4, PRP:289-297); this answers an empty "
        "SegmentRead")
    lower_event_number_acked = Switch(
        "An event number lower than the writer's last closes the connection (notes §7.2, WS:125, AD:170-176); "
        "this appends and acknowledges it")
    conditional_offset_ignored = Switch(
        "A conditional append at the wrong offset gets ConditionalCheckFailed (notes §7.3, AP:383-390); this "
        "appends it anyway")
    attribute_cas_ignored = Switch(
        "UpdateSegmentAttribute changes the value only when expectedValue matches (notes §7.5, PRP:382-415); this "
        "always sets it")
    create_twice_ok = Switch(
        "Creating an existing stream segment gets SegmentAlreadyExists (notes §7.5); this answers SegmentCreated "
        "(a table segment's second creation is table-create-twice-ok's)")
    keepalive_ignored = Switch("KeepAlive is echoed (notes §6, AP:167-170); this never answers it")
    oversize_waits = Switch(
        "A length above 16,777,207 closes the connection at once (notes §1, PCL:180); this waits for the payload")
    partial_event_dropped = Switch(
        "A PartialEvent trailer's bytes are part of the append (notes §5.3 rule 4, AD:215-241); this drops them")
    standard_utf8_replies = Switch(
        "Reply strings are modified UTF-8 (NUL as C0 80; notes §2, A2); this writes them as standard UTF-8")
    crash_on_huge_count = Switch(
        "A hostile list count costs one connection at most (notes §8; ARCHITECTURE 'reference broker'); a table "
        "command whose count exceeds its payload wedges the whole broker")
    no_such_segment_offset_lost = Switch(
        "A read of a missing segment gets NoSuchSegment carrying the requested offset (notes §7.4, PRP:1169-1172); "
        "this sends offset -1")
    # -- appends
    ack_first_event_number = Switch(
        "DataAppended.eventNumber is the block's lastEventNumber (notes §7.2, AP:358-410); this acks the block's "
        "first event number (lastEventNumber - numEvents + 1)")
    num_events_unchecked = Switch(
        "An AppendBlockEnd with numEvents <= 0 closes the connection (notes §5.3 rule 3, AD:167-188); this appends "
        "and acknowledges it")
    conditional_event_type_unchecked = Switch(
        "A ConditionalAppend whose nested event type is not 0 closes the connection (notes §4.2); this appends it")
    writer_moved_unchecked = Switch(
        "An append after another connection moved the writer's event number gets InvalidEventNumber and a close "
        "(notes §7.2, AP:479-482); this appends and acknowledges it")
    padding_trailer_rejected = Switch(
        "A block ended by a Padding trailer stores its whole events (notes §5.2 B1, §5.3 rule 4); this closes the "
        "connection on such a block")
    resetup_returns_min = Switch(
        "A new SetupAppend returns the writer's last acknowledged event number (notes §7.2 Client numbering); this "
        "always answers Long.MIN_VALUE")
    setup_new_writer_zero = Switch(
        "AppendSetup.lastEventNumber is Long.MIN_VALUE for a writer the segment never saw (notes §7.2, AP:179-233); "
        "this answers 0")
    setup_missing_closes = Switch(
        "SetupAppend on a missing segment gets NoSuchSegment, the connection staying open (notes §7.2); this closes "
        "the connection")
    standalone_size_checked = Switch(
        "A standalone AppendBlockEnd appends its data whatever sizeOfWholeEvents says (notes §5.2 C, AD:191-193); "
        "this closes the connection when the size is outside 0..len(data)")
    event_headers_stripped = Switch(
        "Appended bytes are stored verbatim, Event headers included (notes §5.1); this stores whole events' payloads "
        "without their 8-byte headers")
    transient_name_is_parent = Switch(
        "CreateTransientSegment answers SegmentCreated naming a new segment (notes §4.2); this names the parent")
    unset_writer_ignored = Switch(
        "An append for a writerId without SetupAppend on this connection closes it (notes §5.3 rule 2, AD:242-248); "
        "this ignores the append and keeps the connection open")
    # -- framing, strings, Hello
    max_payload_refused = Switch(
        "A payload of exactly 16,777,207 bytes is accepted (notes §1, §9, PCL:180); this limit is one byte lower")
    reply_type_ignored = Switch(
        "A reply-only, embedded-only or admin-port command closes the connection (notes §4.1, §8); this ignores it")
    read_requires_request_id = Switch(
        "Optional trailing fields may be absent (notes §1); this closes the connection on a ReadSegment without its "
        "requestId")
    top_level_padding_closes = Switch(
        "A top-level Padding frame is accepted and not answered (notes §5.3 rule 7, AD:113-115); this closes the "
        "connection")
    split_frame_dropped = Switch(
        "A frame arriving in pieces is processed once complete (notes §1); this closes the connection when a started "
        "frame is not whole within 50 ms")
    pipelined_info_coalesced = Switch(
        "Pipelined frames are each answered (notes §7.1); this leaves unanswered a GetStreamSegmentInfo for the "
        "segment the previous one named when it was sent before that one's answer (queued behind it)")
    info_length_short = Switch(
        "A reply's length field counts its payload exactly (notes §1); this writes StreamSegmentInfo's length one "
        "byte short")
    trailing_bytes_close = Switch(
        "Bytes after a command's known fields are skipped (notes §1 Surplus payload, CD:58-62); this closes the "
        "connection")
    truncated_answered = Switch(
        "A payload shorter than its fields closes the connection without a reply (notes §1, §8, SCIH:74-77); this "
        "answers an ErrorMessage and keeps the connection open (other undecodable payloads still close it)")
    invalid_utf8_accepted = Switch(
        "A string readUTF rejects (4-byte sequence, stray continuation) closes the connection (notes §2, §8); this "
        "decodes it leniently and serves the request")
    hello_echoes_client_range = Switch(
        "Hello is answered with the server's own version range, 17/5, whatever the client's (notes §6, "
        "AP:157-164); this echoes the client's range")
    incompatible_hello_stays_open = Switch(
        "A Hello whose range does not meet the server's is answered, then the connection closes (notes §6); this "
        "keeps it open")
    hello_required = Switch(
        "Commands are served without a prior Hello (notes §6); this closes a connection whose first command is not "
        "Hello")
    # -- reads
    beyond_sealed_read_served = Switch(
        "A read beyond a sealed segment's end gets ErrorMessage or a close (notes §7.4); this answers an empty "
        "SegmentRead with endOfSegment")
    sealed_end_not_flagged = Switch(
        "A read at a sealed segment's length gets an empty SegmentRead with endOfSegment (notes §7.4, SSRI:920-934); "
        "this answers atTail and endOfSegment false")
    read_skips_first_byte = Switch(
        "A SegmentRead holds the segment's bytes from the requested offset (notes §7.4, PRP:222-371); this starts one "
        "byte later")
    parked_read_ignores_seal = Switch(
        "A read parked at the tail is answered when the segment is sealed (notes §7.4, triggerFutureReads); this "
        "leaves it parked")
    suggested_length_unclamped = Switch(
        "suggestedLength is clamped to at least 8 (notes §7.4 Size, A9; PRP:160); this honours 0 and negative "
        "values with an empty SegmentRead")
    writer_read_size_closes = Switch(
        "suggestedLength is clamped to at least 8 whatever else the connection does (notes §7.4 Size, A9; "
        "PRP:160); on a connection holding a writer (a SetupAppend answered), this closes the connection on a "
        "suggestedLength below 1 (hidden behind a session state: bench/guided.py)")
    # -- segments and attributes
    created_sealed = Switch("A created segment is empty and unsealed (notes §7.5, PRP:470-503); this creates it sealed")
    delete_keeps_segment = Switch("A deleted segment is gone (notes §7.5); this answers SegmentDeleted and keeps it")
    info_start_offset_zero = Switch(
        "StreamSegmentInfo.startOffset is the segment's start offset (notes §7.5, PRP:445-467); this always sends 0")
    locate_offset_past_length = Switch(
        "OffsetLocated.offset is at most the segment's length (notes §4.3, §7.5); this answers the length + 1")
    merge_offset_before = Switch(
        "SegmentsMerged.newTargetWriteOffset is the target's length after the merge (notes §4.4, §7.5, PRP:522-576); "
        "this sends the length before it")
    merge_batch_offset_before = Switch(
        "SegmentsBatchMerged lists each source with the target's length after it (notes §4.4, WC:1634-1709); this "
        "lists the length before it")
    seal_missing_error_message = Switch(
        "Sealing a missing segment gets NoSuchSegment (notes §7.5, §7.6); this answers ErrorMessage")
    policy_unsupported = Switch(
        "UpdateSegmentPolicy on an existing segment gets SegmentPolicyUpdated (notes §7.5); this answers "
        "OperationUnsupported")
    seal_twice_ok = Switch(
        "Sealing a sealed segment gets SegmentIsSealed (notes §7.5, SMUT:360-363); this answers SegmentSealed")
    truncate_past_length_ok = Switch(
        "TruncateSegment beyond the length gets SegmentIsTruncated (notes §7.5, SMUT:378-384); this answers "
        "SegmentTruncated and moves nothing")
    unset_attribute_zero = Switch(
        "An attribute never set reads as Long.MIN_VALUE (notes §4.3, §7.5, WC:72); this answers 0")
    # -- tables
    table_conditional_partial = Switch(
        "A batch with a failed version condition changes none of its keys (notes §4.6, §7.6); this still applies "
        "the batch's unconditional entries")
    table_create_twice_ok = Switch(
        "Creating an existing table segment gets SegmentAlreadyExists (notes §4.6, §7.6); this answers "
        "SegmentCreated")
    delete_table_ignores_must_be_empty = Switch(
        "DeleteTableSegment with mustBeEmpty on a table holding keys gets TableSegmentNotEmpty (notes §4.6, §7.6); "
        "this deletes it")
    delta_ignores_position = Switch(
        "ReadTableEntriesDelta returns only changes after fromPosition (notes §4.6); this always reads from 0")
    table_info_count_zero = Switch(
        "TableSegmentInfo.entryCount is the number of live keys (notes §4.6); this always sends 0")
    iterate_token_first_key = Switch(
        "Table iteration returns every key once, following the continuation token (notes §4.6); this token resumes "
        "after the page's first key, so keys repeat")
    read_table_drops_missing = Switch(
        "ReadTable returns every requested key, a missing one with version -1 (notes §4.6); this leaves missing keys "
        "out")
    remove_keys_ignored = Switch(
        "Removed keys then read as missing (notes §4.6); this answers TableKeysRemoved and keeps them")
    update_versions_reversed = Switch(
        "TableEntriesUpdated holds one version per entry, in order (notes §4.6); this lists them in reverse order")
    table_update_hangs = Switch(
        "A request that permits an answer is answered (notes §8); this applies UpdateTableEntries and never answers")
    # -- auth
    auth_failure_closes = Switch(
        "A wrong delegation token gets AuthTokenCheckFailed(code 0) and the connection stays open (notes §7.6: only "
        "an expired token closes, and only on the append path); this closes the connection after the rejection")


class PravegaVariants(Switches):
    """Other readings the notes permit (``--variant``): the whole suite must pass against each."""

    personality = "pravega"

    table_info_count_converges = Switch(
        "TableSegmentInfo.entryCount is eventually consistent: each ask answers the count the previous ask saw, so "
        "a count asked right after a change lags it once (TableSegmentInfo.java: 'will converge towards the actual "
        "number of unique keys'; upstream adds an index attribute and a tail-cache delta)")
    equal_event_number_closes = Switch(
        "An append whose event number equals the writer's last closes the connection, nothing stored (notes §7.2 "
        "Equal event number, A24: derived from the code, no upstream test; the reference stores it without an ack)")
    beyond_sealed_closes = Switch(
        "A read beyond a sealed segment's end or at a negative offset closes the connection (notes §7.4: upstream's "
        "path when the segment's metadata is loaded; the reference answers ErrorMessage(code 0))")
    read_auth_offset_as_request_id = Switch(
        "A ReadSegment with a wrong token gets AuthTokenCheckFailed whose requestId is the read's offset, as "
        "upstream does (notes §7.4, A16, PRP:228; the reference echoes the requestId). Only with --pravega-auth-token")
    negative_truncate_closes = Switch(
        "A TruncateSegment at a negative offset closes the connection, as Pravega 0.13.0 does (its truncate "
        "operation refuses the offset on the connection's thread: StreamSegmentTruncateOperation.java:51; the "
        "reference answers SegmentIsTruncated)")
    negative_conditional_appends = Switch(
        "A ConditionalAppend or ConditionalBlockEnd at a negative expected offset is appended at the end, as Pravega "
        "0.13.0 does (an append offset below 0 is none: SegmentMetadataUpdateTransaction.java:297-307; the "
        "reference answers ConditionalCheckFailed)")
    short_reads = Switch(
        "A SegmentRead holds at most half the bytes left from its offset (rounded up): fewer than asked even when "
        "more exist (notes §7.4 Size, A8: one reply, possibly short; the reference gives up to suggestedLength)")


FAULTS: dict[str, str] = PravegaFaults.catalogue()
VARIANTS: dict[str, str] = PravegaVariants.catalogue()
