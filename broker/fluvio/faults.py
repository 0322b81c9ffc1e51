"""The clauses the Fluvio personality can be told to break (``--fault fluvio.NAME``), one line each.

Each description names the clause and where it is stated: the seed (fluvio-protocol-reference.md), the byte-level
notes (specs/fluvio.md §n, An = ambiguity n of §11) or the upstream file the notes cite. A handler asks
``self.faults.<name>`` (``self.variants.<name>``) at the point where the clause is kept or broken (switches.py).
"""

from wirecheck.broker.fluvio.faults_safety import SafetyFaults
from wirecheck.broker.switches import Switch, Switches


class FluvioFaults(SafetyFaults, Switches):
    """The faults (``--fault fluvio.NAME``): each breaks one clause the suite must then report."""

    personality = "fluvio"

    crc_unchecked = Switch(
        "A produced batch whose CRC-32C (attributes..end, seed 'RecordBatch Encoding', notes §4.2) is wrong "
        "must never be served back with a wrong CRC: the SPU recomputes it on storage (§4.4 step 7, "
        "ST/mut_records.rs), this broker rejects it (§12); this accepts it and Fetch returns the bad CRC")
    error_code_unknown_partition_wrong = Switch(
        "Produce/Fetch/StreamFetch to an unknown topic or partition answer NotLeaderForPartition (6) "
        "(notes §4.4 step 1, §6, A8; produce_handler.rs, fetch_handler.rs); this answers a Produce to a partition "
        "its topic lacks with TopicNotFound (2001)")
    fetch_hw_off_by_one = Switch(
        "Fetch high_watermark is the offset after the last committed record (notes §5.2, ST/replica.rs "
        "read_records); this answers HW + 1")
    produce_base_offset_wrong = Switch(
        "ProduceResponse base_offset is the LEO before the write, the first record's offset (notes §4.4 "
        "step 8); this answers the LEO after the write")
    apiversions_overadvertise = Switch(
        "ApiVersions lists only versions the server implements (notes §3.1/§3.2, api_versions.rs); this "
        "advertises Produce (0, 26) while a v26 Produce closes the connection")
    stream_fetch_no_updates = Switch(
        "After UpdateOffsets a StreamFetch keeps pushing new records on the same stream (notes §5.4/§5.5, "
        "SPU/services/public/stream_fetch.rs); this sends the first response and then never again")
    fetch_offsets_start_is_hw = Switch(
        "FetchOffsets start_offset is the partition's log start offset and last_stable_offset its HW (notes §5.3, "
        "offset_request.rs start_offset_info); this answers the HW as start_offset")
    fetch_offsets_wrong_code = Switch(
        "FetchOffsets on an unknown partition answers PartitionNotLeader (3001), not 6 (notes §5.3, A8, "
        "offset_request.rs); this answers NotLeaderForPartition (6)")
    compression_error_wrong = Switch(
        "A batch whose compression bits are 5-7 gets CompressionError (9000) (notes §4.4 step 6, §8, "
        "produce_handler.rs validate_records); this answers StorageError (56)")
    stream_open_compression_wrong = Switch(
        "A batch whose compression bits are 5-7 gets CompressionError (9000) (notes §4.4 step 6, "
        "produce_handler.rs validate_records) whatever else the connection does; on a connection with a "
        "StreamFetch stream open, this answers StorageError (56) (hidden behind a session state: bench/guided.py)")
    offsets_follow_record_count = Switch(
        "The LEO advances by last_offset_delta + 1, not by the batch's i32 record count, which the SPU "
        "never reads (notes §4.4 step 7, A6, A14; ST/segment.rs append_batch); this advances by the count")
    negative_size_stays_open = Switch(
        "A frame with a negative size prefix is never followed by an answer (notes §2.1, §7: the SPU panics "
        "or waits for ever; §12: close); this skips the size and answers the requests that follow")
    correlation_id_wrong = Switch(
        "A response carries its request's correlation_id (notes §2.3, FP/api/response.rs); this answers "
        "with correlation_id + 1")
    crash_on_huge_record_count = Switch(
        "A malformed or hostile request costs one connection at most (notes §7, §12; ARCHITECTURE 'reference "
        "broker'); an uncompressed batch whose i32 record count exceeds its bytes wedges the whole broker")
    unknown_key_stays_open = Switch(
        "A request with an unknown api_key closes the connection without a response (notes §7, A16, "
        "SpuServerApiKey::try_from); this stays silent and keeps it open")
    update_offsets_unknown_session_ok = Switch(
        "UpdateOffsets for a session_id that is not an open stream answers FetchSessionNotFoud (3002) "
        "(notes §5.5, offset_update.rs); this answers None (0)")
    stream_id_zero = Switch(
        "StreamFetch stream ids start at 1 on each connection; 0 only marks a refused stream (notes §5.4, "
        "StreamPublishers::next_stream_id); this numbers streams from 0")
    error_payload_missing = Switch(
        "An ErrorCode is an i16 tag followed by its variant's payload, e.g. Other(String) (notes §6, A9, "
        "FP/link/error_code.rs); this writes Other for a fetch beyond the LEO without its String")
    produce_responses_merged = Switch(
        "A ProduceResponse has exactly one entry per request partition entry, in order, even when a "
        "partition repeats (notes §4.1, partition_producer.rs); this merges repeated partitions into one entry")
    throttle_missing = Switch(
        "ProduceResponse carries throttle_time_ms from version 1 on (seed 'ProduceResponse Structure', notes "
        "§4.5); this omits it")
    isolation_strict = Switch(
        "Produce isolation is an i16 where any negative value means ReadCommitted and any other "
        "ReadUncommitted (notes §4.1 IsolationData, A4); this closes the connection on values other than +-1")
    # The Streaming Controller (sc.py), on its own port.
    sc_platform_version_old = Switch(
        "The SC's ApiVersions platform_version is a semver >= 0.9.0, MINIMUM_PLATFORM_VERSION (notes §9 step 4, "
        "crates/fluvio/src/lib.rs); this answers 0.8.0")
    sc_watch_not_advertised = Switch(
        "The SC's ApiVersions lists Watch (1004) with a range overlapping 15..=19 (notes §9 step 3, "
        "sc services/public_api/api_version.rs); this leaves Watch out")
    sc_watch_first_not_all = Switch(
        "A watch's first MetadataUpdate carries every object in 'all' (sc public_api/watch.rs, sync_all); "
        "this sends them as UPDATE changes")
    sc_watch_epoch_stale = Switch(
        "Every change advances the metadata epoch, so a watch update after a change carries a larger epoch "
        "(fluvio-stream-model epoch_map.rs, watch.rs); this pushes the changes but always shows the first epoch")
    sc_watch_changes_missing = Switch(
        "After its first answer a watch pushes each later change as MetadataUpdate.changes (watch.rs "
        "dispatch_loop); this sends the first answer and then nothing")
    sc_create_existing_ok = Switch(
        "Creating a topic that exists answers TopicAlreadyExists (2002) (sc public_api/topic/create.rs); "
        "this answers success")
    sc_invalid_name_accepted = Switch(
        "A topic name other than lowercase letters, digits and inner '-' answers TopicInvalidName (2006) "
        "(fluvio-sc-schema shared.rs validate_resource_name, topic/create.rs); this creates the topic")
    sc_delete_missing_ok = Switch(
        "Deleting a topic that does not exist answers TopicNotFound (2001) (sc public_api/topic/delete.rs); "
        "this answers success")
    sc_unknown_label_answers_empty = Switch(
        "A Watch or List of an object type the SC does not know fails and ends the connection (watch.rs "
        "'Not Valid Watch Request'); this answers an empty list")
    sc_status_name_wrong = Switch(
        "A Create or Delete Status names the object the request named (response.rs Status.name, "
        "topic/create.rs); this answers the name upper-cased")
    version_above_max_silent = Switch(
        "A request above the advertised maximum version is answered (the SPU never checks versions, notes §3.1) "
        "or closes the connection (D2); this reads it and stays silent with the connection open")
    negative_delta_short_circuits = Switch(
        "A batch with a negative last_offset_delta among real ones gets StorageError (56) and later writes "
        "succeed (D5); this takes the SPU's path (A14, ST/replica.rs): the partition answers 73 until restart")
    consumer_offset_not_stored = Switch(
        "UpdateConsumerOffset stores the offset of the stream's consumer, and FetchConsumerOffsets lists it "
        "(notes §5.6, SS/server/consumer_offset.rs); this answers success and stores nothing")
    consumer_offset_unknown_session_ok = Switch(
        "UpdateConsumerOffset for a session_id that is no open stream is an error (notes §5.5/§5.6: no stream, "
        "no consumer); this answers None (0)")
    consumer_offset_delete_ignored = Switch(
        "DeleteConsumerOffset removes the consumer's offset, so FetchConsumerOffsets no longer lists it (notes "
        "§5.6); this answers success and keeps it")
    consumer_offset_filter_ignored = Switch(
        "FetchConsumerOffsets v24+ with filter_opts lists only the consumers that match it (notes §5.6); this "
        "ignores the filter and lists every consumer")
    sc_list_ignores_names = Switch(
        "A List naming objects answers only those (sc public_api/list.rs, objects/list.rs name_filters); this "
        "answers every object of the kind")
    fetch_at_end_is_beyond = Switch(
        "A Fetch at fetch_offset == log end answers error 0 and an empty RecordSet; only an offset past it is Other "
        "(notes §5.2, ST/replica.rs read_records); this compares with >= and answers Other at the end itself")
    fetch_beyond_end_clamped = Switch(
        "A Fetch beyond the log end answers Other (2) with a message (notes §5.2, §6; ST/replica.rs); this clamps "
        "the offset to the log end and answers error 0 with no records")
    fetch_isolation_any_nonzero = Switch(
        "The Fetch and StreamFetch isolation is a u8 enum, 0 or 1; another byte is a decode error that closes the "
        "connection (notes §5.1, A4); this reads it as a bool (any non-zero is ReadCommitted) and serves the "
        "request")
    fetch_max_bytes_ignored = Switch(
        "A Fetch's RecordSet holds at most the request-level max_bytes (notes §5.1, §5.2); this ignores max_bytes "
        "and serves every batch up to the high watermark")
    fetch_starts_one_early = Switch(
        "Fetched batches start at the batch holding fetch_offset (notes §5.2); this looks up fetch_offset - 1 (read "
        "as the last consumed offset), so at a batch's base offset it serves the batch before it too")
    fetch_unknown_partition_3001 = Switch(
        "A Fetch of an unknown topic or partition answers NotLeaderForPartition (6) (notes §5.2, §6, A8; "
        "fetch_handler.rs); this answers FetchOffsets' PartitionNotLeader (3001)")
    fetch_offsets_overtaken = Switch(
        "Requests on one connection are answered one after another, in request order (notes §2.4, "
        "PublicService::respond); this answers FetchOffsets from a task of its own, so requests pipelined behind it "
        "are answered first")
    partial_size_prefix = Switch(
        "A frame is processed once its bytes have all arrived, a size prefix split across segments too (notes §2.1, "
        "FP/codec/mod.rs buffers size + 4 bytes); this takes the prefix's last three bytes from one read (an "
        "unlooped recv), so a prefix split after its second or third byte is misread and the connection ends")
    response_size_u16 = Switch(
        "Every response is an i32 size, then exactly that many bytes (notes §2.1, §2.3; FP/codec/mod.rs "
        "FluvioCodec); this writes the size through a 16-bit field, so an answer over 64 KiB is misframed")
    zero_size_skipped = Switch(
        "A frame of size 0 (no header) ends the connection without a response (notes §7: header decode EOF); this "
        "takes it for a heartbeat and keeps the connection open")
    utf8_lossy = Switch(
        "A request string that is not UTF-8 is a decode error that closes the connection (notes §1, §7); this "
        "decodes it with replacement characters and answers")
    compression_recompressed = Switch(
        "A compressed batch is stored and fetched back as produced, never recompressed (notes §4.4 step 6, §8, §12 "
        "zero-copy-equivalent fetch); this decompresses a gzip batch and stores it compressed again, at level 9")
    empty_produce_base_is_leo = Switch(
        "A RecordSet with no batches, or only batches with last_offset_delta < 0, succeeds with base_offset 0 and "
        "writes nothing (notes §4.4 step 4); this answers the log end as base_offset")
    read_committed_waits_timeout = Switch(
        "On a single replica a ReadCommitted (-1) Produce answers at once, the high watermark moving with the write "
        "(seed 'Isolation Values', notes §4.4 step 9); this waits for follower acknowledgements until the request's "
        "timeout")
    negative_timeout_accepted = Switch(
        "A negative Produce timeout is a decode error that closes the connection (notes §4.1 field 3, A13); this "
        "reads the timeout as a u32 and answers")
    record_count_rewritten = Switch(
        "The records region is stored byte for byte, its i32 record count included (notes §4.2, A6); this rewrites "
        "the count to last_offset_delta + 1 on storage (batch_len and CRC recomputed)")
    recordset_overrun_clamped = Switch(
        "A RecordSet length past the request's end is a decode error that closes the connection (notes §2.5 EOF, "
        "§7); this reads it as 'the rest of the request', keeping the batches there and dropping what is too short "
        "for one")
    schema_id_dropped = Switch(
        "A batch with the schema bit (0x10) carries a u32 schema id after first_sequence and is stored with it "
        "(notes §4.2, §8; FP/record/batch.rs); this re-encodes the header without it (bit cleared, batch_len and "
        "CRC recomputed)")
    too_large_records_only = Switch(
        "A batch whose write size (12 + 45 + records bytes) exceeds STORAGE_MAX_REQUEST_SIZE gets MessageTooLarge "
        "(10) (notes §4.4 step 7, §8); this compares the records' bytes only, so a batch just over the limit is "
        "stored")
    unknown_topic_not_found = Switch(
        "A Produce to a topic the SPU does not lead gets NotLeaderForPartition (6) for each partition (notes §4.4 "
        "step 1, §6, A8); this answers the SC's TopicNotFound (2001)")
    padded_varint_hangs = Switch(
        "Every hostile frame gets an answer or a close within the deadline (notes §7, A15; the SPU keeps records as "
        "bytes, §4.2); this checks the first record's length varint and, when it is padded with continuation bytes, "
        "waits for bytes that never come: the request is never answered")
    reads_serialised = Switch(
        "A peer stalled mid-frame delays its own connection only (notes §7, per-connection tasks); this holds one "
        "broker-wide lock while a started frame arrives, so every other connection waits on the stalled frame")
    sc_body_length_waits = Switch(
        "An SC object body length past the frame is a decode error (objects/metadata.rs TypeBuffer::decode, "
        "UnexpectedEof): the SC closes or answers (notes §7, §12); this waits for the missing bytes, silent, with "
        "the connection open")
    stream_blocks_connection = Switch(
        "StreamFetch runs in a task of its own, so other requests on the connection are served while a stream waits "
        "(notes §2.4, SPU/services/public/stream_fetch.rs); this keeps the request loop waiting for the stream's "
        "first answer")
    stream_refusal_numbered = Switch(
        "A StreamFetch of an unknown topic or partition answers once, with stream_id 0 (notes §5.4); this gives the "
        "refusal the connection's next stream id")
    stream_at_end_answers_empty = Switch(
        "A StreamFetch at the log end sends nothing until records arrive (notes §5.4 Behaviour); this answers at "
        "once with an empty RecordSet, as a Fetch does, then pushes the records when they come")
    apiversions_legacy_drops_stream_fetch = Switch(
        "ApiVersions lists Produce, Fetch, FetchOffsets, StreamFetch and UpdateOffsets, StreamFetch capped at 15 "
        "for a client that sends no client_version (notes §3.1, §3.2; api_versions.rs); this drops StreamFetch from "
        "that list instead of capping it")
    platform_version_empty = Switch(
        "ApiVersions' platform_version is a semantic version, which the client's decoder requires (notes §3.2, A18; "
        "FP/link/versions.rs); this leaves it an empty string")


