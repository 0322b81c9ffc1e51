"""Fluvio SPU clause catalogue.

Sources: the seed "Fluvio Protocol Reference" (cited "seed §<section>") and the research notes on the
upstream ``infinyon/fluvio`` source (cited by upstream file; "notes §N" / "A<n>" are the notes' sections and
ambiguities). The upstream SPU is the oracle where it is defined. Where it is undefined or buggy (ambiguities
A5, A7, A11, A13-A15) we chose a strict-but-safe stance (notes §12) and wrote it in ``decision``; such clauses
are SHOULD ("implementation-defined"): a target taking the SPU's own path, or another permitted one, is
NON-STRICT, never FAILED. The MUST-level floor under each of them is "no crash, no hang, no wrong answer".

Topics (decision T1): the SPU has no CreateTopic API on its port (topics are created through the SC). The suite
gets topics in this order: (1) ``fluvio.topics=name:partitions,...`` (or ``WIRECHECK_FLUVIO_TOPICS``) names
topics that already exist on the target, shared by all cases and checked writable first (else BLOCKED);
(2) with the SC's address known (``fluvio.sc=host:port``), a fresh topic created there; (3) otherwise a first
Produce to a fresh unique name is expected to create the topic with one partition (the reference broker
auto-creates on first produce). A target that answers that Produce with NotLeaderForPartition (6) gives no way to
get a topic: the cases that need one report UNIMPLEMENTED (clause ``fluvio.topics.provisioning``). A case that
may leave its partition unusable never takes a named topic (suites/fluvio/README.md).
"""

from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.clients import client_clauses
from wirecheck.protocols.fluvio.clients import CLIENTS, SCENARIOS
from wirecheck.protocols.fluvio.messages import PRODUCE

MUST, SHOULD = Level.MUST, Level.SHOULD

#: Decision D1 (notes §12): the largest frame we accept; larger claims close the connection unread.
MAX_FRAME = 64 * 1024 * 1024

