"""The clauses the Fluvio personality can be told to break (``--fault fluvio.NAME``), one line each.

Each description names the clause and where it is stated: the seed (fluvio-protocol-reference.md), the byte-level
notes (specs/fluvio.md §n, An = ambiguity n of §11) or the upstream file the notes cite.
"""

FAULTS: dict[str, str] = {
    "fluvio.crc-unchecked":
        "A produced batch whose CRC-32C (attributes..end, seed 'RecordBatch Encoding', notes §4.2) is wrong "
        "must never be served back with a wrong CRC: the SPU recomputes it on storage (§4.4 step 7, "
        "ST/mut_records.rs), this broker rejects it (§12); this accepts it and Fetch returns the bad CRC",
    "fluvio.error-code-unknown-partition-wrong":
        "Produce/Fetch/StreamFetch to an unknown topic or partition answer NotLeaderForPartition (6) "
        "(notes §4.4 step 1, §6, A8; produce_handler.rs, fetch_handler.rs); this answers a Produce to a partition "
        "its topic lacks with TopicNotFound (2001)",
    "fluvio.fetch-hw-off-by-one":
        "Fetch high_watermark is the offset after the last committed record (notes §5.2, ST/replica.rs "
        "read_records); this answers HW + 1",
    "fluvio.produce-base-offset-wrong":
        "ProduceResponse base_offset is the LEO before the write, the first record's offset (notes §4.4 "
        "step 8); this answers the LEO after the write",
    "fluvio.apiversions-overadvertise":
        "ApiVersions lists only versions the server implements (notes §3.1/§3.2, api_versions.rs); this "
        "advertises Produce (0, 26) while a v26 Produce closes the connection",
    "fluvio.stream-fetch-no-updates":
        "After UpdateOffsets a StreamFetch keeps pushing new records on the same stream (notes §5.4/§5.5, "
        "SPU/services/public/stream_fetch.rs); this sends the first response and then never again",
    "fluvio.fetch-offsets-start-is-hw":
        "FetchOffsets start_offset is the partition's log start offset and last_stable_offset its HW (notes §5.3, "
        "offset_request.rs start_offset_info); this answers the HW as start_offset",
    "fluvio.fetch-offsets-wrong-code":
        "FetchOffsets on an unknown partition answers PartitionNotLeader (3001), not 6 (notes §5.3, A8, "
        "offset_request.rs); this answers NotLeaderForPartition (6)",
    "fluvio.compression-error-wrong":
        "A batch whose compression bits are 5-7 gets CompressionError (9000) (notes §4.4 step 6, §8, "
        "produce_handler.rs validate_records); this answers StorageError (56)",
    "fluvio.offsets-follow-record-count":
        "The LEO advances by last_offset_delta + 1, not by the batch's i32 record count, which the SPU "
        "never reads (notes §4.4 step 7, A6, A14; ST/segment.rs append_batch); this advances by the count",
    "fluvio.negative-size-stays-open":
        "A frame with a negative size prefix is never followed by an answer (notes §2.1, §7: the SPU panics "
        "or waits for ever; §12: close); this skips the size and answers the requests that follow",
    "fluvio.correlation-id-wrong":
        "A response carries its request's correlation_id (notes §2.3, FP/api/response.rs); this answers "
        "with correlation_id + 1",
    "fluvio.crash-on-huge-record-count":
        "A malformed or hostile request costs one connection at most (notes §7, §12; ARCHITECTURE 'reference "
        "broker'); an uncompressed batch whose i32 record count exceeds its bytes wedges the whole broker",
    "fluvio.unknown-key-stays-open":
        "A request with an unknown api_key closes the connection without a response (notes §7, A16, "
        "SpuServerApiKey::try_from); this stays silent and keeps it open",
    "fluvio.update-offsets-unknown-session-ok":
        "UpdateOffsets for a session_id that is not an open stream answers FetchSessionNotFoud (3002) "
        "(notes §5.5, offset_update.rs); this answers None (0)",
    "fluvio.stream-id-zero":
        "StreamFetch stream ids start at 1 on each connection; 0 only marks a refused stream (notes §5.4, "
        "StreamPublishers::next_stream_id); this numbers streams from 0",
    "fluvio.error-payload-missing":
        "An ErrorCode is an i16 tag followed by its variant's payload, e.g. Other(String) (notes §6, A9, "
        "FP/link/error_code.rs); this writes Other for a fetch beyond the LEO without its String",
    "fluvio.produce-responses-merged":
        "A ProduceResponse has exactly one entry per request partition entry, in order, even when a "
        "partition repeats (notes §4.1, partition_producer.rs); this merges repeated partitions into one entry",
    "fluvio.throttle-missing":
        "ProduceResponse carries throttle_time_ms from version 1 on (seed 'ProduceResponse Structure', notes "
        "§4.5); this omits it",
    "fluvio.isolation-strict":
        "Produce isolation is an i16 where any negative value means ReadCommitted and any other "
        "ReadUncommitted (notes §4.1 IsolationData, A4); this closes the connection on values other than +-1",
    # The Streaming Controller (sc.py), on its own port.
    "fluvio.sc-platform-version-old":
        "The SC's ApiVersions platform_version is a semver >= 0.9.0, MINIMUM_PLATFORM_VERSION (notes §9 step 4, "
        "crates/fluvio/src/lib.rs); this answers 0.8.0",
    "fluvio.sc-watch-not-advertised":
        "The SC's ApiVersions lists Watch (1004) with a range overlapping 15..=19 (notes §9 step 3, "
        "sc services/public_api/api_version.rs); this leaves Watch out",
    "fluvio.sc-watch-first-not-all":
        "A watch's first MetadataUpdate carries every object in 'all' (sc public_api/watch.rs, sync_all); "
        "this sends them as UPDATE changes",
    "fluvio.sc-watch-epoch-stale":
        "Every change advances the metadata epoch, so a watch update after a change carries a larger epoch "
        "(fluvio-stream-model epoch_map.rs, watch.rs); this pushes the changes but always shows the first epoch",
    "fluvio.sc-watch-changes-missing":
        "After its first answer a watch pushes each later change as MetadataUpdate.changes (watch.rs "
        "dispatch_loop); this sends the first answer and then nothing",
    "fluvio.sc-create-existing-ok":
        "Creating a topic that exists answers TopicAlreadyExists (2002) (sc public_api/topic/create.rs); "
        "this answers success",
    "fluvio.sc-invalid-name-accepted":
        "A topic name other than lowercase letters, digits and inner '-' answers TopicInvalidName (2006) "
        "(fluvio-sc-schema shared.rs validate_resource_name, topic/create.rs); this creates the topic",
    "fluvio.sc-delete-missing-ok":
        "Deleting a topic that does not exist answers TopicNotFound (2001) (sc public_api/topic/delete.rs); "
        "this answers success",
    "fluvio.sc-unknown-label-answers-empty":
        "A Watch or List of an object type the SC does not know fails and ends the connection (watch.rs "
        "'Not Valid Watch Request'); this answers an empty list",
    "fluvio.sc-status-name-wrong":
        "A Create or Delete Status names the object the request named (response.rs Status.name, "
        "topic/create.rs); this answers the name upper-cased",
    "fluvio.version-above-max-silent":
        "A request above the advertised maximum version is answered (the SPU never checks versions, notes §3.1) "
        "or closes the connection (D2); this reads it and stays silent with the connection open",
    "fluvio.negative-delta-short-circuits":
        "A batch with a negative last_offset_delta among real ones gets StorageError (56) and later writes "
        "succeed (D5); this takes the SPU's path (A14, ST/replica.rs): the partition answers 73 until restart",
    "fluvio.consumer-offset-not-stored":
        "UpdateConsumerOffset stores the offset of the stream's consumer, and FetchConsumerOffsets lists it "
        "(notes §5.6, SS/server/consumer_offset.rs); this answers success and stores nothing",
    "fluvio.consumer-offset-unknown-session-ok":
        "UpdateConsumerOffset for a session_id that is no open stream is an error (notes §5.5/§5.6: no stream, "
        "no consumer); this answers None (0)",
    "fluvio.consumer-offset-delete-ignored":
        "DeleteConsumerOffset removes the consumer's offset, so FetchConsumerOffsets no longer lists it (notes "
        "§5.6); this answers success and keeps it",
    "fluvio.consumer-offset-filter-ignored":
        "FetchConsumerOffsets v24+ with filter_opts lists only the consumers that match it (notes §5.6); this "
        "ignores the filter and lists every consumer",
    "fluvio.sc-list-ignores-names":
        "A List naming objects answers only those (sc public_api/list.rs, objects/list.rs name_filters); this "
        "answers every object of the kind",
}
