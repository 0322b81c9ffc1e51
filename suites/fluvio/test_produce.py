"""Produce (seed §ProduceRequest, §RecordBatch; notes §4)."""

import struct

import pytest

from wirecheck.protocols.fluvio import errors, messages, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.client import C, INVALID_TOPIC, NO_SUCH_PARTITION, Fluvio, batch_of, new_topic, record_set

case = pytest.mark.case


def _stored(client, topic, offset):
    return client.fetch_batches(topic, 0, offset)


@case("fluvio.produce.offsets")
def test_base_offset_is_the_log_end_and_advances_by_delta_plus_one(target):
    client, topic = new_topic(target, stem="offsets")
    start = client.log_end(topic)
    first = client.produce_ok(topic, 0, batch_of([b"a", b"b", b"c"]))
    second = client.produce_ok(topic, 0, record_set(batch_of([b"d"]), batch_of([b"e", b"f"])))
    third = client.produce_ok(topic, 0, batch_of([b"g"]))
    got = (first - start, second - start, third - start)
    if got != (0, 3, 6):
        raise Divergence(C["fluvio.produce.offsets"], "base offsets +0, +3, +6 (3 records, then 1 + 2)", str(got))


@case("fluvio.produce.offsets")
@pytest.mark.parametrize("count_field", [0, 1, 9], ids=["count-0", "count-1", "count-9"])
def test_log_end_follows_last_offset_delta_not_the_record_count(target, count_field):
    client, topic = new_topic(target, stem="delta")
    start = client.log_end(topic)
    batch = records.encode_batch(records.Batch(records=[records.Record(b"r%d" % i, offset_delta=i)
                                                        for i in range(4)], record_count=count_field))
    client.produce_ok(topic, 0, batch)
    after = client.produce_ok(topic, 0, batch_of([b"next"]))
    if after - start != 4:
        raise Divergence(C["fluvio.produce.offsets"], "the next base offset +4 (last_offset_delta 3 + 1)",
                         f"+{after - start} (record count field {count_field})")


@case("fluvio.produce.response-entries")
def test_one_entry_per_request_partition_entry_in_order(target):
    client, topic = new_topic(target, stem="entries")
    start = client.log_end(topic)
    # The Rust client sends one PartitionProduceData per batch, so a partition index repeats (notes §4.1).
    answer = client.produce_request([(topic, [(0, batch_of([b"a"])), (0, batch_of([b"b", b"c"])),
                                              (NO_SUCH_PARTITION, batch_of([b"x"])), (0, batch_of([b"d"]))])],
                                    clause_id="fluvio.produce.response-entries")
    entries = answer["responses"][0]["partitions"]
    unknown = entries[2]["error_code"]
    if unknown.code not in (0, errors.NOT_LEADER_FOR_PARTITION):  # which error it is: fluvio.produce.unknown-partition
        raise Divergence(C["fluvio.produce.unknown-partition"], "NotLeaderForPartition (6)", str(unknown))
    got = [(e["error_code"].code, e["base_offset"] - start if e["error_code"].code == 0 else None) for e in entries]
    if got != [(0, 0), (0, 1), (errors.NOT_LEADER_FOR_PARTITION, None), (0, 3)]:
        raise Divergence(C["fluvio.produce.response-entries"], "[(0, +0), (0, +1), (6, -), (0, +3)]", str(got))


@case("fluvio.produce.response-fields")
@pytest.mark.parametrize("version", [0, 1, 2, 4, 5, 7, 25])
def test_response_fields_follow_the_version(target, version):
    client, topic = new_topic(target, stem="fields")
    low, high = client.advertised()[messages.PRODUCE]
    if not low <= version <= high:
        pytest.skip(f"UNIMPLEMENTED: Produce v{version} not advertised")
    corr = client.send(messages.PRODUCE, version, Fluvio.produce_body([(topic, [(0, batch_of([b"f"]))])]))
    # Strict decoding at this version: a field present or absent at the wrong version leaves bytes over or
    # runs short.
    client.receive(messages.PRODUCE, version, corr, "fluvio.produce.response-fields",
                   decode_clause="fluvio.produce.response-fields")