class FluvioVariants(Switches):
    """Other readings the spec permits (``--variant fluvio.NAME``): the whole suite must pass against each."""

    personality = "fluvio"

    negative_size_waits = Switch(
        "A negative frame size is never answered: this reads on and discards bytes until the peer closes, the SPU's "
        "path for sizes below -4 (notes §7, A15), instead of closing at once (D2)")
    oversize_drains = Switch(
        "A frame above the 64 MiB cap is never answered before its body: this reads and drops the claimed body "
        "(the SPU buffers whatever the size says, notes §2.1, §7) instead of closing unread (D1)")
    trailing_bytes_close = Switch(
        "Bytes left after a complete request inside its frame: this closes the connection (a decode-error "
        "reaction, notes §7) where the SPU ignores them (A15)")
    isolation_other_closes = Switch(
        "A Produce isolation other than 1 and -1: this rejects it as an unknown enum tag and closes (as Fetch's u8 "
        "isolation does, notes A4, §7) where the SPU's i16 decoder maps it to a defined isolation")
    smartmodules_trailer_required = Switch(
        "A Produce that ends right after its topics: this reads the smartmodules count unconditionally, as the "
        "SPU's ProduceRequest::decode does, and closes on the EOF (notes A5) instead of reading 'none'")
    crc_recomputed = Switch(
        "A batch with a wrong CRC: this accepts it and stores it with the CRC recomputed, the SPU's path (notes "
        "A7, §4.4 step 7, ST/mut_records.rs), instead of rejecting it (D5)")
    batch_len_short_answers = Switch(
        "A batch whose batch_len is below the header size: this answers an error (Other) for that partition and "
        "writes nothing (notes A15: a well-formed response or a close) instead of closing (D6)")
    recordset_trailing_answers = Switch(
        "A RecordSet with bytes after its last batch too few for a batch: this answers an error (Other) for that "
        "partition and writes nothing (notes A15) instead of closing (D7)")
    negative_delta_other_code = Switch(
        "A batch with last_offset_delta < 0 among real ones: this answers Other('EmptyBatch ...') rather than "
        "StorageError (56), nothing written, no short-circuit (D8 permits another error code)")
    no_auto_create = Switch(
        "A Produce to a topic that does not exist: this answers NotLeaderForPartition (6), as the SPU does (notes "
        "§4.4 step 1, A8), instead of creating it (decision T1): topics come from the SC only")


FAULTS: dict[str, str] = FluvioFaults.catalogue()
VARIANTS: dict[str, str] = FluvioVariants.catalogue()
