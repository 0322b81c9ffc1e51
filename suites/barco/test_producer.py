"""The binary producer (:9254): handshake, header checks, opcodes, PRODUCE bodies (notes §2, decisions D1-D6)."""

import pytest

from wirecheck.protocols.barco import wire
from wirecheck.suites.barco.client import Consumer, Producer, diverge, next_sid, records_of, topic_for

case = pytest.mark.case


@case("barco.producer.ready")
@pytest.mark.parametrize("sid", [0, 1, 0x7FFF, 0xFFFF])
def test_startup_is_answered_ready(target, sid):
    Producer(target, started=False).startup(sid)


@case("barco.producer.startup-first", hostile=True)
@pytest.mark.parametrize("op", [wire.PRODUCE, wire.HEARTBEAT, 7])
def test_first_frame_must_be_startup(target, op):
    client = Producer(target, started=False)
    body = wire.produce_body(target.unique("t"), [b"x"]) if op == wire.PRODUCE else b""
    client.send_frame(wire.frame(op, body, 3))
    client.closes("barco.producer.startup-first", allowed_codes=(0,))


@case("barco.producer.heartbeat")
@pytest.mark.parametrize("sid", [1, 5, 0xFFFF])
def test_heartbeat_is_answered_ready(target, sid):
    client = Producer(target)
    client.send_frame(wire.frame(wire.HEARTBEAT, b"", sid))
    client.expect(sid, wire.READY, "barco.producer.heartbeat")


@case("barco.framing.stream-id-echo")
@pytest.mark.parametrize("sid", [2, 255, 256, 0x1234, 0xFFFE])
def test_produce_response_echoes_the_stream_id(target, sid):
    client = Producer(target)
    client.send_frame(wire.produce(topic_for(target), [b"m"], stream_id=sid))
    client.expect(sid, wire.PRODUCE_RESPONSE, "barco.producer.produce-ack")


@case("barco.producer.produce-ack")
@pytest.mark.parametrize("count,size", [(1, 1), (3, 10), (50, 100), (2, 200_000)])
def test_valid_produce_is_acknowledged(target, count, size):
    Producer(target).produce(topic_for(target), [bytes([i % 256]) * size for i in range(count)])


@case("barco.framing.header-crc", hostile=True)
@pytest.mark.parametrize("byte", [9, 10, 11, 12])
def test_crc_mismatch_closes(target, byte):
    client = Producer(target)
    frame = bytearray(wire.produce(target.unique("t"), [b"m"], stream_id=4))
    frame[byte] ^= 0x01
    client.send_frame(bytes(frame))
    client.closes("barco.framing.header-crc", allowed_codes=(0,))


@case("barco.framing.header-crc", hostile=True)
def test_crc_over_eight_bytes_is_refused(target):
    """A CRC over bytes 0..7 (one byte short): the target must not accept it."""
    import struct
    import zlib
    client = Producer(target)
    frame = wire.produce(target.unique("t"), [b"m"], stream_id=4)
    client.send_frame(frame[:9] + struct.pack(">I", zlib.crc32(frame[:8])) + frame[13:])
    client.closes("barco.framing.header-crc", allowed_codes=(0,))


@case("barco.framing.version", hostile=True)
@pytest.mark.parametrize("version", [0, 2, 255])
def test_other_versions_are_refused(target, version):
    client = Producer(target)
    client.send_frame(wire.frame(wire.HEARTBEAT, b"", 6, version=version))
    client.closes("barco.framing.version", allowed_codes=(0,))


@case("barco.producer.unknown-opcode")
@pytest.mark.parametrize("op", [0, wire.READY, wire.ERROR, wire.PRODUCE_RESPONSE, 7, 42, 255])
def test_unknown_opcode_gets_error_and_stays_open(target, op):
    client = Producer(target)
    sid = next_sid()
    client.refused(wire.frame(op, b"", sid), sid, "barco.producer.unknown-opcode")


@case("barco.producer.second-startup")
def test_second_startup_gets_error(target):
    client = Producer(target)
    client.refused(wire.frame(wire.STARTUP, b"", 9), 9, "barco.producer.second-startup")


