"""ApiVersions and version handling (notes §3, A3, A16, A18)."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.fluvio import messages
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.strategies.fluvio import request_frames
from wirecheck.suites.fluvio.client import C, Fluvio, batch_of, new_topic

case = pytest.mark.case
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")
REQUIRED = (messages.PRODUCE, messages.FETCH, messages.FETCH_OFFSETS, messages.STREAM_FETCH,
            messages.UPDATE_OFFSETS)


@case("fluvio.versions.advertised")
@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_lists_the_spu_apis(target, version):
    answer = Fluvio(target).api_versions(version)
    listed = {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
    missing = [messages.api_name(k) for k in REQUIRED if k not in listed]
    if missing:
        raise Divergence(C["fluvio.versions.advertised"], f"{', '.join(messages.api_name(k) for k in REQUIRED)} "
                         "listed", f"missing {missing}: {listed}")
    bad = {k: r for k, r in listed.items() if r[0] > r[1] or r[0] < 0}
    if bad:
        raise Divergence(C["fluvio.versions.advertised"], "0 <= min <= max for every key", str(bad))


@case("fluvio.versions.platform-semver")
def test_platform_version_is_semver(target):
    answer = Fluvio(target).api_versions()
    if not SEMVER.fullmatch(answer["platform_version"]):
        raise Divergence(C["fluvio.versions.platform-semver"], "a semantic version such as 0.0.0",
                         repr(answer["platform_version"]))


@case("fluvio.versions.every-version")
def test_produce_at_every_advertised_version(target):
    """The seed's v7, the current 25 and every other advertised version: decoded and answered at that version."""
    client, topic = new_topic(target, stem="versions")
    low, high = client.advertised()[messages.PRODUCE]
    expected = client.log_end(topic)
    for version in range(low, high + 1):
        error, base = client.produce(topic, 0, batch_of([b"v%d" % version]), clause_id="fluvio.versions.every-version",
                                     version=version)
        if error.code != 0 or base != expected:
            raise Divergence(C["fluvio.versions.every-version"], f"error 0 and base_offset {expected} at v{version}",
                             f"{error}, base_offset {base}")
        expected += 1
    for required in (7, 25):
        if not low <= required <= high:
            raise Divergence(C["fluvio.versions.every-version"], "Produce v7 (seed) and v25 (current) advertised",
                             f"Produce {low}..{high}")


@case("fluvio.versions.every-version")
@pytest.mark.parametrize("api_key", [messages.FETCH, messages.FETCH_OFFSETS, messages.STREAM_FETCH],
                         ids=["Fetch", "FetchOffsets", "StreamFetch"])
def test_reading_apis_at_every_advertised_version(target, api_key):
    client, topic = new_topic(target, stem="rversions")
    client.produce_ok(topic, 0, batch_of([b"x"]))
    low, high = client.advertised().get(api_key, (None, None))
    if low is None:
        raise Unimplemented(f"{messages.api_name(api_key)} is not advertised")
    for version in range(low, high + 1):
        if api_key == messages.FETCH:
            entry = client.fetch(topic, 0, 0, version=version, clause_id="fluvio.versions.every-version")
            if entry["error_code"].code != 0 or entry["high_watermark"] < 1:
                raise Divergence(C["fluvio.versions.every-version"], f"error 0 and the high watermark at v{version}",
                                 f"{entry['error_code']}, hw {entry['high_watermark']}")
        elif api_key == messages.FETCH_OFFSETS:
            body = {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}], "consumer_id": None}
            answer = client.call(api_key, version, body, "fluvio.versions.every-version")
            if answer["topics"][0]["partitions"][0]["error_code"].code != 0:
                raise Divergence(C["fluvio.versions.every-version"], f"error 0 at v{version}", str(answer))
        else:
            session = Fluvio(target)
            body = {"topic": topic, "partition": 0, "fetch_offset": 0, "max_bytes": 1 << 20, "isolation": 0,
                    "wasm_module": b"", "smartmodule": None, "derivedstream": None, "smartmodules": [],
                    "consumer_id": None}
            answer = session.call(api_key, version, body, "fluvio.versions.every-version")
            if answer["partition"]["error_code"].code != 0:
                raise Divergence(C["fluvio.versions.every-version"], f"error 0 at v{version}", str(answer))
            session.close()


@case("fluvio.versions.every-version")
@given(data=st.data())
def test_valid_requests_at_any_advertised_version_are_answered(target, data):
    """Property: a valid Produce / Fetch / FetchOffsets / ApiVersions at any advertised version is answered at that
    version, with the request's correlation id, and a Produce to a topic we own succeeds."""
    target.transcript.clear()
    client, topic = new_topic(target, stem="valid")
    try:
        _one_valid_request(client, topic, data)
    finally:  # one connection per example, closed with it: a nightly budget must not hold a thousand open
        client.close()


def _one_valid_request(client, topic: str, data) -> None:
    corr = client.next_correlation_id()
    api, version, frame = data.draw(request_frames(topic, corr), label="request")
    low, high = client.advertised().get(api, (0, 2)) if api != messages.API_VERSIONS else (0, 2)
    if not low <= version <= high:
        return  # not advertised: nothing to check
    clause = "fluvio.versions.every-version"
    if api == messages.PRODUCE and messages.decode_request(frame)["body"]["isolation"] == messages.READ_COMMITTED:
        clause = "fluvio.produce.isolation"  # a ReadCommitted Produce answered at once, with error 0, is its clause
    client.session.send(frame)
    answer = client.receive(api, version, corr, clause)
    if api == messages.PRODUCE:
        codes = [str(p["error_code"]) for t in answer["responses"] for p in t["partitions"]
                 if p["error_code"].code != 0]
        if codes:
            raise Divergence(C[clause], f"error 0 for every partition at v{version}", ", ".join(codes))


@case("fluvio.versions.above-max")
@pytest.mark.parametrize("api_key", [messages.PRODUCE, messages.FETCH_OFFSETS, messages.UPDATE_OFFSETS],
                         ids=["Produce", "FetchOffsets", "UpdateOffsets"])
def test_version_above_the_advertised_maximum_is_not_left_hanging(target, api_key):
    client, topic = new_topic(target, stem="abovemax")
    low, high = client.advertised().get(api_key, (None, None))
    if low is None:
        raise Unimplemented(f"{messages.api_name(api_key)} is not advertised")
    bodies = {messages.PRODUCE: Fluvio.produce_body([(topic, [(0, batch_of([b"above max"]))])]),
              messages.FETCH_OFFSETS: {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}],
                                       "consumer_id": None},
              messages.UPDATE_OFFSETS: {"offsets": []}}
    version = high + 1
    corr = client.send(api_key, version, bodies[api_key])
    reply = client.session.recv()
    if reply.ended:
        return  # closing is permitted (the reference broker's D2)
    if not reply.is_frame:
        raise Divergence(C["fluvio.versions.above-max"], f"an answer or a close for {messages.api_name(api_key)} "
                         f"v{version} (advertised {low}..{high})", f"{reply}: the connection stayed silent")
    got = int.from_bytes(reply.frame[4:8], "big", signed=True) if len(reply.frame) >= 8 else None
    if got != corr:
        raise Divergence(C["fluvio.versions.above-max"], f"an answer with correlation id {corr}",
                         f"correlation id {got} ({len(reply.frame)} bytes)")
