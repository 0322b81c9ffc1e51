"""The Barco / PolarStreams clause catalogue, as data.

Sources: the seed (docs/developer/NETWORK_FORMATS.md, "seed"), the research notes on the Polar-era code
(specs/barco.md, "notes §N", which name the upstream files) and the decisions below where the seed is silent or
the code is unsafe (notes §10 lists the ambiguities, §11 suggests the choices). A clause resting on one of the
decisions alone (the notes' §11 choices are proposals, not the spec) is a SHOULD, so a target taking another
permitted path, upstream's included, is NON-STRICT; a MUST rests on a sentence of the seed or the notes.

Decisions:
  D1  The head CRC is verified; a mismatch ends the connection (an ERROR first is permitted). Upstream never
      checks it (notes §2.1); its interbroker twin protocol does, and closes.
  D2  Only version 1 exists; another version gets ERROR(0) and a close, or a close.
  D3  A PRODUCE body must hold at least one message and its message lengths must add up to the rest of the body
      exactly; otherwise ERROR(0) and the connection stays open (the frame boundary is known).
  D4  A frame body above 1 MiB of messages plus the largest key/topic/timestamp overhead is refused without
      being read: ERROR(0) optionally, then a close.
  D5  Topic names: 1-255 bytes without '/', '\\', NUL or '..' (notes §11; upstream accepts anything and lets
      '..' escape its data directory). Bytes that are not UTF-8 and control characters are not in the notes'
      rule: a server may take them. Registration takes any topic, as upstream does (notes §5.1).
  D6  A body on a non-PRODUCE frame is read and discarded, so the stream stays in sync (upstream desyncs). Notes
      §10.9 leaves "a protocol error" open as well: ERROR(0) and a close is NON-STRICT, never FAILED.
  D7  One broker in dev mode owns the whole ring: token -9223372036854775808, generation version 1, 4 consumer
      ranges; each PRODUCE frame (each HTTP request) is one chunk; a keyed message keeps one range index.
  D8  HTTP producer: a request without Content-Length (chunked) is refused with 400 as upstream does, or
      accepted; both are permitted (SHOULD: 400, the documented behaviour).
"""

from __future__ import annotations

from wirecheck.protocols.barco.clients import CLIENTS, SCENARIOS
from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.clients import client_clauses

SEED = "seed NETWORK_FORMATS.md"
MUST, SHOULD = Level.MUST, Level.SHOULD

