"""Kafka: message codecs and scapy layers generated from Kafka's JSON definitions, record batches, error codes
and the clause catalogue.

Modules: ``schema`` (load the definitions), ``codec`` (struct codec compiled from them), ``messages`` (the
API: encode/decode frames, versions, header rules), ``layers`` (scapy packets generated from the same codecs),
``records`` + ``compression`` (record batch v2, legacy message sets), ``errors``, ``clauses``.
"""

from __future__ import annotations

from wirecheck.protocols.framing import I32_PREFIX
from wirecheck.protocols.kafka import layers, messages
from wirecheck.protocols.kafka.faults import FAULTS
from wirecheck.protocols.kafka.clauses import CATALOGUE
from wirecheck.protocols.spec import CaptureSupport, Endpoint, ProtocolSpec

DEFAULT_PORT = 9092
MAX_BODY = 104_857_600  # socket.request.max.bytes default (SocketServerConfigs.SOCKET_REQUEST_MAX_BYTES_DEFAULT)
HELLO_CORRELATION_ID = 0x57C0  # arbitrary, recognisable in captures


def hello() -> bytes:
    """ApiVersions v0: every Kafka broker since 0.10 answers it, whatever else it supports."""
    return messages.encode_request(messages.API_VERSIONS, 0, HELLO_CORRELATION_ID, "wirecheck-probe", {})


def is_hello_answer(frame: bytes) -> bool:
    try:
        decoded = messages.decode_response(messages.API_VERSIONS, 0, frame)
    except messages.DecodeError:
        return False
    body = decoded["body"]
    return (decoded["header"]["CorrelationId"] == HELLO_CORRELATION_ID and body["ErrorCode"] == 0
            and any(entry["ApiKey"] == messages.API_VERSIONS for entry in body["ApiKeys"]))


#: correlation id -> (api key, version) of the requests described last: a response does not say what it answers,
#: so describe() guesses from the request with the same correlation id (display only; bounded).
_RECENT_REQUESTS: dict[int, tuple[int, int]] = {}
_RECENT_LIMIT = 4096


def describe(frame: bytes) -> str:
    """A readable one-liner: requests fully; responses by the last request described with their correlation id."""
    try:
        decoded = messages.decode_request(frame)
        header = decoded["header"]
        key, version, correlation = header["RequestApiKey"], header["RequestApiVersion"], header["CorrelationId"]
        if len(_RECENT_REQUESTS) >= _RECENT_LIMIT:
            _RECENT_REQUESTS.clear()
        _RECENT_REQUESTS[correlation] = (key, version)
        return (f"{messages.api_name(key)} v{version} request corr={correlation} "
                f"client={header.get('ClientId')!r} {decoded['body']!r}")[:2000]
    except Exception:  # describe never raises: it runs on hostile bytes
        pass
    correlation = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
    guess = _RECENT_REQUESTS.get(correlation)
    if guess is not None:
        try:
            body = messages.decode_response(guess[0], guess[1], frame)["body"]
            return (f"{messages.api_name(guess[0])} v{guess[1]} response corr={correlation} {body!r}")[:2000]
        except Exception as exc:
            return (f"Kafka frame corr={correlation} ({len(frame)} bytes), not a {messages.api_name(guess[0])} "
                    f"v{guess[1]} response: {exc}")[:2000]
    length = int.from_bytes(frame[:4], "big", signed=True) if len(frame) >= 4 else None
    return f"Kafka frame length={length} corr?={correlation} ({len(frame)} bytes)"


SPEC = ProtocolSpec(
    name="kafka",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("broker", default_port=DEFAULT_PORT, framing=I32_PREFIX, max_body=MAX_BODY, hello=hello,
                        is_hello_answer=is_hello_answer, describe=describe,
                        dissect=layers.dissect),),
    message_param="api",
    version_param="api_version",
    capture=CaptureSupport("wirecheck.protocols.kafka.capture", unframeable_clause="kafka.framing.size-prefix"),
    faults=FAULTS,
    login="suites.kafka.login:login",  # SASL when --target-option kafka.sasl=USER:PASSWORD is given
)
