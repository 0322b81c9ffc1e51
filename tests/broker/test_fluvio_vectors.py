"""The upstream byte vectors of notes §10, through the broker's codec and over the wire.

§10.1 vectors come from the fluvio repository's own tests; §10.2 A-F were derived by hand from the code. The
record-level vectors (§10.1 2, 8) are checked against the test encoders only: the SPU, and this broker, never
parse records on produce (§4.2).
"""

from __future__ import annotations

import pytest

from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.records import read_record_set
from wirecheck.broker.fluvio.wire import Reader
from tests.broker.fluvio_support import ThreadBroker, batch, fetch_body, record, request, varint


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " "))


HEADER = h("00 12 00 01 00 00 00 01 00 0a 63 6f 6e 73 75 6d 65 72 2d 31")
BATCH_CRC = h("00 00 00 00 00 00 00 00 | 00 00 00 3c | ff ff ff ff | 02 | 55 4a 89 68 | 00 00 | ff ff ff ff | "
              "00 00 01 6a 29 be 3e 1b | 00 00 01 6a 29 be 3e 1b | ff ff ff ff ff ff ff ff | ff ff | ff ff ff ff | "
              "00 00 00 01 | 14 00 00 00 00 08 74 65 73 74 00")
# crates/fluvio-spu-schema/tests/produce_request.bin, 114 bytes as in the repository (the hex in notes §10.1 5
# lost one ff of the producer fields: it has 113).
PRODUCE_V7 = h("""
01 00 0e 74 72 61 6e 73 61 63 74 69 6f 6e 5f 69 64 ff ff 00 00 03 e8 00 00 00 01 00 05 74 6f 70
69 63 00 00 00 01 00 00 00 01 00 00 00 44 00 00 00 00 00 00 00 00 00 00 00 38 ff ff ff ff 02 0c
48 50 0e 00 00 00 00 00 00 ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff
ff ff ff ff ff ff ff 00 00 00 01 0c 00 00 00 00 00 00""")
PRODUCE_V25_ADHOC = h("01 00 04 74 5f 69 64 ff ff 00 00 03 e8 00 00 00 00 00 00 00 01 01 00 00 00 04 de ad be ef "
                      "00 00 00 00 01 00 0a 61 64 68 6f 63 2d 74 65 73 74")
STREAM_FETCH_V25 = h("00 03 6f 6e 65 00 00 00 03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 01 00 00 00 04 "
                     "de ad be ef 00 00 00 01 00 00 00 00 00 00 00 01 00 01 00 0a 74 65 73 74 2d 61 64 68 6f 63 00")
BATCH_X = h("00 00 00 00 00 00 00 00 00 00 00 3d ff ff ff ff 02 af 7d d9 6c 00 00 00 00 00 00 00 00 01 8b cf e5 68 "
            "00 00 00 01 8b cf e5 68 00 ff ff ff ff ff ff ff ff ff ff ff ff ff ff 00 00 00 01 16 00 00 00 00 0a 68 "
            "65 6c 6c 6f 00")
API_VERSIONS_A = h("00 00 00 27 00 12 00 02 00 00 00 01 00 06 66 6c 75 76 69 6f 00 06 30 2e 31 38 2e 32 00 05 6c "
                   "69 6e 75 78 00 06 78 38 36 5f 36 34")
API_VERSIONS_B = h("00 00 00 2f 00 00 00 01 00 00 00 00 00 05 00 00 00 00 00 19 00 01 00 00 00 19 03 ea 00 19 00 "
                   "19 03 eb 00 00 00 19 03 ed 00 00 00 00 00 05 30 2e 30 2e 30")
PRODUCE_C = h("00 00 00 77 00 00 00 19 00 00 00 02 00 06 66 6c 75 76 69 6f 00 00 01 00 00 05 dc 00 00 00 01 00 01 "
              "74 00 00 00 01 00 00 00 00 00 00 00 49") + BATCH_X + h("00 00 00 00")
PRODUCE_D = h("00 00 00 31 00 00 00 02 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00 00 00") + bytes(24) + bytes(4)
# Notes §10.2 E with its size 0x48 (72) kept: the hex there has 28 zero bytes for partition_index, leader epoch,
# fetch_offset and log_start_offset, which make 4 + 4 + 8 + 8 = 24.
FETCH_E = (h("00 00 00 48 00 01 00 19 00 00 00 03 00 06 66 6c 75 76 69 6f 00 00 00 00 00 00 00 00 00 10 00 0c 00 00 "
             "00 00 01 00 01 74 00 00 00 01") + bytes(24) + h("00 10 00 0c 00 00 00 00"))