@case("fluvio.produce.unknown-topic")
def test_unknown_topic_is_not_leader(target):
    client = Fluvio(target)
    answer = client.produce_request([(INVALID_TOPIC, [(0, batch_of([b"a"])), (1, batch_of([b"b"]))])],
                                    clause_id="fluvio.produce.unknown-topic")
    codes = [p["error_code"].code for p in answer["responses"][0]["partitions"]]
    if codes != [errors.NOT_LEADER_FOR_PARTITION] * 2:
        raise Divergence(C["fluvio.produce.unknown-topic"], "NotLeaderForPartition (6) for each partition",
                         str([str(p["error_code"]) for p in answer["responses"][0]["partitions"]]))


@case("fluvio.produce.unknown-partition")
@pytest.mark.parametrize("partition", [1, NO_SUCH_PARTITION, 2**31, 2**32 - 1])
def test_unknown_partition_is_not_leader(target, partition):
    client, topic = new_topic(target, stem="nopart", fewer_than=partition + 1)  # a topic without that partition
    start = client.log_end(topic)
    answer = client.produce_request([(topic, [(partition, batch_of([b"x"])), (0, batch_of([b"ok"]))])],
                                    clause_id="fluvio.produce.unknown-partition")
    bad, good = answer["responses"][0]["partitions"]
    if bad["error_code"].code != errors.NOT_LEADER_FOR_PARTITION:
        raise Divergence(C["fluvio.produce.unknown-partition"], "NotLeaderForPartition (6)", str(bad["error_code"]))
    if good["error_code"].code != 0 or good["base_offset"] != start:
        raise Divergence(C["fluvio.produce.unknown-partition"], f"partition 0 unaffected: error 0, base {start}",
                         f"{good['error_code']}, base {good['base_offset']}")


@case("fluvio.produce.empty")
@pytest.mark.parametrize("kind", ["no-batches", "negative-delta", "two-negative"])
def test_empty_record_set_succeeds_and_writes_nothing(target, kind):
    client, topic = new_topic(target, stem="empty")
    client.produce_ok(topic, 0, batch_of([b"seed"]))
    start = client.log_end(topic)
    negative = records.encode_batch(records.Batch(records=[], last_offset_delta=-1))
    data = {"no-batches": b"", "negative-delta": negative, "two-negative": negative + negative}[kind]
    error, base = client.produce(topic, 0, data, clause_id="fluvio.produce.empty")
    if error.code != 0 or base != 0:
        raise Divergence(C["fluvio.produce.empty"], "error 0 and base_offset 0", f"{error}, base_offset {base}")
    if client.log_end(topic) != start:
        raise Divergence(C["fluvio.produce.empty"], f"log end still {start}", str(client.log_end(topic)))


@case("fluvio.produce.compression-invalid")
@pytest.mark.parametrize("bits", [5, 6, 7])
def test_unknown_compression_bits_are_9000(target, bits):
    client, topic = new_topic(target, stem="badcodec")
    start = client.log_end(topic)
    batch = records.encode_batch(records.Batch(records=[records.Record(b"x")], extra_attributes=bits))
    error, _ = client.produce(topic, 0, batch, clause_id="fluvio.produce.compression-invalid")
    if error.code != errors.COMPRESSION_ERROR:
        raise Divergence(C["fluvio.produce.compression-invalid"], "CompressionError (9000)", str(error))
    if client.log_end(topic) != start:
        raise Divergence(C["fluvio.produce.compression-invalid"], "nothing written", f"log end {client.log_end(topic)}")


