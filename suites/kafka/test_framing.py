"""Kafka framing and headers: size prefix, correlation ids, pipelining, header versions, ApiVersions rules."""

from __future__ import annotations

import struct
import time

import pytest

from wirecheck.protocols.kafka import errors, messages
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, Kafka, short

case = pytest.mark.case
API_VERSIONS = messages.API_VERSIONS
SOFTWARE = {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "0.1.0"}


@case("kafka.header.correlation-id")
@pytest.mark.parametrize("correlation_id", [0, 1, 0x7FFFFFFF, -1, -(2**31)], ids=["zero", "one", "max", "-1", "min"])
def test_response_echoes_correlation_id(target, correlation_id):
    client = Kafka(target)
    body = client.call(API_VERSIONS, 0, {}, "kafka.header.correlation-id", correlation_id=correlation_id)
    if body["ErrorCode"] != errors.NONE:
        raise Divergence(C["kafka.api-versions.advertised"], "error 0", errors.name(body["ErrorCode"]))


@case("kafka.framing.pipelining")
def test_pipelined_requests_are_answered_in_order(target):
    client = Kafka(target)
    ids = [101, 7, 55, 3]
    client.session.send(b"".join(messages.encode_request(API_VERSIONS, 0, i, "wirecheck", {}) for i in ids))
    frames = [client.frame("kafka.framing.pipelining", f"answer {n + 1} of {len(ids)}") for n in range(len(ids))]
    # every request answered, in another order: this clause's, not a wrong correlation id
    got = [struct.unpack_from(">i", frame, 4)[0] if len(frame) >= 8 else None for frame in frames]
    if got != ids and sorted(got, key=str) == sorted(ids, key=str):
        raise Divergence(C["kafka.framing.pipelining"], f"correlation ids in request order {ids}", f"{got}")
    for frame, correlation_id in zip(frames, ids):
        client.answer_of(frame, API_VERSIONS, 0, correlation_id, "kafka.framing.pipelining")


@case("kafka.framing.size-prefix")
@pytest.mark.parametrize("split", [1, 3, 4, 7], ids=lambda n: f"first-{n}-bytes")
def test_frame_split_across_writes_is_reassembled(target, split):
    client = Kafka(target)
    frame = messages.encode_request(API_VERSIONS, 0, 9, "wirecheck", {})
    client.session.send(frame[:split])
    time.sleep(0.2)
    client.session.send(frame[split:])
    client.receive(API_VERSIONS, 0, 9, "kafka.framing.size-prefix")


@case("kafka.framing.negative-size", hostile=True)
@pytest.mark.parametrize("size", [-1, -2, -(2**31)], ids=["-1", "-2", "int32-min"])
def test_negative_size_closes_the_connection(target, size):
    # Only the size and a few bytes: a conforming broker decides from the size alone and never waits.
    client = Kafka(target)
    client.session.send(struct.pack(">i", size) + b"\x00\x12\x00\x00\x00\x00\x00\x01")
    client.closes("kafka.framing.negative-size")


#: Kafka's default frame limit (socket.request.max.bytes)
KAFKA_FRAME_LIMIT = 100 * 1024 * 1024


@case("kafka.framing.size-limit", hostile=True)
@pytest.mark.parametrize("size", [KAFKA_FRAME_LIMIT + 1, 2**31 - 1], ids=["100MiB+1", "int32-max"])
def test_size_above_the_limit_is_refused(target, size):
    # An ApiVersions v0 header after the size: a broker that answers an error can say which request it refuses.
    clause = "kafka.framing.size-limit"
    client = Kafka(target)
    correlation_id = client.next_correlation_id()
    client.session.send(struct.pack(">ihhi", size, API_VERSIONS, 0, correlation_id))
    reply = client.session.recv()
    if reply.ended:
        return
    expected = "the connection closed, or an error answer"
    if not reply.is_frame:
        raise Divergence(C[clause], expected, f"{reply} (a limit above {size} bytes?)")
    codes = client.error_codes_of(reply.frame, (API_VERSIONS, 0))
    if not codes or codes == {errors.NONE}:
        raise Divergence(C[clause], expected, f"an answer without an error: {client.show(reply.frame)}")


