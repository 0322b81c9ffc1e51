"""StreamFetch (key 1003) and UpdateOffsets (key 1005) (notes §5.4, §5.5)."""

import struct

import pytest

from wirecheck.protocols.fluvio import errors, messages, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.client import C, INVALID_TOPIC, NO_SUCH_PARTITION, Fluvio, batch_of, new_topic

case = pytest.mark.case
QUIET = 0.4  # seconds of silence that show a stream is holding back


def _open(client, topic, offset, clause_id):
    corr, version = client.stream_fetch(topic, 0, offset)
    answer = client.stream_answer(corr, version, clause_id)
    return corr, version, answer


def _check_data(answer, topic, expected: list[bytes], clause_id):
    part = answer["partition"]
    if answer["topic"] != topic or part["error_code"].code != 0:
        raise Divergence(C[clause_id], f"records of {topic} with error 0", f"{answer['topic']}: {part['error_code']}")
    got = records.split_batches(part["records"])
    if got != expected:
        raise Divergence(C[clause_id], "the stored batches", str([b.hex() for b in got])[:600])


@case("fluvio.stream.records")
def test_stream_fetch_answers_with_records_and_a_stream_id(target):
    client, topic = new_topic(target, stem="stream")
    start = client.log_end(topic)
    batch = batch_of([b"s0", b"s1"])
    base = client.produce_ok(topic, 0, batch)
    reader = Fluvio(target)
    _, _, answer = _open(reader, topic, start + 1, "fluvio.stream.records")
    if answer["stream_id"] < 1:
        raise Divergence(C["fluvio.stream.records"], "stream_id >= 1", str(answer["stream_id"]))
    _check_data(answer, topic, [records.as_stored(batch, base)], "fluvio.stream.records")
    # a second stream on the same connection gets another id
    _, _, again = _open(reader, topic, start, "fluvio.stream.records")
    if again["stream_id"] in (0, answer["stream_id"]):
        raise Divergence(C["fluvio.stream.records"], f"a new stream_id (not 0, not {answer['stream_id']})",
                         str(again["stream_id"]))


@case("fluvio.stream.unknown-partition")
@pytest.mark.parametrize("where", ["topic", "partition"])
def test_stream_fetch_unknown_is_refused_once(target, where):
    client, topic = new_topic(target, stem="snl")
    name, partition = (INVALID_TOPIC, 0) if where == "topic" else (topic, NO_SUCH_PARTITION)
    corr, version = client.stream_fetch(name, partition, 0)
    answer = client.stream_answer(corr, version, "fluvio.stream.unknown-partition")
    code = answer["partition"]["error_code"].code
    if answer["stream_id"] != 0 or code != errors.NOT_LEADER_FOR_PARTITION:
        raise Divergence(C["fluvio.stream.unknown-partition"], "stream_id 0 and NotLeaderForPartition (6)",
                         f"stream_id {answer['stream_id']}, {answer['partition']['error_code']}")


@case("fluvio.stream.waits-for-data")
def test_stream_at_the_end_waits_then_pushes(target):
    client, topic = new_topic(target, stem="swait")
    start = client.log_end(topic)
    reader = Fluvio(target)
    corr, version = reader.stream_fetch(topic, 0, start)
    early = reader.session.recv(QUIET)
    if early.is_frame or early.ended:
        raise Divergence(C["fluvio.stream.waits-for-data"], "nothing while the partition has no records",
                         str(early))
    batch = batch_of([b"pushed"])
    base = client.produce_ok(topic, 0, batch)
    answer = reader.stream_answer(corr, version, "fluvio.stream.waits-for-data")
    _check_data(answer, topic, [records.as_stored(batch, base)], "fluvio.stream.waits-for-data")


@case("fluvio.stream.flow-control")
def test_stream_waits_for_update_offsets(target):
    client, topic = new_topic(target, stem="sflow")
    start = client.log_end(topic)
    first = batch_of([b"one"])
    first_base = client.produce_ok(topic, 0, first)
    reader = Fluvio(target)
    corr, version, answer = _open(reader, topic, start, "fluvio.stream.flow-control")
    _check_data(answer, topic, [records.as_stored(first, first_base)], "fluvio.stream.flow-control")
    second = batch_of([b"two"])
    second_base = client.produce_ok(topic, 0, second)
    held = reader.session.recv(QUIET)
    if held.is_frame:
        raise Divergence(C["fluvio.stream.flow-control"], "nothing more before UpdateOffsets", str(held))
    reader.send(messages.UPDATE_OFFSETS, reader.version(messages.UPDATE_OFFSETS, 0),
                {"offsets": [{"offset": first_base + 1, "session_id": answer["stream_id"]}]})
    # The status answer and the next stream push may come in either order (the stream is its own task).
    seen = {}
    for _ in range(2):
        reply = reader.session.recv()
        if not reply.is_frame:
            raise Divergence(C["fluvio.stream.flow-control"], "the UpdateOffsets status and the next records",
                             f"{reply} (seen: {sorted(seen)})")
        (reply_corr,) = struct.unpack_from(">i", reply.frame, 4)
        if reply_corr == corr:
            seen["stream"] = reader.decode(reply, messages.STREAM_FETCH, version, corr, "fluvio.stream.flow-control")
        else:
            seen["status"] = reply_corr
    if "stream" not in seen:
        raise Divergence(C["fluvio.stream.flow-control"], "records pushed after UpdateOffsets", "only the status")
    _check_data(seen["stream"], topic, [records.as_stored(second, second_base)], "fluvio.stream.flow-control")


@case("fluvio.stream.concurrent-requests")
def test_other_requests_are_served_while_a_stream_is_open(target):
    client, topic = new_topic(target, stem="sconc")
    start = client.log_end(topic)
    stream_corr, _ = client.stream_fetch(topic, 0, start)  # waits: the partition has nothing at the end
    version = client.version(messages.FETCH_OFFSETS)
    body = {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}], "consumer_id": None}
    corr = client.send(messages.FETCH_OFFSETS, version, body)
    reply = client.session.recv()
    frame = client.frame_of(reply, "fluvio.stream.concurrent-requests", "the FetchOffsets answer")
    if struct.unpack_from(">i", frame, 4)[0] == stream_corr:  # the stream spoke: nothing should be on it yet
        raise Divergence(C["fluvio.stream.waits-for-data"], "nothing on the stream while the partition has no "
                         "records", f"a {len(frame)}-byte StreamFetch answer")
    answer = client.decode(reply, messages.FETCH_OFFSETS, version, corr, "fluvio.stream.concurrent-requests")
    entry = answer["topics"][0]["partitions"][0]
    if entry["last_stable_offset"] != start:
        raise Divergence(C["fluvio.offsets.values"], f"last_stable_offset {start}", str(entry))


@case("fluvio.update-offsets.status")
def test_update_offsets_known_and_unknown_sessions(target):
    client, topic = new_topic(target, stem="upd")
    start = client.log_end(topic)
    client.produce_ok(topic, 0, batch_of([b"u"]))
    corr, version, answer = _open(client, topic, start, "fluvio.update-offsets.status")
    stream_id = answer["stream_id"]
    unknown = stream_id + 1000
    status = client.update_offsets([(start + 1, stream_id), (0, unknown)])
    got = [(s["session_id"], s["error"].code) for s in status]
    if got != [(stream_id, 0), (unknown, errors.FETCH_SESSION_NOT_FOUND)]:
        raise Divergence(C["fluvio.update-offsets.status"],
                         f"[({stream_id}, 0), ({unknown}, 3002 FetchSessionNotFoud)]", str(got))
