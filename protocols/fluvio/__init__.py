"""Fluvio SPU public protocol: versioned codecs, ErrorCode with payloads, RecordSet/batch/record, scapy layers
and the clause catalogue.

Modules: ``wire`` (Fluvio's primitives as versioned codecs), ``errors`` (ErrorCode), ``records`` (RecordSet,
batch, record, compression), ``messages`` (header, request and response bodies of the SPU's public APIs),
``layers`` (scapy packets for humans), ``clauses``.
"""

from __future__ import annotations

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import layers, messages, sc
from wirecheck.protocols.fluvio.faults import FAULTS, SAFETY_FAULTS, VARIANTS
from wirecheck.protocols.fluvio.states import STATES
from wirecheck.protocols.fluvio.clauses import CATALOGUE, MAX_FRAME
from wirecheck.protocols.fluvio.clients import CLIENTS, SCENARIO_DEPENDS_ON
from wirecheck.protocols.framing import I32_PREFIX
from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec

DEFAULT_PORT = 9005  # SPU public port (fluvio-types defaults)
SC_PORT = 9003  # SC public port (fluvio-types defaults)
HELLO_CORRELATION_ID = 0x57C0  # arbitrary, recognisable in captures
HELLO_BODY = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}


def hello() -> bytes:
    """ApiVersions v2, as the Rust client sends it first on every connection."""
    return messages.encode_request(messages.API_VERSIONS, 2, HELLO_CORRELATION_ID, HELLO_BODY, client_id="fluvio")


def _answers_hello_serving(api_key: int):
    """An ApiVersions answer to our hello that lists ``api_key`` (Produce on an SPU, Watch on an SC)."""

    def check(frame: bytes) -> bool:
        try:
            decoded = messages.decode_response(messages.API_VERSIONS, 2, frame)
        except DecodeError:
            return False
        body = decoded["body"]
        return (decoded["correlation_id"] == HELLO_CORRELATION_ID and body["error_code"].code == 0
                and any(entry["api_key"] == api_key for entry in body["api_keys"]))

    return check


is_hello_answer = _answers_hello_serving(messages.PRODUCE)


SPEC = ProtocolSpec(
    name="fluvio",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("spu", default_port=DEFAULT_PORT, framing=I32_PREFIX, max_body=MAX_FRAME, hello=hello,
                        is_hello_answer=is_hello_answer, hello_clause="fluvio.versions.advertised",
                        describe=messages.describe,
                        dissect=layers.dissect),
               # the Streaming Controller: topics and the metadata watches clients start with (protocols/fluvio/sc.py)
               Endpoint("sc", default_port=SC_PORT, framing=I32_PREFIX, max_body=MAX_FRAME, hello=hello,
                        is_hello_answer=_answers_hello_serving(sc.WATCH), hello_clause="fluvio.sc.api-versions.watch",
                        describe=messages.describe)),
    message_param="api_key",
    version_param="version",
    capture=CaptureSupport("wirecheck.protocols.fluvio.capture", unframeable_clause="fluvio.framing.oversize"),
    faults=FAULTS,
    safety_faults=SAFETY_FAULTS,
    safety="wirecheck.targets.safety.fluvio",
    states=STATES,
    variants=VARIANTS,
    volatile_fields=("*.modified_time",),  # when a consumer offset was last written, by the server's clock
    derived_fields=("*ResponseFrame*.size",),
    # each server advertises its own versions (the cases judge them and pick a version both servers speak)
    implementation_fields=("ApiVersionsResponse*.api_keys*",),
    # every consumer on the server, whichever case stored it
    server_listings={"FetchConsumerOffsetsResponse*.consumers": "consumer_id"},
    field_clauses={"ProduceResponse*.base_offset": "fluvio.produce.offsets",
                   "FetchResponse*.high_watermark": "fluvio.fetch.high-watermark"},
    clients=CLIENTS,
    client_depends_on=SCENARIO_DEPENDS_ON,
    # the producer is told offsets the records are not consumed at; the committed offset is not listed (and the
    # resumed consumer starts over); a second creation of a topic succeeds
    client_faults={"fluvio.produce-base-offset-wrong": ("fluvio.clients.fluvio-python.produce-consume",),
                   "fluvio.consumer-offset-not-stored": ("fluvio.clients.fluvio-python.consumer-offsets",),
                   "fluvio.sc-create-existing-ok": ("fluvio.clients.fluvio-python.topic-admin",)},
)