@case("kafka.header.null-client-id")
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_null_client_id_is_accepted(target, version):
    client = Kafka(target)
    client.require(API_VERSIONS, version)
    client.call(API_VERSIONS, version, SOFTWARE, "kafka.header.null-client-id", client_id=None)


@case("kafka.header.api-versions-v0")
@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_response_uses_header_v0(target, version):
    # A header v1 response would put a tagged-field byte before the body: the strict decode fails on it.
    client = Kafka(target)
    client.require(API_VERSIONS, version)
    body = client.call(API_VERSIONS, version, SOFTWARE, "kafka.header.api-versions-v0")
    if body["ErrorCode"] != errors.NONE:
        raise Divergence(C["kafka.header.api-versions-v0"], "error 0", errors.name(body["ErrorCode"]))


@case("kafka.header.response-v1-flexible")
def test_flexible_response_uses_header_v1(target):
    client = Kafka(target)
    low, high = client.require(3)
    flexible = [v for v in range(low, min(high, messages.versions(3)[1]) + 1) if messages.flexible(3, v)]
    if not flexible:
        pytest.skip("UNIMPLEMENTED: no flexible Metadata version advertised")
    client.call(3, flexible[0], {"Topics": [], "AllowAutoTopicCreation": False},
                "kafka.header.response-v1-flexible")


#: (id, version relative to the advertised maximum or absolute when negative, body shape): KIP-511 says the broker
#: must not parse the body of an ApiVersions version it does not support, whatever it looks like.
UNSUPPORTED = [("max+1-v0-body", 1, 0), ("max+1-v3-body", 1, 3), ("max+50-v3-body", 50, 3),
               ("negative-v0-body", -1, 0), ("int16-min-v3-body", -(2**15), 3)]


def unsupported_api_versions_frame(version: int, shape: int, correlation_id: int) -> bytes:
    """An ApiVersions request at ``version`` with the body of version ``shape`` (v0: none). The header is the one
    ``version`` itself takes: a broker reads the header before it knows the version is unsupported, and derives
    its version from the api version (RequestHeader.parse, RequestHeader.java:115-125 at apache/kafka 1eb7644, via the generated
    ApiMessageType.requestHeaderVersion: ApiVersions >= 3 is flexible, header v2; below, v1; KIP-482). Above
    the maximum, every ApiVersions version is flexible ("flexibleVersions": "3+", ApiVersionsRequest.json), so
    header v2; a header v1 there is a truncated header, which Apache Kafka refuses by closing."""
    out = bytearray()
    messages.request_header_codec(2 if version >= 3 else 1).write(out, {
        "RequestApiKey": API_VERSIONS, "RequestApiVersion": version, "CorrelationId": correlation_id,
        "ClientId": "wirecheck"})
    messages.request_codec(API_VERSIONS, shape).write(out, SOFTWARE if shape else {})
    return struct.pack(">i", len(out)) + bytes(out)


