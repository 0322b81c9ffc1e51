"""Pravega segment store wire protocol (wire version 17, oldest compatible 5): every wire command as a struct
codec and as scapy layers, the clause catalogue, the reference broker's faults and capture checks.

Modules: ``mutf8`` (Java modified UTF-8), ``commands`` (the command table and the hot-path codec), ``layers``
(scapy packets for humans), ``clauses``, ``faults``, ``capture``.
"""

from __future__ import annotations

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.framing import Framing
from wirecheck.protocols.pravega import commands, layers
from wirecheck.protocols.pravega.clauses import CATALOGUE
from wirecheck.protocols.pravega.clients import CLIENTS, SCENARIO_DEPENDS_ON
from wirecheck.protocols.pravega.faults import FAULTS, SAFETY_FAULTS, VARIANTS
from wirecheck.protocols.pravega.states import STATES
from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec

DEFAULT_PORT = 12345  # service.listener.port (ServiceConfig.java:47)
#: ``i32 type | i32 length`` then the payload (notes §1)
TYPE_LENGTH = Framing(header_size=8, length_offset=4, length_format=">i")
HELLO = commands.encode("Hello", high_version=commands.WIRE_VERSION, low_version=commands.OLDEST_COMPATIBLE_VERSION)


def hello() -> bytes:
    """Hello(17, 5), what the Java client sends first on every connection."""
    return HELLO


def is_hello_answer(frame: bytes) -> bool:
    try:
        decoded = commands.decode(frame)
    except DecodeError:
        return False
    return (decoded.name == "Hello" and decoded["low_version"] <= decoded["high_version"]
            and decoded["low_version"] <= commands.WIRE_VERSION
            and decoded["high_version"] >= commands.OLDEST_COMPATIBLE_VERSION)


def _identity(frame: bytes) -> int | str | None:
    """What pairs a frame with its answer: its request id (every request that has one is answered with it,
    WireCommands.java's ``getRequestId``; -1 is "none"), "Hello" for a Hello, None when the frame says neither."""
    try:
        decoded = commands.decode(frame, max_payload=max(len(frame), commands.MAX_REPLY_PAYLOAD))
    except DecodeError:
        return None
    if decoded.name == "Hello":
        return "Hello"
    request_id = decoded.get("request_id")
    return request_id if isinstance(request_id, int) and request_id != -1 else None


def answers_request(answer: bytes, request: bytes) -> bool:
    """Does the answer answer that request: the same request id, or a Hello answering a Hello. The segment store
    answers a connection's requests as each completes, not in request order (a table read may come after a later
    Hello), so an answer is paired by what it carries; one that carries neither pairs in order."""
    identity = _identity(answer)
    return identity is not None and identity == _identity(request)


SPEC = ProtocolSpec(
    name="pravega",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("segmentstore", default_port=DEFAULT_PORT, framing=TYPE_LENGTH,
                        max_body=commands.MAX_REPLY_PAYLOAD, hello=hello, is_hello_answer=is_hello_answer, hello_clause="pravega.hello.reply",
                        describe=commands.describe, dissect=layers.dissect, answers_request=answers_request),),
    message_param="command",
    version_param="version",
    capture=CaptureSupport("wirecheck.protocols.pravega.capture", unframeable_clause="pravega.framing.reply"),
    faults=FAULTS,
    safety_faults=SAFETY_FAULTS,
    safety="wirecheck.targets.safety.pravega",
    states=STATES,
    variants=VARIANTS,
    volatile_fields=("*.last_modified",),  # the segment store's clock
    # Values that depend on when the segment store's own background work completes, seen to differ between runs of
    # Pravega 0.13.0 alone under load: a table segment's entry count is its indexer's, which catches up after the
    # update is acknowledged (the pravega.table.info case asks again until it shows); a read's at_tail comes from
    # the first read-index entry not in the cache at that moment (PravegaRequestProcessor.java:279-281; "sometimes
    # false when actual state is unknown", WireCommands.java:974).
    timed_fields=("TableSegmentInfo.entry_count", "SegmentRead.at_tail"),
    # a table segment's length counts what the server's compaction left (Pravega's copies entries forward); table
    # versions, the offsets entries were written at, are compared: the reference broker lays entries out as Pravega
    # does (broker/pravega/store.py ENTRY_OVERHEAD); a frame's length follows from what it carries;
    # messages and stack traces are free text (the reference sends none, Pravega its Java exception's); the newest
    # wire version a server speaks is its release's (Pravega 0.13.0: 16, WireCommands.WIRE_VERSION; the reference: 17)
    implementation_fields=("TableSegmentInfo.length", "PravegaFrame.length",
                           "ErrorMessage.message", "*.server_stack_trace", "Hello.high_version",
                           "*.continuation_token"),
    # the order of an iteration's page and of a delta read is the server's: Pravega 0.13.0 iterates a table of
    # variable-length keys by key hash and answers a delta read from a HashMap (PravegaRequestProcessor.java
    # readTableEntriesDelta, DeltaIteratorResult, 1190-1196); the notes' key order (D4) and version order (D5) are
    # the reference broker's readings. A continuation token is the server's own encoding of where it stopped.
    unordered_lists={"TableKeysRead.keys": "", "TableEntriesRead.entries": "", "TableEntriesDeltaRead.entries": ""},
    field_clauses={"*.request_id": "pravega.request-id.echo"},
    clients=CLIENTS,
    client_depends_on=SCENARIO_DEPENDS_ON,
    # events lose their headers, so the reader cannot parse them; a byte stream reads back shifted by a byte; a
    # sealed stream still takes writes; a key-value table's removed key still reads back
    client_faults={"pravega.event-headers-stripped": ("pravega.clients.pravega-python.write-read",
                                                      "pravega.clients.pravega-java.write-read",
                                                      "pravega.clients.pravega-java.transaction"),
                   "pravega.read-skips-first-byte": ("pravega.clients.pravega-python.byte-stream",
                                                     "pravega.clients.pravega-java.byte-stream"),
                   "pravega.sealed-accepts-appends": ("pravega.clients.pravega-python.stream-lifecycle",
                                                      "pravega.clients.pravega-java.stream-lifecycle"),
                   "pravega.remove-keys-ignored": ("pravega.clients.pravega-java.key-value-table",)},
    login=True,  # Hello first on every connection, as the Java client does
)