@case("barco.framing.body-consumed")
@pytest.mark.parametrize("op,size", [(wire.HEARTBEAT, 1), (wire.HEARTBEAT, 13), (42, 26)])
def test_bodies_of_other_frames_are_skipped(target, op, size):
    client = Producer(target)
    sid = next_sid()
    # the body is a whole valid-looking header: a target that does not skip it answers it as a frame
    body = (wire.frame(wire.HEARTBEAT, b"", 0x7777) * 2)[:size]
    beat = next_sid()
    client.send_frame(wire.frame(op, body, sid) + wire.frame(wire.HEARTBEAT, b"", beat))
    # Skipped whole, the body draws no answer of its own: the frame's answer (if any: which one is the heartbeat's
    # and unknown-opcode's clauses) and the heartbeat's come back, nothing for stream 0x7777.
    for _ in range(3):
        head = wire.parse_header(client.frame("barco.framing.body-consumed"))
        if head.stream_id not in (sid, beat):
            raise diverge("barco.framing.body-consumed", f"answers to streams {sid} and {beat} only",
                          f"an answer to stream {head.stream_id}: the body was read as a frame")
        if head.stream_id == beat:
            return
    raise diverge("barco.framing.body-consumed", f"the answer to the heartbeat on stream {beat}",
                  f"three answers to stream {sid}")


@case("barco.framing.oversize", hostile=True)
@pytest.mark.parametrize("length", [wire.MAX_BODY + 1, 1 << 25, 0xFFFFFFFF])
def test_oversize_body_length_is_refused(target, length):
    # D4: the reference broker closes at once; the notes' §11 reading (ERROR(0), then the announced body read and
    # discarded, the connection kept: the frame boundary is still known) is permitted as well. The 1 MiB message
    # limit is upstream's default and an operator may raise it: up to 32 MiB (upstream's buffer pool) a server may
    # also wait for the body. The liveness probe checks that it survived.
    client = Producer(target)
    client.send_frame(wire.header(wire.PRODUCE, length, 8))
    reply = client.session.recv(min(target.deadline, 0.5) if length <= 1 << 25 else None)
    if reply.ended or (length <= 1 << 25 and reply.outcome.value == "silent"):
        return
    if not reply.is_frame or 0 not in (client.error_codes_of(reply.frame) or set()):
        waits = ", or waiting for the body" if length <= 1 << 25 else ""
        raise diverge("barco.framing.oversize", f"ERROR(0) (then a close or the body discarded) or a close{waits}",
                      client.show(reply.frame) if reply.is_frame else str(reply))


@case("barco.producer.message-lengths")
@pytest.mark.parametrize("tail", [b"\x00", b"\x00\x00\x00", b"\x00\x00\x00\x09abc"])
def test_message_lengths_must_add_up(target, tail):
    client = Producer(target)
    topic = target.unique("t")
    sid = next_sid()
    client.refused(wire.frame(wire.PRODUCE, wire.produce_body(topic, [b"abc"]) + tail, sid), sid,
                   "barco.producer.message-lengths")


@case("barco.producer.no-messages")
def test_produce_without_messages_is_refused(target):
    client = Producer(target)
    sid = next_sid()
    client.refused(wire.frame(wire.PRODUCE, wire.produce_body(target.unique("t"), []), sid), sid,
                   "barco.producer.no-messages")


@case("barco.producer.truncated-body")
@pytest.mark.parametrize("body", [b"", b"\x05ab", b"\x00\x09topic", b"\x00"])
def test_truncated_key_or_topic_is_refused(target, body):
    client = Producer(target)
    sid = next_sid()
    client.refused(wire.frame(wire.PRODUCE, body, sid), sid, "barco.producer.truncated-body")


@case("barco.producer.truncated-body")
def test_truncated_timestamp_is_refused(target):
    client = Producer(target)
    sid = next_sid()
    client.refused(wire.frame(wire.PRODUCE, b"\x00\x01\x02", sid, flags=wire.FLAG_TIMESTAMP), sid,
                   "barco.producer.truncated-body")