_CLAUSES = [
    # -- binary producer framing (:9254) ---------------------------------------------------------------------
    Clause("barco.framing.header-crc", "A request whose head crc is not the IEEE CRC-32 of header bytes 0..8 is "
           "not processed: the connection is closed (an ERROR frame first is permitted).",
           f"{SEED} §Producer framed request (head crc); notes §2.1, §10.4", SHOULD,
           "D1: verify the CRC and close on mismatch (the interbroker protocol's convention); upstream ignores it, "
           "and the seed says nothing of a mismatch: SHOULD. ERROR(0) before the close is the other permitted "
           "outcome (variant barco.crc-error-then-close); ignoring the CRC is fault barco.crc-unchecked."),
    Clause("barco.framing.version", "A request whose version byte is not 1 is refused: ERROR(0) then a close, or a "
           "close.", "notes §2.1, §10.5", SHOULD, "D2: only version 1 exists; upstream does not check it, and "
           "notes §11 keeps ignoring it as the compatible reading (variant barco.version-ignored: NON-STRICT)."),
    Clause("barco.framing.stream-id-echo", "Every response carries the stream id of the request it answers.",
           "notes §2.5, §2.6 (binary_server.go)", MUST),
    Clause("barco.framing.response-header", "Every response header has version 1, flags 0 and a valid IEEE head crc "
           "over its bytes 0..8, and its body length matches the body.", "notes §2.5 (writeHeader)", MUST),
    Clause("barco.framing.response-frame", "Every response is a whole 13-byte header and the body its length "
           "announces.", "notes §2.1, §2.5", MUST),
    Clause("barco.framing.oversize", "A frame whose body length exceeds the limit is refused, never buffered: "
           "ERROR(0) (the announced body then discarded unread, or the connection closed) or a close.",
           "notes §2.7, §8, §11", MUST,
           "D4: the reference broker closes before reading; §11's ERROR(0) with the body discarded and the "
           "connection kept is the other permitted reading. Upstream panics above its 32 MiB buffer pool."),
    Clause("barco.framing.body-consumed", "The body of a non-PRODUCE request is read and discarded, so the next "
           "header is read at the right place.", "notes §2.7, §10.9", SHOULD,
           "D6: skip the body (upstream does not read it and desyncs). Notes §10.9 also permits taking it for a "
           "protocol error (variant barco.control-body-closes: ERROR(0), then a close): NON-STRICT; so an unknown "
           "opcode with a body may close after its ERROR(0) (strategies/barco/mutants.py barco-opcode)."),
    Clause("barco.framing.pipelining", "Frames sent back to back are each answered exactly once, matched by stream "
           "id (responses may come in any order).", "notes §2.6, §10.14", MUST),
    # -- binary producer operations ------------------------------------------------------------------------
    Clause("barco.producer.startup-first", "The first frame of a connection must be STARTUP; any other first frame "
           "ends the connection (ERROR(0) first is permitted).", "notes §2.6 step 1, §10.15", MUST),
    Clause("barco.producer.ready", "STARTUP is answered with READY (op 2, empty body).", "notes §2.3, §2.6", MUST),
    Clause("barco.producer.heartbeat", "HEARTBEAT (op 6) is answered with READY (op 2) and the same stream id.",
           "notes §2.3", MUST),
    Clause("barco.producer.unknown-opcode", "A frame with an opcode other than PRODUCE or HEARTBEAT after STARTUP is "
           "answered with ERROR code 0, and the connection stays open.", "notes §2.6 step 2", MUST),
    Clause("barco.producer.produce-ack", "A valid PRODUCE is answered with PRODUCE_RESPONSE (op 5, empty body) once "
           "its messages are stored.", "notes §2.5, §2.6", MUST),
    Clause("barco.producer.message-lengths", "A PRODUCE whose message lengths do not add up to the rest of the body "
           "exactly is refused with ERROR(0) and nothing of it is stored.", "notes §10.10, §11", SHOULD,
           "D3, a §11 proposal: SHOULD (upstream crashes, which the survives clause reports). Ending the "
           "connection after the ERROR(0) (variant barco.bad-lengths-close) is NON-STRICT; the fuzz does not "
           "pipeline frames behind such a PRODUCE, since a close would take them along."),
    Clause("barco.producer.no-messages", "A PRODUCE with no message is refused with ERROR(0).",
           "notes §10.11, §11", SHOULD, "D3, a §11 proposal: SHOULD (upstream crashes, which the survives clause "
           "reports). Acknowledging it as a no-op (variant barco.empty-produce-acked) is NON-STRICT."),
    Clause("barco.producer.truncated-body", "A PRODUCE body that ends inside its timestamp, key or topic is refused "
           "with ERROR(0); the connection stays open.", "notes §2.5 (\"EOF\")", MUST),
    Clause("barco.producer.topic-valid", "A PRODUCE whose topic name is empty, longer than 255 bytes, or contains "
           "'/', '\\\\', NUL or '..' is refused with ERROR(0).", "notes §10.13, §11", SHOULD,
           "D5, a §11 proposal: SHOULD."),
    Clause("barco.producer.empty-message", "A zero-length message is stored as a zero-length record.",
           "notes §2.4 (marshalFramedRecords)", MUST),
    Clause("barco.producer.timestamp", "With flag 0x01 the body starts with an int64 timestamp in µs, and every "
           "record of the frame carries it.", f"{SEED}; notes §2.2, §2.4", MUST),
    Clause("barco.producer.error-body", "An ERROR body is a code byte and a UTF-8 message without a length prefix, "
           "and the code is one of 0, 1, 2.", "notes §2.5", MUST),
    Clause("barco.producer.error-size", "An ERROR body is at most 512 bytes (the Go client's buffer).",
           "notes §2.5", SHOULD, "The Go client crashes on longer bodies; the protocol itself sets no limit "
           "(variant barco.error-quotes-input quotes a refused 255-byte topic: NON-STRICT)."),
    Clause("barco.producer.second-startup", "A second STARTUP on a connection is answered with ERROR(0) and the "
           "connection stays open.", "notes §2.6 step 2", SHOULD,
           "Upstream answers every non-producer op so; READY again would also be harmless (variant "
           "barco.second-startup-ready: NON-STRICT)."),
    Clause("barco.producer.partition-key", "Messages with one partition key land in one (token, range index) "
           "reader, in the order of their frames.", "notes §2.6 step 3, §7", MUST,
           "D7; which range index a key keeps is the server's (upstream's dev mode overflows, mostly 0: notes §7; "
           "variant barco.keyed-range-zero)."),
    # -- HTTP producer (:9251) -------------------------------------------------------------------------------
    Clause("barco.http-producer.produce", "POST /v1/topic/:topic/messages with a body is answered 200 and its "
           "records are stored, whether the topic is new or already holds records.", "notes §3; polarstreams/polar "
           "internal/utils/utils.go ToPostHandle (a stored body is answered RespondText \"OK\")", MUST),
    Clause("barco.http-producer.content-types", "The body is split by Content-Type: x-ndjson one record per "
           "non-empty line, vnd.polar.producer.frames u32-prefixed messages, anything else one record.",
           "notes §3 (recordItem.marshal)", MUST),
    Clause("barco.http-producer.frames-invalid", "A producer.frames body whose lengths do not add up is refused "
           "with 400 and nothing is stored.", "notes §3, §10.10", SHOULD, "D3 on the HTTP path, a §11 proposal "
           "(400 is what upstream's producer answers bad input with); another 4xx such as 422 (variant "
           "barco.frames-invalid-422) is NON-STRICT."),
    Clause("barco.http-producer.length", "A body of 0 bytes or over 1 MiB is refused with 400.", "notes §3, §8",
           MUST),
    Clause("barco.http-producer.chunked", "A chunked body (no Content-Length) is refused with 400.", "notes §3",
           SHOULD, "D8: upstream refuses; accepting it (200) is permitted (variant barco.http-chunked-accepted: "
           "NON-STRICT)."),
    Clause("barco.http-producer.method", "GET on the messages path is answered 405.", "notes §3", MUST),
    Clause("barco.http-producer.topic-valid", "A topic that breaks D5 is refused with 400 (404 for one written "
           "with an encoded '/' or '\\\\', which a router may decode into another path).", "notes §3, §10.13",
           SHOULD, "D5, a §11 proposal: SHOULD."),
    Clause("barco.http-producer.status", "GET /status is answered 200.", "notes §3", MUST),
    # -- consumer (:9252) ------------------------------------------------------------------------------------
    Clause("barco.consumer.register", "PUT (or POST) /v1/consumer/register with consumerId, group and topic query "
           "parameters is answered 200.", "notes §5.1", MUST),
    Clause("barco.consumer.register-idempotent", "Registering again with the same id, group and topics is answered "
           "200.", "notes §5.1", MUST),
    Clause("barco.consumer.register-conflict", "Registering an id again with a different group or topics is "
           "answered 400.", "notes §5.1", MUST),
    Clause("barco.consumer.register-invalid", "A registration without id or topics, or with an unknown onNewGroup "
           "value, is answered 400; any topic name is taken.", "notes §5.1", MUST),
    Clause("barco.consumer.register-connection", "A registration without consumerId and with a JSON ConsumerInfo "
           "body binds the consumer to the connection: later requests on it need no consumerId; a body that is not "
           "a ConsumerInfo is answered 400.", "notes §5.1", MUST),
    Clause("barco.consumer.poll-binary", "A poll with data is answered 200, Content-Type "
           "application/vnd.polar.consumermessage, a body in the binary poll layout with at least one item.",
           f"{SEED} §Consumer poll response; notes §5.2", MUST),
    Clause("barco.consumer.poll-json", "A poll with Accept: application/json is answered with a JSON array of items "
           "with topic, token, rangeIndex, version, startOffset and values; an item is one stored chunk, so within "
           "a reader each item's startOffset is the previous one's plus its values' count.",
           "notes §5.3, §5.2; polarstreams/polar internal/consuming/models.go MarshalJson (startOffset "
           "chunk.StartOffset(), values every record of the chunk)", MUST),
    Clause("barco.consumer.poll-empty", "A poll with nothing to read is answered 204 with an empty body.",
           "notes §5.1", MUST),
    Clause("barco.consumer.retry-after", "A 204 poll answer for lack of data carries Retry-After.", "notes §5.1",
           MUST),
    Clause("barco.consumer.unregistered", "Poll, commit and goodbye from an unregistered consumer (never registered, "
           "or gone after goodbye) are answered 409, on any connection.", "notes §5.1; polarstreams/polar "
           "internal/consuming/server.go validateRegistered (a stateless id is looked up in the broker's state)",
           MUST),
    Clause("barco.consumer.offsets-continuous", "Within one reader (topic, token, range index, version), each "
           "item's offset is the previous item's offset plus its record count: no gap, no overlap.",
           f"{SEED} (offset); notes §5.4, §10.3", MUST),
    Clause("barco.consumer.records", "The records a poll returns are the produced messages, byte for byte, in "
           "order, each with its 12-byte record header.", "notes §4, §10.2", MUST),
    Clause("barco.consumer.payload-zstd", "Each item's payload is one zstd frame with the content checksum flag "
           "set.", f"{SEED} (zstd crc); notes §4, §10.2", MUST),
    Clause("barco.consumer.commit", "POST /v1/consumer/commit stores the consumer's position (204); a poll of "
           "another consumer of the group then starts there.", "notes §5.1, §5.4", MUST),
    Clause("barco.consumer.at-least-once", "A poll of a different consumer of the group rewinds to the last "
           "committed offset: what was served but not committed is served again.", "notes §5.4", MUST),
    Clause("barco.consumer.goodbye", "POST /v1/consumer/goodbye is answered 200 and unregisters the consumer.",
           "notes §5.1", MUST),
    Clause("barco.consumer.method", "GET on poll, commit, goodbye or register is answered 405.", "notes §5.1",
           SHOULD, "Upstream's router answers 405 for a known path with another method; 404 is also permitted, "
           "for GET and any other method (variant barco.consumer-method-404)."),
    Clause("barco.consumer.h2c", "The consumer API answers HTTP/2 with prior knowledge, several streams at once.",
           "notes §1, §5.1", MUST),
    Clause("barco.consumer.status", "GET /status on the consumer port is answered 200.", "notes §5.1", MUST),
    # -- discovery (:9250) -----------------------------------------------------------------------------------
    Clause("barco.discovery.brokers", "GET /v1/brokers is answered 200 with JSON naming length, producerPort, "
           "producerBinaryPort and consumerPort.", "notes §6", MUST),
    Clause("barco.discovery.status", "GET /status is answered 200 once the broker serves.", "notes §6", MUST),
    # -- HTTP in general --------------------------------------------------------------------------------------
    Clause("barco.http.not-found", "A path no API has is answered 404.", "RFC 9110 §15.5.5", MUST),
    Clause("barco.http.bad-request", "A request that breaks HTTP/1.1 syntax is answered 400 or the connection is "
           "closed.", "RFC 9112 §2.2", MUST),
    Clause("barco.http.keep-alive", "An HTTP/1.1 connection carries several requests, also pipelined, answered in "
           "order.", "RFC 9112 §9.3", MUST),
    Clause("barco.http.query", "Missing or invalid query parameters are answered 400.", "notes §5.1", MUST),
    Clause("barco.http.stream-reset", "A reset HTTP/2 stream ends that stream only: the connection keeps serving "
           "others.", "RFC 9113 §5.4.2", MUST),
    # -- robustness -------------------------------------------------------------------------------------------
    Clause("barco.robustness.survives", "The target still answers a known-good request after any case.",
           "wirecheck liveness", MUST),
    Clause("barco.robustness.no-hang", "Every hostile frame gets a permitted reaction within the deadline.",
           "notes §11 (fuzz targets)", MUST),
]

CATALOGUE = Catalogue("barco", _CLAUSES + client_clauses("barco", CLIENTS, SCENARIOS))