# Notes §10.2 F with its size 0x85 (133) kept and one stray zero dropped: the hex there has 21 zero bytes between
# the high watermark and the records length, where next_filter_offset + log_start_offset + aborted make 17 + 3.
FETCH_F = (h("00 00 00 85 00 00 00 03 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00 00 "
             "00 00 00 00 00 00 00 00 01") + bytes(17) + h("00 00 00 49") + BATCH_X)


def rs(data: bytes) -> Reader:
    return Reader(len(data).to_bytes(4, "big") + data)


def test_request_header_vector():
    r = Reader(HEADER)
    header = messages.read_header(r)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (18, 1, 1, "consumer-1")
    assert r.remaining == 0


def test_batch_crc_vector_through_codec_and_encoder():
    [b] = read_record_set(rs(BATCH_CRC))
    assert b.crc == 1430948200 == b.computed_crc()
    assert b.last_offset_delta == -1 and b.record_count_field == 1 and b.record_total == 0
    assert batch([b"test"], last_offset_delta=-1, timestamp=1555478494747) == BATCH_CRC
    with_lod0 = batch([b"test"], last_offset_delta=0, timestamp=1555478494747)
    assert read_record_set(rs(with_lod0))[0].computed_crc() == 843514105


def test_batch_with_schema_id_vector():
    data = batch([b"test"], last_offset_delta=-1, timestamp=1555478494747, schema_id=42)
    [b] = read_record_set(rs(data))
    assert b.attributes == 0x10 and b.records_start == 61
    assert b.crc == 2943551365 == b.computed_crc()


def test_record_and_varint_vectors_match_the_test_encoders():
    assert record(b"dog", offset_delta=1) == h("12 00 00 02 00 06 64 6f 67 00")
    cases = {0: "00", -1: "01", 1: "02", 63: "7e", 8191: "fe 7f", -134217729: "81 80 80 80 01"}
    for value, expected in cases.items():
        assert varint(value) == h(expected), value


def test_produce_v7_fixture_without_smartmodules_trailer():
    r = Reader(PRODUCE_V7)
    request = messages.read_produce(r, 7)
    assert r.remaining == 0
    assert (request.transactional_id, request.isolation, request.timeout_ms) == ("transaction_id", -1, 1000)
    assert request.read_committed and request.smartmodules == []
    [(name, [partition])] = request.topics
    assert (name, partition.index) == ("topic", 1)
    [b] = partition.batches
    assert b.crc == 0x0C48500E == b.computed_crc() and b.last_offset_delta == 0


@pytest.mark.parametrize("version, cut", [(25, 0), (24, 13), (8, 14)])
def test_produce_with_adhoc_smartmodule_at_each_layout(version, cut):
    data = PRODUCE_V25_ADHOC[:len(PRODUCE_V25_ADHOC) - cut]
    r = Reader(data)
    request = messages.read_produce(r, version)
    assert r.remaining == 0
    assert request.transactional_id == "t_id" and request.read_committed and request.topics == []
    [invocation] = request.smartmodules
    assert invocation.predefined is None
    assert invocation.name == ("adhoc-test" if version >= 25 else None)


def test_stream_fetch_v25_vector():
    r = Reader(STREAM_FETCH_V25)
    request = messages.read_stream_fetch(r, 25)
    assert r.remaining == 0
    assert (request.topic, request.partition, request.fetch_offset, request.max_bytes) == ("one", 3, 0, 0)
    assert not request.read_committed and request.consumer_id is None
    [invocation] = request.smartmodules
    assert invocation.predefined is None and invocation.name == "test-adhoc"


def test_hand_derived_conversation_is_byte_exact():
    """§10.2 A-F: ApiVersions, Produce v25 of batch X, Fetch v25, each reply byte for byte."""
    assert FETCH_E == request(1, 25, 3, fetch_body([("t", [(0, 0)])], max_bytes=1048588))
    for frame in (API_VERSIONS_A, API_VERSIONS_B, PRODUCE_C, PRODUCE_D, FETCH_E, FETCH_F):
        assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    # The one deliberate difference from the SPU's answer B: FetchOffsets (03 ea) is listed from 23 (0x17), not 25,
    # because this broker advertises every version it accepts and released clients send 24 (server.py ADVERTISED).
    at = API_VERSIONS_B.index(bytes.fromhex("03ea0019")) + 2
    ours_b = API_VERSIONS_B[:at] + bytes.fromhex("0017") + API_VERSIONS_B[at + 2:]
    with ThreadBroker() as broker, broker.client() as c:
        for sent, expected in [(API_VERSIONS_A, ours_b), (PRODUCE_C, PRODUCE_D), (FETCH_E, FETCH_F)]:
            c.send_raw(sent)
            size = int.from_bytes(c._exactly(4), "big")
            assert size.to_bytes(4, "big") + c._exactly(size) == expected