@case("kafka.api-versions.unsupported-version")
@pytest.mark.parametrize(("offset", "shape"), [(o, b) for _, o, b in UNSUPPORTED], ids=[i for i, _, _ in UNSUPPORTED])
def test_unsupported_api_versions_version_gets_v0_error_35(target, offset, shape):
    clause = "kafka.api-versions.unsupported-version"
    client = Kafka(target)
    low, high = client.require(API_VERSIONS)
    # --differential: above what either server speaks, or the oracle parses a version it has (Apache Kafka 4.4
    # speaks ApiVersions v5) where the target refuses one it lacks
    ceiling = max(high, (client.oracle_range(API_VERSIONS) or (low, high))[1])
    version = ceiling + offset if offset > 0 else offset
    correlation_id = client.next_correlation_id()
    client.session.send(unsupported_api_versions_frame(version, shape, correlation_id))
    # Strict v0 decoding: an answer in another shape (the request's, the broker's highest) or cut short diverges.
    body = client.receive(API_VERSIONS, 0, correlation_id, clause)
    if body["ErrorCode"] != errors.UNSUPPORTED_VERSION:
        raise Divergence(C[clause], f"ErrorCode 35 (UNSUPPORTED_VERSION) for ApiVersions v{version}",
                         f"ErrorCode {body['ErrorCode']} ({errors.name(body['ErrorCode'])})")
    own = [(e["MinVersion"], e["MaxVersion"]) for e in body["ApiKeys"] if e["ApiKey"] == API_VERSIONS]
    if own != [(low, high)]:
        raise Divergence(C[clause], f"ApiKeys listing ApiVersions' own range {low}-{high} once",
                         short(body["ApiKeys"]))


@case("kafka.api-versions.advertised")
def test_api_versions_lists_itself_with_sane_ranges(target):
    client = Kafka(target)
    ranges = client.advertised()
    if API_VERSIONS not in ranges or ranges[API_VERSIONS][0] != 0:
        raise Divergence(C["kafka.api-versions.advertised"], "ApiVersions advertised from version 0",
                         short(ranges.get(API_VERSIONS)))
    bad = {key: r for key, r in ranges.items() if r[0] < 0 or r[1] < r[0]}
    if bad:
        raise Divergence(C["kafka.api-versions.advertised"], "0 <= min <= max for every key", short(bad))


@case("kafka.api-versions.produce-min-zero")
def test_produce_is_advertised_from_version_zero(target):
    client = Kafka(target)
    low, _ = client.require(0)
    if low != 0:
        raise Divergence(C["kafka.api-versions.produce-min-zero"], "Produce min version 0 (KAFKA-18659)",
                         f"min version {low}")


#: (id, ClientSoftwareName, ClientSoftwareVersion): one of the two outside KIP-511's pattern
INVALID_SOFTWARE = [("name-leading-dash", "-bad", "1.0"), ("name-space", "bad name", "1.0"), ("name-bang", "x!", "1.0"),
                    ("name-empty", "", "1.0"), ("version-trailing-dot", "wirecheck", "1.0."),
                    ("version-plus", "wirecheck", "1.0+build"), ("version-empty", "wirecheck", "")]


@case("kafka.api-versions.invalid-software-name")
@pytest.mark.parametrize(("name", "software_version"), [(n, v) for _, n, v in INVALID_SOFTWARE],
                         ids=[i for i, _, _ in INVALID_SOFTWARE])
def test_invalid_client_software_is_invalid_request(target, name, software_version):
    client = Kafka(target)
    client.require(API_VERSIONS, 3)
    body = client.call(API_VERSIONS, 3, {"ClientSoftwareName": name, "ClientSoftwareVersion": software_version},
                       "kafka.api-versions.invalid-software-name")
    if body["ErrorCode"] != errors.INVALID_REQUEST:
        raise Divergence(C["kafka.api-versions.invalid-software-name"], "ErrorCode 42 (INVALID_REQUEST)",
                         f"ErrorCode {body['ErrorCode']} ({errors.name(body['ErrorCode'])})")


@case("kafka.header.unknown-api-key", hostile=True)
@pytest.mark.parametrize("api_key", [999, 0x7FFF, -1], ids=["999", "int16-max", "-1"])
def test_unknown_api_key_closes_the_connection(target, api_key):
    client = Kafka(target)
    frame = messages.encode_request(API_VERSIONS, 0, 5, "wirecheck", {})
    client.session.send(frame[:4] + struct.pack(">h", api_key) + frame[6:])
    client.closes("kafka.header.unknown-api-key")