@case("barco.producer.topic-valid")
@pytest.mark.parametrize("topic", [b"", b"..", b"../x", b"a/b", b"a\\b", b"n\x00l", b"/" + b"x" * 254],
                         ids=["empty", "dotdot", "traversal", "slash", "backslash", "nul", "long-slash"])
def test_invalid_topics_are_refused(target, topic):
    # long-slash: a server that quotes the topic in its ERROR message may go past the Go client's 512 bytes
    # (barco.producer.error-size, a SHOULD: the protocol sets no limit)
    client = Producer(target)
    sid = next_sid()
    client.refused(wire.frame(wire.PRODUCE, wire.produce_body(topic, [b"m"]), sid), sid, "barco.producer.topic-valid")


@case("barco.producer.topic-valid")
def test_a_255_byte_topic_is_accepted(target):
    Producer(target).produce((target.unique("t") + "x" * 255)[:255], [b"m"], clause="barco.producer.topic-valid")


@case("barco.framing.pipelining")
def test_pipelined_frames_are_each_answered(target):
    client = Producer(target)
    topic = target.unique("t")
    sids = list(range(100, 132))
    client.send_frame(b"".join(wire.produce(topic, [b"%d" % s], stream_id=s) if s % 2 else
                               wire.frame(wire.HEARTBEAT, b"", s) for s in sids))
    seen = {}
    for _ in sids:
        head = wire.parse_header(client.frame("barco.framing.pipelining"))
        seen[head.stream_id] = head.opcode
    if set(seen) != set(sids):
        raise diverge("barco.framing.pipelining", f"one answer to each of the stream ids {sids[0]}-{sids[-1]}",
                      f"answers to stream ids {sorted(seen)}")
    for sid, opcode in seen.items():  # which answer each frame gets is the clause of that frame
        wanted, clause = (wire.PRODUCE_RESPONSE, "barco.producer.produce-ack") if sid % 2 else \
            (wire.READY, "barco.producer.heartbeat")
        if opcode != wanted:
            raise diverge(clause, f"{wire.OPCODES[wanted]} to stream {sid}", f"{wire.OPCODES.get(opcode, opcode)}")


def _round_trip(target, messages, clause, key=b"k", timestamp=None):
    topic = target.unique("t")
    Producer(target).produce(topic, messages, key, timestamp, clause=clause)
    consumer = Consumer(target, [topic])
    consumer.register()
    got = consumer.drain(len(messages), "barco.consumer.records")
    return [r for item, _ in got for r in records_of(item)]


@case("barco.producer.empty-message")
def test_empty_message_is_stored(target):
    records = _round_trip(target, [b"", b"x", b""], "barco.producer.empty-message")
    if [body for _, body in records] != [b"", b"x", b""]:
        raise diverge("barco.producer.empty-message", "records b'', b'x', b''", [b for _, b in records])


@case("barco.producer.timestamp")
@pytest.mark.parametrize("timestamp", [0, 1_700_000_000_000_000, -5, 2**63 - 1])
def test_timestamp_flag_sets_record_timestamps(target, timestamp):
    records = _round_trip(target, [b"a", b"b"], "barco.producer.timestamp", timestamp=timestamp)
    if [ts for ts, _ in records] != [timestamp, timestamp]:
        raise diverge("barco.producer.timestamp", f"timestamps {[timestamp] * 2}", [ts for ts, _ in records])


@case("barco.producer.partition-key")
def test_one_key_one_reader_in_order(target):
    topic = target.unique("t")
    client = Producer(target)
    for i in range(6):
        client.produce(topic, [b"%d" % i], key=b"same-key", clause="barco.producer.partition-key")
    consumer = Consumer(target, [topic])
    consumer.register()
    bodies = [b for _, bs in consumer.drain(6, "barco.producer.partition-key", one_key=True) for b in bs]
    if bodies != [b"%d" % i for i in range(6)]:
        raise diverge("barco.producer.partition-key", "records 0..5 in order, from one reader", bodies)
