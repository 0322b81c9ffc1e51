"""Consumer offsets: UpdateConsumerOffset (1006), DeleteConsumerOffset (1007), FetchConsumerOffsets (1008)
(notes §5.6). The SPU decodes them at 23..25 without listing them in ApiVersions, so a target that closes the
connection on them does not implement them (UNIMPLEMENTED). Offsets are SPU-wide: every case uses consumer ids
of its own and looks only at those."""

import pytest

from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.client import C, Fluvio, batch_of, new_topic

case = pytest.mark.case


def _stream_with_consumer(target, consumer_id: str, clause_id: str) -> tuple[Fluvio, str, int, int]:
    """(reader, topic, stream id, the topic's log end): a StreamFetch opened with ``consumer_id`` that has
    delivered its first answer."""
    client, topic = new_topic(target, stem="consumer")
    start = client.log_end(topic)
    client.produce_ok(topic, 0, batch_of([b"for the consumer"]))
    reader = Fluvio(target)
    with target.precondition(f"a stream of {topic} opened with consumer id {consumer_id}"):
        corr, version = reader.stream_fetch(topic, 0, start, consumer_id=consumer_id)
        answer = reader.stream_answer(corr, version, "fluvio.stream.records")
        if answer["stream_id"] < 1 or answer["partition"]["error_code"].code != 0:
            raise Divergence(C["fluvio.stream.records"], "an open stream (id >= 1, error 0)",
                             f"stream_id {answer['stream_id']}, {answer['partition']['error_code']}")
    return reader, topic, answer["stream_id"], start + 1


def _ours(consumers: list[dict], *consumer_ids: str) -> list[tuple[str, str, int, int]]:
    return sorted((c["consumer_id"], c["replica_id"]["topic"], c["replica_id"]["partition"], c["offset"])
                  for c in consumers if c["consumer_id"] in consumer_ids)


@case("fluvio.consumer-offsets.stored")
@pytest.mark.parametrize("version", [23, 24, 25])  # the fluvio 0.21 client sends 24
def test_update_consumer_offset_is_listed(target, version):
    consumer = target.unique("reader")
    reader, topic, stream_id, end = _stream_with_consumer(target, consumer, "fluvio.consumer-offsets.stored")
    answer = reader.update_consumer_offset(end, stream_id, "fluvio.consumer-offsets.stored", version)
    if answer["error_code"].code != 0 or answer["offset"] != end:
        raise Divergence(C["fluvio.consumer-offsets.stored"], f"offset {end} with error 0",
                         f"offset {answer['offset']}, {answer['error_code']}")
    listed = _ours(Fluvio(target).consumer_offsets("fluvio.consumer-offsets.stored", version=version), consumer)
    if listed != [(consumer, topic, 0, end)]:
        raise Divergence(C["fluvio.consumer-offsets.stored"], f"{consumer} at offset {end} of {topic}/0",
                         str(listed))


@case("fluvio.consumer-offsets.unknown-session")
def test_update_consumer_offset_of_no_stream_is_an_error(target):
    client = Fluvio(target)
    answer = client.update_consumer_offset(5, 0x7FFF_FFF0, "fluvio.consumer-offsets.unknown-session")
    if answer["error_code"].code == 0:
        raise Divergence(C["fluvio.consumer-offsets.unknown-session"], "a non-zero error code (no such stream)",
                         str(answer["error_code"]))


@case("fluvio.consumer-offsets.delete")
@pytest.mark.parametrize("version", [23, 24, 25])
def test_deleted_consumer_offset_is_no_longer_listed(target, version):
    consumer = target.unique("gone")
    reader, topic, stream_id, end = _stream_with_consumer(target, consumer, "fluvio.consumer-offsets.delete")
    with target.precondition(f"an offset stored for {consumer}"):
        reader.update_consumer_offset(end, stream_id, "fluvio.consumer-offsets.stored")
        if not _ours(reader.consumer_offsets("fluvio.consumer-offsets.stored"), consumer):
            raise Divergence(C["fluvio.consumer-offsets.stored"], f"{consumer} listed", "not listed")
    answer = reader.delete_consumer_offset(topic, 0, consumer, "fluvio.consumer-offsets.delete", version)
    if answer["error_code"].code != 0:
        raise Divergence(C["fluvio.consumer-offsets.delete"], "error 0", str(answer["error_code"]))
    left = _ours(reader.consumer_offsets("fluvio.consumer-offsets.delete"), consumer)
    if left:
        raise Divergence(C["fluvio.consumer-offsets.delete"], f"{consumer} no longer listed", str(left))


@case("fluvio.consumer-offsets.filter")
@pytest.mark.parametrize("by", ["consumer", "replica"])
def test_fetch_consumer_offsets_filter(target, by):
    first, second = target.unique("filtera"), target.unique("filterb")
    reader, topic, stream_id, end = _stream_with_consumer(target, first, "fluvio.consumer-offsets.filter")
    other, other_topic, other_stream, other_end = _stream_with_consumer(target, second,
                                                                        "fluvio.consumer-offsets.filter")
    with target.precondition("offsets stored for two consumers"):
        reader.update_consumer_offset(end, stream_id, "fluvio.consumer-offsets.stored")
        other.update_consumer_offset(other_end, other_stream, "fluvio.consumer-offsets.stored")
        stored = _ours(reader.consumer_offsets("fluvio.consumer-offsets.stored"), first, second)
        if len(stored) < 2:  # what the filter is to choose from must be there first
            raise Divergence(C["fluvio.consumer-offsets.stored"], "both consumers' offsets listed unfiltered",
                             str(stored))
    if by == "consumer":
        listed = reader.consumer_offsets("fluvio.consumer-offsets.filter", consumer_id=first, filtered=True)
        wanted = [(first, topic, 0, end)]
        got = _ours(listed, first, second)
    else:
        listed = reader.consumer_offsets("fluvio.consumer-offsets.filter", replica=(other_topic, 0), filtered=True)
        wanted = sorted({(second, other_topic, 0, other_end)} | ({(first, topic, 0, end)} if topic == other_topic
                                                                   else set()))
        got = _ours(listed, first, second)
    strangers = [c for c in listed if by == "consumer" and c["consumer_id"] != first
                 or by == "replica" and (c["replica_id"]["topic"], c["replica_id"]["partition"]) != (other_topic, 0)]
    if got != wanted or strangers:
        raise Divergence(C["fluvio.consumer-offsets.filter"], f"only {wanted}",
                         f"{got}; {len(strangers)} entries outside the filter")