@case("fluvio.produce.compression")
@pytest.mark.parametrize("codec", [records.GZIP, records.SNAPPY, records.LZ4, records.ZSTD],
                         ids=["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_round_trip(target, codec):
    client, topic = new_topic(target, stem="codec")
    start = client.log_end(topic)
    batch = batch_of([b"compressed %d" % i * 5 for i in range(6)], compression=codec)
    base = client.produce_ok(topic, 0, batch, clause_id="fluvio.produce.compression")
    got = _stored(client, topic, start)
    if got != [records.as_stored(batch, base)]:
        raise Divergence(C["fluvio.produce.compression"], "the batch as produced (base offset assigned)",
                         f"{[b[:80].hex() for b in got]}")
    decoded = records.decode_batch(got[0])[0]
    if [r.value for r in decoded.records] != [b"compressed %d" % i * 5 for i in range(6)]:
        raise Divergence(C["fluvio.produce.compression"], "the six values", str(decoded.records)[:300])


@case("fluvio.produce.too-large", hostile=True)
def test_batch_over_the_storage_limit_is_10(target):
    client, topic = new_topic(target, stem="large")
    client.session.deadline = max(target.deadline, 10.0)
    start = client.log_end(topic)
    value = b"\0" * (records.STORAGE_MAX_REQUEST_SIZE - 57)  # the record framing takes the batch over the limit
    error, _ = client.produce(topic, 0, batch_of([value]), clause_id="fluvio.produce.too-large")
    if error.code != errors.MESSAGE_TOO_LARGE:
        raise Divergence(C["fluvio.produce.too-large"], "MessageTooLarge (10)", str(error))
    if client.log_end(topic) != start:
        raise Divergence(C["fluvio.produce.too-large"], "nothing written", f"log end {client.log_end(topic)}")


@case("fluvio.produce.isolation")
@pytest.mark.parametrize("isolation", [messages.READ_UNCOMMITTED, messages.READ_COMMITTED],
                         ids=["ReadUncommitted", "ReadCommitted"])
def test_both_isolations_succeed(target, isolation):
    client, topic = new_topic(target, stem="iso")
    client.session.deadline = min(target.deadline, 1.0)
    # timeout 30 s: a target that waits for it on a single replica answers after our deadline
    client.produce_ok(topic, 0, batch_of([b"i"]), clause_id="fluvio.produce.isolation", isolation=isolation,
                      timeout_ms=30_000)


@case("fluvio.produce.isolation-other")
@pytest.mark.parametrize("isolation", [0, 2, -2, 2**15 - 1, -(2**15)])
def test_other_isolation_values_are_answered(target, isolation):
    client, topic = new_topic(target, stem="isox")
    client.produce_ok(topic, 0, batch_of([b"i"]), clause_id="fluvio.produce.isolation-other", isolation=isolation)


@case("fluvio.produce.negative-timeout", hostile=True)
@pytest.mark.parametrize("timeout", [-1, -(2**31)])
def test_negative_timeout_closes(target, timeout):
    client, topic = new_topic(target, stem="timeout")
    body = Fluvio.produce_body([(topic, [(0, batch_of([b"t"]))])], timeout_ms=timeout)
    client.send(messages.PRODUCE, client.version(messages.PRODUCE), body)
    client.closes("fluvio.produce.negative-timeout")


@case("fluvio.produce.smartmodules-trailer")
@pytest.mark.parametrize("version", [7, 25])
def test_request_without_smartmodules_trailer_is_served(target, version):
    client, topic = new_topic(target, stem="trailer")
    client.log_end(topic)
    corr = client.next_correlation_id()
    batch = batch_of([b"no trailer"])
    frame = messages.encode_request(messages.PRODUCE, version, corr, Fluvio.produce_body([(topic, [(0, batch)])]))
    body = frame[4:-4]  # drop the empty smartmodules count, as in the upstream v7 fixture
    client.session.send(struct.pack(">i", len(body)) + body)
    answer = client.receive(messages.PRODUCE, version, corr, "fluvio.produce.smartmodules-trailer")
    entry = answer["responses"][0]["partitions"][0]
    if entry["error_code"].code != 0:
        raise Divergence(C["fluvio.produce.smartmodules-trailer"], "error 0", str(entry))
    client.expect_base(topic, 0, entry["base_offset"], batch)  # which offset is fluvio.produce.offsets'


@case("fluvio.produce.bad-crc")
@pytest.mark.parametrize("flip", ["crc", "payload"])
def test_bad_crc_is_never_served_back(target, flip):
    client, topic = new_topic(target, stem="crc")
    start = client.log_end(topic)
    good = batch_of([b"checksummed"])
    if flip == "crc":
        bad = good[:records.CRC_OFFSET] + bytes([good[records.CRC_OFFSET] ^ 0xFF]) + good[records.CRC_OFFSET + 1:]
    else:
        bad = good[:-2] + bytes([good[-2] ^ 0x01]) + good[-1:]
    error, base = client.produce(topic, 0, bad, clause_id="fluvio.produce.bad-crc")
    if error.code != 0:
        if client.log_end(topic) != start:
            raise Divergence(C["fluvio.produce.bad-crc"], "nothing written by the rejected batch",
                             f"log end {client.log_end(topic)}")
        return
    stored = _stored(client, topic, start)
    if stored != [records.as_stored(bad, base)]:
        raise Divergence(C["fluvio.produce.bad-crc"], "the batch stored with its CRC recomputed",
                         f"{[b.hex() for b in stored]}")
    raise Divergence(C["fluvio.produce.bad-crc-rejected"], "a non-zero error code (decision D5)",
                     "accepted and stored with a recomputed CRC (the SPU's path)")


@case("fluvio.produce.batch-len-short", hostile=True)
@pytest.mark.parametrize("batch_len", [0, 44, -1], ids=["0", "44", "-1"])
def test_batch_len_below_the_header_closes(target, batch_len):
    client, topic = new_topic(target, stem="blen")
    batch = bytearray(batch_of([b"short"]))
    struct.pack_into(">i", batch, records.LENGTH_OFFSET, batch_len)
    client.send(messages.PRODUCE, client.version(messages.PRODUCE),
                Fluvio.produce_body([(topic, [(0, bytes(batch))])]))
    reply = client.session.recv()
    if reply.is_frame:
        raise Divergence(C["fluvio.produce.batch-len-short"], "the connection closed (decision D6)",
                         f"an answer ({len(reply.frame)} bytes)")
    if not reply.ended:
        raise Divergence(C["fluvio.robustness.no-hang"], "an answer or a close", str(reply))


@case("fluvio.produce.recordset-trailing", hostile=True)
@pytest.mark.parametrize("garbage", [b"\x00", b"\xff" * 11, b"\x00" * 56], ids=["1", "11", "56"])
def test_record_set_trailing_garbage_closes(target, garbage):
    client, topic = new_topic(target, stem="trail")
    client.send(messages.PRODUCE, client.version(messages.PRODUCE),
                Fluvio.produce_body([(topic, [(0, batch_of([b"x"]) + garbage)])]))
    reply = client.session.recv()
    if reply.is_frame:
        raise Divergence(C["fluvio.produce.recordset-trailing"], "the connection closed (decision D7)",
                         f"an answer ({len(reply.frame)} bytes)")
    if not reply.ended:
        raise Divergence(C["fluvio.robustness.no-hang"], "an answer or a close", str(reply))


@case("fluvio.produce.recordset-overrun", hostile=True)
@pytest.mark.parametrize("extra", [1, 1000, 2**31 - 1])
def test_record_set_longer_than_the_request_closes(target, extra):
    client, topic = new_topic(target, stem="overrun")
    batch = batch_of([b"x"])
    frame = bytearray(messages.encode_request(messages.PRODUCE, client.version(messages.PRODUCE), 5,
                                              Fluvio.produce_body([(topic, [(0, batch)])])))
    at = frame.index(batch) - 4
    struct.pack_into(">i", frame, at, min(len(batch) + extra + 4, 2**31 - 1))
    client.session.send(bytes(frame))
    client.closes("fluvio.produce.recordset-overrun")


@case("fluvio.produce.negative-delta-mixed")
def test_negative_delta_among_real_batches(target):
    # the SPU short-circuits the partition for good after this (73, A14): never on a shared topic
    client, topic = new_topic(target, stem="mixed", own=True)
    negative = records.encode_batch(records.Batch(records=[], last_offset_delta=-1))
    error, _ = client.produce(topic, 0, batch_of([b"a"]) + negative + batch_of([b"b"]),
                              clause_id="fluvio.produce.negative-delta-mixed")
    if error.code != errors.STORAGE_ERROR:
        raise Divergence(C["fluvio.produce.negative-delta-mixed"], "StorageError (56) (decision D8)", str(error))
    later, _ = client.produce(topic, 0, batch_of([b"later"]), clause_id="fluvio.produce.negative-delta-mixed")
    if later.code != 0:
        raise Divergence(C["fluvio.produce.negative-delta-mixed"], "later writes succeed (no short-circuit)",
                         str(later))


@case("fluvio.produce.schema-id")
@pytest.mark.parametrize("schema_id", [0, 42, 2**32 - 1])
def test_schema_id_round_trips(target, schema_id):
    client, topic = new_topic(target, stem="schema")
    start = client.log_end(topic)
    batch = batch_of([b"with schema"], schema_id=schema_id)
    base = client.produce_ok(topic, 0, batch, clause_id="fluvio.produce.schema-id")
    stored = _stored(client, topic, start)
    if stored != [records.as_stored(batch, base)]:
        raise Divergence(C["fluvio.produce.schema-id"], "the batch with its schema id", str([b.hex() for b in stored]))
    if records.decode_batch(stored[0])[0].schema_id != schema_id:
        raise Divergence(C["fluvio.produce.schema-id"], f"schema id {schema_id}", stored[0].hex())


@case("fluvio.produce.records-opaque")
@pytest.mark.parametrize("kind", ["varint-beyond-i32", "key-some", "count-lies", "garbage-records"])
def test_records_region_is_stored_byte_for_byte(target, kind):
    client, topic = new_topic(target, stem="opaque")
    start = client.log_end(topic)
    if kind == "varint-beyond-i32":
        batch = records.encode_batch(records.Batch(records=[records.Record(b"late", timestamp_delta=2**40),
                                                            records.Record(b"x", offset_delta=1)]))
    elif kind == "key-some":
        batch = batch_of([b"v1", b"v2"], keys=[b"k", b""])
    elif kind == "count-lies":
        batch = records.encode_batch(records.Batch(records=[records.Record(b"one")], record_count=7))
    else:
        batch = records.encode_batch(records.Batch(raw_records=b"\x00\x00\x00\x01\xfe\xfe\xfe", last_offset_delta=0))
    base = client.produce_ok(topic, 0, batch, clause_id="fluvio.produce.records-opaque")
    stored = _stored(client, topic, start)
    if stored != [records.as_stored(batch, base)]:
        raise Divergence(C["fluvio.produce.records-opaque"], "the records region as produced",
                         str([b.hex() for b in stored])[:600])


@case("fluvio.robustness.survives", hostile=True)
@pytest.mark.parametrize("count", [2**31 - 1, -1, 1_000_000])
def test_hostile_record_count_costs_one_connection_at_most(target, count):
    client, topic = new_topic(target, stem="count")
    batch = records.encode_batch(records.Batch(records=[records.Record(b"x")], record_count=count))
    client.send(messages.PRODUCE, client.version(messages.PRODUCE), Fluvio.produce_body([(topic, [(0, batch)])]))
    reply = client.session.recv()
    if reply.outcome.value == "silent":
        raise Divergence(C["fluvio.robustness.no-hang"], "an answer or a close", str(reply))
