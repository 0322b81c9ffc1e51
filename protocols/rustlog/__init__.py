"""RustLog: u32-length-prefixed JSON frames (seed: RustLog Protocol Specification)."""

import json

from wirecheck.protocols.framing import U32_PREFIX
from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec
from wirecheck.protocols.rustlog.faults import FAULTS, SAFETY_FAULTS, VARIANTS
from wirecheck.protocols.rustlog.states import STATES
from wirecheck.protocols.rustlog.clauses import CATALOGUE, MAX_FRAME
from wirecheck.protocols.rustlog.layers import describe, dissect, encode_frame

PING = encode_frame({"type": "Ping"})


def _is_pong(frame: bytes) -> bool:
    try:
        return json.loads(frame[4:]) == {"type": "Pong"}
    except ValueError:
        return False


SPEC = ProtocolSpec(
    name="rustlog",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("broker", default_port=7070, framing=U32_PREFIX, max_body=MAX_FRAME, hello=lambda: PING, hello_clause="rustlog.ping.pong",
                        is_hello_answer=_is_pong, describe=describe,
                        dissect=dissect),),
    capture=CaptureSupport("wirecheck.protocols.rustlog.capture", unframeable_clause="rustlog.framing.oversize"),
    faults=FAULTS,
    safety_faults=SAFETY_FAULTS,
    safety="wirecheck.targets.safety.rustlog",
    states=STATES,
    variants=VARIANTS,
    # append times and messages are the server's own; the length follows the JSON text
    volatile_fields=("*.timestamp", "Error.message", "MetricsFetchResponse.metrics*"),
    derived_fields=("RustLogFrame.length",),
    # the topics an error names as available: every topic on the server, whoever created it
    server_listings={"Error.details.available_topics": ""},
    field_clauses={"ProduceResponse.base_offset": "rustlog.produce.offsets",
                   "FetchResponse.records.offset": "rustlog.fetch.records",
                   "FetchResponse.records.payload": "rustlog.fetch.records",
                   "FetchResponse.next_offset": "rustlog.fetch.next-offset",
                   "OffsetFetchResponse.offset": "rustlog.commit.round-trip"},
)