@case("kafka.header.unsupported-version", hostile=True)
def test_unadvertised_version_is_not_answered_as_supported(target):
    client = Kafka(target)
    _, high = client.require(3)
    version = high + 1
    correlation_id = 77
    frame = messages.encode_request(3, min(version, messages.versions(3)[1]), correlation_id, "wirecheck",
                                    {"Topics": [], "AllowAutoTopicCreation": False})
    client.session.send(frame[:6] + struct.pack(">h", version) + frame[8:])
    reply = client.session.recv()
    if reply.ended:
        return
    if reply.is_frame:
        # An error answer (35) is tolerable; a success answer claims a version the target does not advertise, and
        # an answer nobody can read (at the version asked or the highest advertised) is no error answer either.
        codes = None
        for shape in sorted({min(version, messages.versions(3)[1]), min(high, messages.versions(3)[1])}):
            codes = client.error_codes_of(reply.frame, (3, shape))
            if codes:
                break
        if codes and errors.UNSUPPORTED_VERSION in codes:
            return
        raise Divergence(C["kafka.header.unsupported-version"],
                         "the connection closed (Kafka) or an error 35 (UNSUPPORTED_VERSION) answer",
                         f"an answer to unadvertised Metadata v{version}: {client.show(reply.frame)}")
    raise Divergence(C["kafka.header.unsupported-version"], "the connection closed", str(reply))


@case("kafka.header.client-id-classic")
@pytest.mark.parametrize("length", [127, 200, 1000])
def test_long_client_id_in_a_flexible_header(target, length):
    # ClientId keeps its INT16 length in header v2: a broker reading it as a compact string misparses 0x00 as
    # null and everything after it.
    client = Kafka(target)
    client.require(API_VERSIONS, 3)
    body = client.call(API_VERSIONS, 3, SOFTWARE, "kafka.header.client-id-classic", client_id="c" * length)
    if body["ErrorCode"] != errors.NONE:
        raise Divergence(C["kafka.header.client-id-classic"], "error 0", errors.name(body["ErrorCode"]))


@case("kafka.header.request-v2-flexible")
def test_flexible_request_header_carries_tagged_fields(target):
    client = Kafka(target)
    low, high = client.require(3)
    flexible = [v for v in range(low, min(high, messages.versions(3)[1]) + 1) if messages.flexible(3, v)]
    if not flexible:
        pytest.skip("UNIMPLEMENTED: no flexible Metadata version advertised")
    version = flexible[-1]
    correlation_id = client.next_correlation_id()
    # The body names one topic that does not exist: it comes back by name only if the broker skipped the header's
    # tagged fields exactly and read the body after them (whatever topics the target has).
    name = target.unique("absent")
    client.session.send(messages.encode_request(3, version, correlation_id, "wirecheck",
                                                {"Topics": [{"Name": name}], "AllowAutoTopicCreation": False},
                                                header_tagged_fields={3: b"\x00\x01", 90: b"x" * 20}))
    body = client.receive(3, version, correlation_id, "kafka.header.request-v2-flexible")
    if [t["Name"] for t in body["Topics"]] != [name]:
        raise Divergence(C["kafka.header.request-v2-flexible"], f"the one topic asked for, {name!r}",
                         short([t["Name"] for t in body["Topics"]]))


@case("kafka.encoding.flexible")
@pytest.mark.parametrize("length", [126, 127, 128, 300, 20000], ids=lambda n: f"{n}-chars")
def test_compact_strings_with_multi_byte_lengths(target, length):
    # N+1 crosses the one-byte varint boundary at N=127: lengths around it take two or three varint bytes.
    client = Kafka(target)
    client.require(API_VERSIONS, 3)
    body = client.call(API_VERSIONS, 3, {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "1" * length},
                       "kafka.encoding.flexible")
    if body["ErrorCode"] != errors.NONE:
        raise Divergence(C["kafka.encoding.flexible"], "error 0", errors.name(body["ErrorCode"]))
