"""Barco Streams / PolarStreams: the one protocol here that is not a single framed TCP stream.

Four endpoints (notes §1): discovery (HTTP/1.1, :9250, the primary: ``--target barco=HOST:9250`` finds the
others through ``GET /v1/brokers``), the HTTP producer (HTTP/1.1, :9251), the consumer API (:9252, HTTP/1.1 and
HTTP/2 with prior knowledge on one port: two endpoints, ``consumer`` and ``consumer-h2c``, sharing the port) and
the binary producer (framed TCP, :9254, 13-byte header with the body length at offset 5).

Modules: ``wire`` (struct codecs: frames, bodies, records, poll responses, discovery), ``murmur`` (partition key
-> token), ``layers`` (scapy), ``clauses`` (catalogue and decisions D1-D8), ``faults``, ``capture``, ``clients``
(the real HTTP clients the client cases drive).
"""

from __future__ import annotations

from wirecheck.protocols.barco import layers, wire
from wirecheck.protocols.barco.clauses import CATALOGUE
from wirecheck.protocols.barco.clients import CLIENTS, SCENARIO_DEPENDS_ON
from wirecheck.protocols.barco.faults import FAULTS, SAFETY_FAULTS, VARIANTS
from wirecheck.protocols.barco.states import STATES
from wirecheck.protocols.framing import Framing
from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec

DISCOVERY_PORT, PRODUCER_PORT, CONSUMER_PORT, PRODUCER_BINARY_PORT = 9250, 9251, 9252, 9254
#: the binary producer's framing: 13-byte header, u32 body length at offset 5 (not counting the header)
FRAMING = Framing(header_size=wire.HEADER_SIZE, length_offset=5, length_format=">I")
HELLO_STREAM_ID = 0x0BA5  # arbitrary, recognisable in captures
POLL_BODY_LIMIT = 64 << 20  # one poll returns about 2 MiB of chunks at most (notes §5.2); generous bound


def hello() -> bytes:
    """STARTUP, the first frame of every binary producer connection."""
    return wire.frame(wire.STARTUP, stream_id=HELLO_STREAM_ID)


def is_hello_answer(frame: bytes) -> bool:
    if len(frame) != wire.HEADER_SIZE:
        return False
    head = wire.parse_header(frame)
    return head.opcode == wire.READY and head.stream_id == HELLO_STREAM_ID and head.crc_ok


def status_path() -> bytes:
    return b"/status"


def _status_answer(words: tuple[str, ...]):
    """Upstream's /status bodies name the server ("Consumer server listening on 9252"); any 200 with a short body
    is accepted, and the probe tells the endpoints apart only by which port answers."""
    def check(body: bytes) -> bool:
        return len(body) < 200 and (not words or any(w in body.decode("latin-1").lower() for w in words))
    return check


def _brokers_path() -> bytes:
    return b"/v1/brokers"


def _is_brokers(body: bytes) -> bool:
    try:
        wire.parse_brokers(body)
    except wire.WireError:
        return False
    return True


def _http(name: str, port: int, transport: str = "http1", **kw) -> Endpoint:
    return Endpoint(name, default_port=port, transport=transport, max_body=POLL_BODY_LIMIT,
                    describe=wire.describe, **kw)


SPEC = ProtocolSpec(
    name="barco",
    catalogue=CATALOGUE,
    endpoints=(
        _http("discovery", DISCOVERY_PORT, hello=_brokers_path, is_hello_answer=_is_brokers,
              hello_clause="barco.discovery.brokers"),
        _http("producer-http", PRODUCER_PORT, hello=status_path, is_hello_answer=_status_answer(("producer",)),
              hello_clause="barco.discovery.status"),
        _http("consumer", CONSUMER_PORT, hello=status_path, is_hello_answer=_status_answer(("consumer",)),
              hello_clause="barco.discovery.status"),
        _http("consumer-h2c", CONSUMER_PORT, transport="h2c", shares_port_with="consumer", hello=status_path,
              is_hello_answer=_status_answer(("consumer",)), hello_clause="barco.discovery.status"),
        Endpoint("producer", default_port=PRODUCER_BINARY_PORT, framing=FRAMING, max_body=wire.MAX_BODY,
                 hello=hello, is_hello_answer=is_hello_answer, hello_clause="barco.producer.heartbeat",
                 describe=wire.describe, dissect=layers.dissect),
    ),
    message_param="opcode",
    version_param="version",
    capture=CaptureSupport("wirecheck.protocols.barco.capture", unframeable_clause="barco.framing.oversize"),
    faults=FAULTS,
    safety_faults=SAFETY_FAULTS,
    safety="wirecheck.targets.safety.barco",
    states=STATES,
    variants=VARIANTS,
    implementation_fields=("BarcoFrame.body_length", "BarcoFrame.crc"),  # both follow from what the body carries
    field_clauses={"*.stream_id": "barco.framing.stream-id-echo"},
    clients=CLIENTS,
    client_depends_on=SCENARIO_DEPENDS_ON,
    # each breaks its scenarios within seconds: curl produces x-ndjson (one record per line), httpx a 70000-byte
    # message; the second consumer of the group is served the first one's records again; JSON items lack the
    # start offset; a second HTTP/2 stream is refused
    client_faults={
        "barco.ndjson-one-record": tuple(f"barco.clients.{c}.produce-consume" for c in ("curl-http1", "curl-h2c")),
        "barco.record-cut-64k": ("barco.clients.httpx.produce-consume",),
        "barco.commit-ignored": tuple(f"barco.clients.{c}.group-resume" for c in CLIENTS),
        "barco.json-start-offset-missing": tuple(f"barco.clients.{c}.json-poll" for c in CLIENTS),
        "barco.h2c-one-stream": ("barco.clients.httpx.produce-consume",),
    },
)