_C = [
    # -- framing ---------------------------------------------------------------------------------------------
    Clause("fluvio.framing.response-frame",
           "Every response is an i32 size (not counting itself), then exactly that many bytes: the request's "
           "correlation id and a body that decodes to its end at the request's version.",
           "notes §2.1, §2.3; FP/codec/mod.rs FluvioCodec, FP/api/response.rs"),
    Clause("fluvio.framing.correlation-id",
           "A response carries the correlation id of the request it answers.",
           "notes §2.3; FP/api/response.rs ResponseMessage"),
    Clause("fluvio.framing.in-order",
           "Requests on one connection are answered one after another, in request order.",
           "notes §2.4; SPU/services/public/mod.rs PublicService::respond"),
    Clause("fluvio.framing.partial",
           "A frame whose bytes arrive in several TCP segments (the size prefix split too) is processed once "
           "complete, and not before.",
           "notes §2.1; FP/codec/mod.rs (buffers until size+4 bytes have arrived)"),
    Clause("fluvio.framing.zero-size",
           "A frame of size 0 (no header) ends the connection without a response.",
           "notes §7 (header decode EOF -> connection closed)"),
    Clause("fluvio.framing.negative-size",
           "A negative frame size ends the connection without a response.",
           "notes §7, A15 (upstream: -4..-1 panic the connection task, < -4 waits for ever)",
           SHOULD,
           decision="D2 (notes §12): strict-but-safe, close at once. Waiting for more bytes (the SPU's path for "
                    "sizes below -4) is NON-STRICT; answering is never right."),
    Clause("fluvio.framing.negative-size-unanswered",
           "Nothing after a negative frame size is answered: such a size never frames a request.",
           "notes §2.1, §7 (a negative size is never a valid frame)"),
    Clause("fluvio.framing.oversize",
           f"A frame size above {MAX_FRAME:,} bytes ends the connection without reading the body.",
           "notes §2.1, §8 (no cap upstream; MAX_BYTES 50 MiB defined but unused), §12",
           SHOULD,
           decision="D1 (notes §12): cap at 64 MiB and close. The SPU buffers whatever the size says; waiting "
                    "for the body is NON-STRICT, answering before it arrived is never right."),
    # -- header -----------------------------------------------------------------------------------------------
    Clause("fluvio.header.unknown-api-key",
           "A request with an api key the SPU does not serve (including 1001 and keys >= 0x8000) ends the "
           "connection without a response.",
           "notes §7, A1, A16; SS/server/api_key.rs SpuServerApiKey::try_from"),
    Clause("fluvio.header.truncated",
           "A request whose header or body is shorter than its fields (or holds a bool/option/enum byte that "
           "is not allowed, or invalid UTF-8) ends the connection without a response.",
           "notes §7; SPU/services/public/mod.rs (decode error -> connection closed)"),
    Clause("fluvio.header.trailing-bytes",
           "Bytes left over after a complete request inside its frame are ignored: the request is answered.",
           "notes §7 (nothing checks leftover bytes), A15",
           SHOULD,
           decision="Upstream behaviour, kept. Closing instead is NON-STRICT."),
    # -- ApiVersions ------------------------------------------------------------------------------------------
    Clause("fluvio.versions.advertised",
           "ApiVersions (18) is answered at versions 0-2 with error 0 and lists Produce (0), Fetch (1), "
           "FetchOffsets (1002), StreamFetch (1003) and UpdateOffsets (1005), each with min <= max.",
           "notes §3.1, §3.2; SPU/services/public/api_versions.rs"),
    Clause("fluvio.versions.platform-semver",
           "ApiVersions' platform_version is a valid semantic version (the client's decoder rejects others).",
           "notes §3.2, A18; FP/link/versions.rs"),
    Clause("fluvio.versions.every-version",
           "Each request is decoded at the api_version of its header and answered at that same version, for "
           "every version advertised (Produce: the seed's 7 and the current 25, and all between).",
           "notes §1 (version gating), §3.1, A3; crates/fluvio-service call_service!; seed §ProduceRequest"),
    Clause("fluvio.versions.above-max",
           "A request at a version above the advertised maximum gets a reaction within the deadline: an answer "
           "carrying its correlation id (the SPU never checks versions and answers at that version) or the "
           "connection closed. Silence with the connection open is a violation.",
           "notes §3.1 ('The server never checks versions'), §7; A16"),
    # -- Produce ---------------------------------------------------------------------------------------------
    Clause("fluvio.produce.offsets",
           "A Produce's base_offset is the partition's log end before the write; the log end then advances by "
           "last_offset_delta + 1 of each batch (not by the record count field).",
           "notes §4.4 items 7-8, A6, A14; ST/segment.rs append_batch"),
    Clause("fluvio.produce.response-entries",
           "A ProduceResponse has one topic entry per request topic and one partition entry per request "
           "partition entry, in request order, even when a partition index repeats.",
           "notes §4.1 (the client pairs entries by position); SPU/services/public/produce_handler.rs"),
    Clause("fluvio.produce.response-fields",
           "log_append_time_ms (v >= 2) and log_start_offset (v >= 5) are present exactly at those versions, "
           "throttle_time_ms from v1.",
           "notes §4.5, A19; SS/produce/response.rs"),
    Clause("fluvio.produce.unknown-topic",
           "Produce to a topic the SPU does not lead gets NotLeaderForPartition (6) for each of its partitions.",
           "notes §4.4 item 1, §6, A8"),
    Clause("fluvio.produce.unknown-partition",
           "Produce to a partition that does not exist gets NotLeaderForPartition (6), and other partitions of "
           "the same request are unaffected.",
           "notes §4.4 item 1, A8"),
    Clause("fluvio.produce.empty",
           "A RecordSet with no batches, or whose batches all have last_offset_delta < 0, succeeds with error 0 "
           "and base_offset 0 and writes nothing.",
           "notes §4.4 item 4"),
    Clause("fluvio.produce.compression-invalid",
           "A batch whose compression bits (attributes & 7) are 5, 6 or 7 gets CompressionError (9000) and "
           "nothing is written.",
           "notes §4.4 item 6, §8 Compression"),
    Clause("fluvio.produce.compression",
           "Batches compressed with gzip (1), snappy framed (2), lz4 frame (3) or zstd (4) are accepted on a "
           "topic whose compression type is Any (the default), stored without recompression and fetched back.",
           "notes §4.4 item 6, §8; crates/fluvio-compression"),
    Clause("fluvio.produce.too-large",
           "A batch whose write size (12 + 45 + records bytes) exceeds 33,554,432 bytes gets MessageTooLarge "
           "(10) and nothing is written.",
           "notes §4.4 item 7, §8 (STORAGE_MAX_REQUEST_SIZE)"),
    Clause("fluvio.produce.isolation",
           "Produce with isolation ReadUncommitted (1) or ReadCommitted (-1) succeeds; on a single replica "
           "ReadCommitted answers without waiting for the timeout.",
           "seed §Isolation Values; notes §4.4 item 9"),
    Clause("fluvio.produce.isolation-other",
           "A Produce isolation other than 1 and -1 is read as the SPU reads it (negative: ReadCommitted, "
           "otherwise ReadUncommitted) and answered.",
           "notes §4.1 (IsolationData decoder), A4",
           SHOULD,
           decision="D3: upstream behaviour. A target rejecting such values by closing is NON-STRICT; a wrong "
                    "answer or a crash fails other clauses."),
    Clause("fluvio.produce.negative-timeout",
           "A negative Produce timeout is a decode error: the connection ends without a response.",
           "notes §4.1 field 3, A13"),
    Clause("fluvio.produce.smartmodules-trailer",
           "A Produce request that ends right after its topics (no smartmodules count, as the upstream v7 "
           "fixture produce_request.bin) is served as having no SmartModules.",
           "notes §10.1 item 5, A5",
           SHOULD,
           decision="D4 (notes A5 recommendation): accept. Closing (upstream's code reads the count "
                    "unconditionally and would hit EOF) is NON-STRICT. With the trailer present (an empty "
                    "count) a Produce is always valid: fluvio.versions.every-version."),
    Clause("fluvio.produce.bad-crc",
           "A batch whose CRC does not match its bytes is never served back with a wrong CRC: it is rejected "
           "with an error code (nothing written), or stored with the CRC recomputed.",
           "seed §CRC32-C; notes §4.2 (never verified upstream), §4.4 item 7, A7"),
    Clause("fluvio.produce.bad-crc-rejected",
           "A batch whose CRC does not match its bytes is rejected with a non-zero error code and nothing is "
           "written.",
           "seed §CRC32-C; notes A7, §12",
           SHOULD,
           decision="D5: strict-but-safe, reject. The SPU's own path (accept, store with a recomputed CRC) is "
                    "NON-STRICT."),
    Clause("fluvio.produce.batch-len-short",
           "A batch whose batch_len is below the header size (45, or 49 with a schema id) ends the connection.",
           "notes §4.2 Decode details, §7, A15 (upstream underflows: panic or misparse)",
           SHOULD,
           decision="D6 (notes §12): close. Any error answer is NON-STRICT; a crash fails "
                    "fluvio.robustness.survives."),
    Clause("fluvio.produce.recordset-trailing",
           "A RecordSet whose bytes after its last whole batch are too few for a batch (trailing garbage) ends "
           "the connection.",
           "notes §2.5, §7, A15 (upstream misparses them as the following fields)",
           SHOULD,
           decision="D7 (notes §12): close. An error answer is NON-STRICT."),
    Clause("fluvio.produce.recordset-overrun",
           "A RecordSet length larger than the bytes left in the request ends the connection without a response.",
           "notes §2.5 (EOF), §7"),
    Clause("fluvio.produce.negative-delta-mixed",
           "A batch with last_offset_delta < 0 in a RecordSet with real batches gets an error for that partition "
           "(StorageError 56), and later writes to the partition still succeed.",
           "notes §4.4 item 7, A14 (upstream short-circuits the replica: 73 until restart)",
           SHOULD,
           decision="D8 (notes §12): 56 without the permanent short-circuit. The SPU's 73 on later writes, or "
                    "another error code, is NON-STRICT."),
    Clause("fluvio.produce.schema-id",
           "A batch with the schema bit (attributes 0x10) carries a u32 schema id after first_sequence; it is "
           "stored and served back unchanged.",
           "notes §4.2, §8; FP/record/batch.rs"),
    Clause("fluvio.produce.records-opaque",
           "Produce keeps a batch's records region as raw bytes: record count field, varints outside the i32 "
           "range and key option tags are stored and served back byte for byte.",
           "notes §4.2 Records region, A6, A11"),
    # -- Fetch ------------------------------------------------------------------------------------------------
    Clause("fluvio.fetch.stored-batches",
           "Fetched batches are the stored ones: the server-assigned base_offset, batch_len and CRC recomputed, "
           "every other byte as produced; they start at the batch that holds fetch_offset.",
           "notes §5.2 Fetch semantics, §12 (zero-copy-equivalent fetch bytes)"),
    Clause("fluvio.fetch.high-watermark",
           "A Fetch partition response's high_watermark is the log end (single replica) and log_start_offset 0 "
           "for a log that was never trimmed.",
           "notes §5.2, §4.4 item 9"),
    Clause("fluvio.fetch.at-end",
           "A Fetch at fetch_offset == log end answers error 0 and an empty RecordSet.",
           "notes §5.2 Fetch semantics"),
    Clause("fluvio.fetch.beyond-end",
           "A Fetch beyond the log end answers Other (2) with a message string.",
           "notes §5.2 Fetch semantics, §6; ST/replica.rs"),
    Clause("fluvio.fetch.unknown-partition",
           "A Fetch of an unknown topic or partition answers NotLeaderForPartition (6) and an empty RecordSet.",
           "notes §5.2, §6, A8"),
    Clause("fluvio.fetch.max-bytes",
           "The RecordSet of a Fetch holds at most the request-level max_bytes; a cut may truncate the last batch.",
           "notes §5.1 max_bytes, §5.2"),
    Clause("fluvio.fetch.isolation-invalid",
           "A Fetch or StreamFetch isolation byte other than 0 and 1 ends the connection without a response.",
           "notes §5.1, A4 (u8 enum: unknown tag -> InvalidData)"),
    # -- FetchOffsets -----------------------------------------------------------------------------------------
    Clause("fluvio.offsets.values",
           "FetchOffsets (1002) answers, per partition and error_code first, start_offset (log start) and "
           "last_stable_offset (the high watermark).",
           "notes §5.3; SPU/services/public/offset_request.rs"),
    Clause("fluvio.offsets.unknown-partition",
           "FetchOffsets of an unknown topic or partition answers PartitionNotLeader (3001), not 6.",
           "notes §5.3, §6, A8"),
    # -- StreamFetch / UpdateOffsets --------------------------------------------------------------------------
    Clause("fluvio.stream.records",
           "StreamFetch with records at fetch_offset answers with the request's correlation id, a stream_id >= 1 "
           "and the stored batches from the one holding fetch_offset.",
           "notes §5.4; SPU/services/public/stream_fetch.rs"),
    Clause("fluvio.stream.unknown-partition",
           "StreamFetch of an unknown topic or partition answers once, stream_id 0 and NotLeaderForPartition (6).",
           "notes §5.4"),
    Clause("fluvio.stream.waits-for-data",
           "StreamFetch at the log end sends nothing until records arrive, then pushes them on the same "
           "correlation id.",
           "notes §5.4 Behaviour"),
    Clause("fluvio.stream.flow-control",
           "After a data response the stream sends nothing more until the client's UpdateOffsets; then it sends "
           "the records from that offset.",
           "notes §5.4, §5.5"),
    Clause("fluvio.stream.concurrent-requests",
           "While a stream is open, other requests on the same connection are still served.",
           "notes §2.4 (StreamFetch spawns a task)"),
    Clause("fluvio.update-offsets.status",
           "UpdateOffsets (1005) answers one status per offset: error 0 for a live stream id, "
           "FetchSessionNotFoud (3002) for an unknown one.",
           "notes §5.5; SPU/services/public/offset_update.rs"),
    # -- ErrorCode --------------------------------------------------------------------------------------------
    Clause("fluvio.errors.encoding",
           "Every ErrorCode on the wire is a known i16 tag followed by exactly its variant's payload (e.g. "
           "Other carries a String, RequestTimedOut a u64 and a u8).",
           "notes §6, A9; FP/link/error_code.rs"),
    # -- topics -----------------------------------------------------------------------------------------------
    Clause("fluvio.topics.provisioning",
           "The suite can obtain a topic on the target: named in WIRECHECK_FLUVIO_TOPICS, or created by a first "
           "Produce to a new name.",
           "decision T1 (module docstring); notes §3.1 (no topic API on the SPU port)",
           SHOULD,
           decision="T1: a target giving neither way makes the cases that need a topic UNIMPLEMENTED."),
    # -- robustness -------------------------------------------------------------------------------------------
    Clause("fluvio.robustness.survives",
           "After any input, the target still answers a known-good ApiVersions on a new connection.",
           "ARCHITECTURE.md Fuzzing (liveness); notes §12"),
    Clause("fluvio.robustness.no-hang",
           "Every hostile frame gets one of the reactions the spec permits for it (a well-formed answer, or the "
           "connection closed), within the deadline.",
           "notes §7 (decode errors close the connection), A15"),
    Clause("fluvio.robustness.slow-peer",
           "A peer that stops mid-frame does not delay answers on other connections.",
           "notes §7 (per-connection tasks); ARCHITECTURE.md The reference broker"),
    # Checked on captured traffic by the pipeline (protocols/fluvio/capture.py), not by live cases.
    Clause("fluvio.capture.request-decodes",
           "Every request frame decodes to its end at the api key and version its header names.",
           "notes §2.2 (request header), FP/api/request.rs RequestMessage::decode_from",
           unbreakable="It judges the frames a client sent (in captures), which no server can change."),
    # -- consumer offsets (keys 1006-1008, decoded by the SPU at 23..25 and not listed in ApiVersions) --------
    Clause("fluvio.consumer-offsets.stored",
           "UpdateConsumerOffset naming a stream opened with a consumer_id answers that offset with error 0, and "
           "FetchConsumerOffsets then lists the consumer with that offset for the stream's topic and partition.",
           "notes §5.6; SS/server/consumer_offset.rs; crates/fluvio/src/consumer/mod.rs (offset commit)"),
    Clause("fluvio.consumer-offsets.unknown-session",
           "UpdateConsumerOffset naming a session_id that is no open stream of the connection answers a non-zero "
           "error code, and no consumer offset appears for it.",
           "notes §5.5 (sessions are the connection's streams), §5.6"),
    Clause("fluvio.consumer-offsets.delete",
           "DeleteConsumerOffset of a stored consumer offset answers error 0, and FetchConsumerOffsets no longer "
           "lists that consumer for that partition.",
           "notes §5.6; SS/server/consumer_offset.rs"),
    Clause("fluvio.consumer-offsets.filter",
           "FetchConsumerOffsets with filter_opts (v >= 24) lists only the consumers matching its consumer_id and "
           "replica_id.",
           "notes §5.6 (filter_opts only at v >= 24)"),
    # -- the Streaming Controller (its own endpoint "sc"; fluvio-sc-schema, sc services/public_api) ----------
    Clause("fluvio.sc.api-versions.platform",
           "The SC's ApiVersions answer carries a platform_version that is semver >= 0.9.0.",
           "notes §9 step 4; crates/fluvio/src/lib.rs MINIMUM_PLATFORM_VERSION"),
    Clause("fluvio.sc.api-versions.watch",
           "The SC's ApiVersions lists Watch (1004) with a version range that overlaps 15..=19.",
           "notes §9 step 3; sc services/public_api/api_version.rs, objects/watch.rs"),
    Clause("fluvio.sc.watch.first-all",
           "A watch's first MetadataUpdate carries every object of its kind in 'all' and no changes.",
           "sc services/public_api/watch.rs (sync_all), crates/fluvio/src/sync/controller.rs"),
    Clause("fluvio.sc.watch.changes",
           "After its first answer, a watch pushes each later change of its kind (UPDATE or DELETE with the whole "
           "object) as MetadataUpdate.changes, on the watch's correlation id.",
           "sc services/public_api/watch.rs dispatch_loop; message/msg_type.rs"),
    Clause("fluvio.sc.watch.epoch",
           "The epoch of a watch update after a change is larger than the epoch of the update before it.",
           "fluvio-stream-model epoch_map.rs; sc services/public_api/watch.rs"),
    Clause("fluvio.sc.create.exists",
           "Creating a topic that exists answers a Status with TopicAlreadyExists (2002).",
           "sc services/public_api/topic/create.rs validate_topic_request"),
    Clause("fluvio.sc.create.invalid-name",
           "Creating a topic whose name is not lowercase letters, digits and inner '-' answers TopicInvalidName "
           "(2006) and creates nothing.",
           "fluvio-sc-schema shared.rs validate_resource_name; topic/create.rs"),
    Clause("fluvio.sc.delete.missing",
           "Deleting a topic that does not exist answers a Status with TopicNotFound (2001).",
           "sc services/public_api/topic/delete.rs"),
    Clause("fluvio.sc.list.topics",
           "A List of Topic objects answers each existing topic with its spec (partition count as created), "
           "filtered by name when names are given; a deleted topic is no longer listed.",
           "sc services/public_api/list.rs, objects/list.rs ListRequest"),
    Clause("fluvio.sc.status.name",
           "A Create or Delete Status names the object the request named.",
           "fluvio-sc-schema response.rs Status; topic/create.rs"),
    Clause("fluvio.sc.object.unknown-label",
           "A Watch or List of an object type the SC does not know is not answered as if it were known: the "
           "connection ends.",
           "sc services/public_api/watch.rs ('Not Valid Watch Request')", SHOULD,
           decision="the reference SC closes the connection; an error-free empty answer is a violation",
           sole_reading="The SC ends the connection on both of its paths: an unknown type label fails the "
                        "request's decode ('Error decoding message, ending connection', notes §7) and a decoded "
                        "unknown kind makes watch.rs return Err 'Not Valid Watch Request'. Watch and List answers "
                        "carry no error field, so the only answer possible is the empty list this clause forbids."),
    Clause("fluvio.sc.hostile-lengths",
           "An object label or body length that lies (longer than the frame) never crashes the SC: it closes the "
           "connection or answers, and still serves a new connection.",
           "objects/metadata.rs TypeBuffer::decode (UnexpectedEof); notes §7, §12"),
]

CATALOGUE = Catalogue("fluvio", _C + client_clauses("fluvio", CLIENTS, SCENARIOS))


def undecodable_response_clause(api_key: int, error: Exception) -> str:
    """The clause an answer breaks when it does not decode at its request's version: an ErrorCode without its
    payload breaks the error encoding, a Produce answer the version's fields (throttle, log start...), any other
    answer the response frame."""
    if "ErrorCode" in str(error):
        return "fluvio.errors.encoding"
    return "fluvio.produce.response-fields" if api_key == PRODUCE else "fluvio.framing.response-frame"
