"""Deliberate defects: each one breaks ONE requirement of the Barco/PolarStreams notes.

Switch one on with ``--defect NAME`` (repeatable). The code checks them with ``defects.on(NAME)``
at a clearly named point; grep for the name to find it.

Section numbers refer to specs/barco.md.
"""

from __future__ import annotations

# name -> (requirement broken, spec section)
DEFECTS: dict[str, tuple[str, str]] = {
    "bad-response-crc": (
        "Responses carry a valid CRC-32/IEEE over header bytes 0..8 (we flip the low bit)",
        "2.1, 2.5",
    ),
    "response-version-zero": (
        "Response headers always carry version 1 (we send 0)",
        "2.1, 2.5",
    ),
    "response-flags-set": (
        "Response headers always carry flags 0 (we send 0x80)",
        "2.1, 2.5",
    ),
    "stream-id-not-echoed": (
        "Responses echo the request's stream id (we send stream id + 1)",
        "2.1, 2.5",
    ),
    "heartbeat-wrong-opcode": (
        "HEARTBEAT (6) is answered with READY (2) (we answer PRODUCE_RESPONSE, 5)",
        "2.3, 2.6",
    ),
    "first-frame-wrong-error-code": (
        "A first frame that is not STARTUP gets ERROR code 0 (serverError) (we send code 2)",
        "2.5, 2.6",
    ),
    "no-startup-required": (
        "The client must send STARTUP first; any other first frame is an error (we accept PRODUCE)",
        "2.6 step 1",
    ),
    "error-body-length-prefix": (
        "The ERROR message follows the code with no length prefix (we insert a uint16 length)",
        "2.5",
    ),
    "produce-drops-last-message": (
        "Every message of a PRODUCE frame is stored as a record (we drop the last one of >= 2)",
        "2.4",
    ),
    "produce-ignores-timestamp": (
        "With flag 0x01 the PRODUCE body's timestamp is the records' timestamp (we use server time)",
        "2.2, 2.4",
    ),
    "poll-offset-off-by-one": (
        "A poll item's offset is the offset of the chunk's first record (we send offset + 1)",
        "5.2, 5.4",
    ),
    "poll-count-is-byte-length": (
        "The poll response starts with the NUMBER of items as uint16 (we send the byte length)",
        "5.2, 10.1",
    ),
    "zstd-without-checksum": (
        "The payload is one zstd frame WITH the content checksum flag (we omit the checksum)",
        "4, 5.2, 10.2",
    ),
    "record-length-little-endian": (
        "All multi-byte integers are big-endian, including the record length (we use little-endian)",
        "header, 4",
    ),
    "http-producer-ignores-size-limit": (
        "The HTTP producer rejects Content-Length > MaxMessageSize (1 MiB) with 400 (we accept it)",
        "3, 8",
    ),
    "http-producer-ndjson-one-record": (
        "application/x-ndjson bodies become one record per non-empty line (we store one record)",
        "3",
    ),
    "discovery-missing-binary-port": (
        "GET /v1/brokers carries producerBinaryPort (we omit it)",
        "1, 6",
    ),
    "poll-unregistered-not-409": (
        "Polling with an unregistered consumerId answers 409 (we answer 204)",
        "5.1",
    ),
    "poll-204-without-retry-after": (
        "A 204 poll response for 'no data' carries Retry-After: 1 and Cache-Control: no-store (we omit both)",
        "5.1",
    ),
    "json-offset-as-number": (
        "JSON poll items carry token and startOffset as decimal STRINGS (we send numbers)",
        "5.3",
    ),
    "http-producer-existing-topic-204": (
        "Every stored POST is answered 200 OK (we answer 204 No Content when the topic already holds records)",
        "3",
    ),
    "json-item-per-record": (
        "A JSON poll item is one stored chunk: its values are the chunk's records, its startOffset the first "
        "one's (we send one item per record, each with the chunk's startOffset)",
        "5.2, 5.3, 5.4",
    ),
    "record-length-counts-characters": (
        "A record's length field is the body's length in bytes (we count UTF-8 characters when the body "
        "decodes as UTF-8)",
        "4",
    ),
    "unregistered-poll-other-connection-204": (
        "A poll naming a consumer that is not registered is answered 409, whichever connection it comes on "
        "(we answer 204 to one naming a consumer that said goodbye on another connection)",
        "5.1",
    ),
    "consumer-no-h2c": (
        "The consumer port speaks h2c with prior knowledge (we close such connections)",
        "1, 5",
    ),
}

ACTIVE: set[str] = set()


def enable(names: list[str]) -> None:
    for name in names:
        if name not in DEFECTS:
            raise SystemExit(f"unknown defect {name!r}; see --list-defects")
        ACTIVE.add(name)


def on(name: str) -> bool:
    """True when the named defect is switched on. Unknown names are a programming error."""
    assert name in DEFECTS, name
    return name in ACTIVE
