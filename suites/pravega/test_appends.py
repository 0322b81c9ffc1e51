"""The append path: SetupAppend, block shapes, acks, event numbers, sealed segments, conditional appends
(notes §5, §7.2, §7.3)."""

import struct
import uuid

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.suites.pravega.client import MIN, Pravega, configured_segments, new_segment, segment_name

case = pytest.mark.case
EV = cmd.event(b"hello")  # 13 bytes
#: a plain event the block-shape cases append first: new_segment checks that it is stored verbatim, so a segment
#: that stores events wrongly blocks those cases instead of failing them
BASE = [b"base"]
B = len(cmd.event(b"base"))  # 12 bytes


def block(writer: uuid.UUID, data: bytes) -> bytes:
    return cmd.encode("AppendBlock", writer_id=writer, data=data)


def block_end(writer, size, data, count, last, rid) -> bytes:
    return cmd.encode("AppendBlockEnd", writer_id=writer, size_of_whole_events=size, data=data, num_events=count,
                      last_event_number=last, request_id=rid)


def writer_on(target, stem="w", data=(), shared=False):
    """(client, segment, a new writer set up on it: its lastEventNumber is Long.MIN_VALUE). ``shared``: the case's
    checks hold whatever else the segment holds, so a configured segment is used when the user named one."""
    named = configured_segments(target) if shared and not data else []
    client, name = (Pravega(target), named[0]) if named else new_segment(target, stem, data)
    with target.precondition(f"a new writer set up on {name}"):
        writer = client.new_writer(name)
    return client, name, writer


# -- setup --------------------------------------------------------------------------------------------------------


@case("pravega.append.setup")
def test_setup_of_a_new_writer_returns_min(target):
    named = configured_segments(target)
    client, name = (Pravega(target), named[0]) if named else new_segment(target)
    client.new_writer(name)  # lastEventNumber Long.MIN_VALUE, checked there


@case("pravega.append.setup-no-segment")
def test_setup_on_missing_segment(target):
    client = Pravega(target)
    name = segment_name(target)
    client.call("SetupAppend", "pravega.append.setup-no-segment", ("NoSuchSegment",), writer_id=uuid.uuid4(),
                segment=name)
    client.stays_open("pravega.append.setup-no-segment")


@case("pravega.append.without-setup", hostile=True)
@pytest.mark.parametrize("shape", ["block", "block-end", "conditional", "conditional-block-end"])
def test_append_without_setup_closes(target, shape):
    client, name = new_segment(target)
    writer = uuid.uuid4()
    if shape == "block":
        client.send_frame(block(writer, EV))
    elif shape == "block-end":
        client.send_frame(block_end(writer, 13, EV, 1, 1, 1))
    elif shape == "conditional":
        client.send("ConditionalAppend", writer_id=writer, event_number=1, expected_offset=0, event=b"x")
    else:
        client.send("ConditionalBlockEnd", writer_id=writer, event_number=1, expected_offset=0, data=EV)
    client.closes("pravega.append.without-setup")


@case("pravega.append.without-setup", hostile=True)
def test_writer_set_up_on_another_connection_closes(target):
    client, name, writer = writer_on(target)
    other = Pravega(target)
    other.send_events(writer, [b"x"], 1)
    other.closes("pravega.append.without-setup")


# -- acks -----------------------------------------------------------------------------------------------------------


@case("pravega.append.ack")
@pytest.mark.parametrize("events", [1, 2, 5])
def test_standalone_block_end_is_acked(target, events):
    client, name, writer = writer_on(target, shared=True)
    client.append(writer, [b"e%d" % i for i in range(events)], events)


@case("pravega.append.ack-previous")
def test_first_ack_previous_is_the_setup_value(target):
    client, name, writer = writer_on(target, shared=True)
    client.append(writer, [b"a"], 1, "pravega.append.ack-previous", previous=MIN)


@case("pravega.append.ack-previous")
@pytest.mark.parametrize("numbers", [(1, 2, 3), (1, 5, 6), (10, 20, 1000)])
def test_acks_chain_previous_event_numbers(target, numbers):
    client, name, writer = writer_on(target, shared=True)
    previous = MIN
    for n in numbers:
        client.append(writer, [b"x"], n, "pravega.append.ack-previous", previous=previous)
        previous = n


@case("pravega.append.write-offset")
@pytest.mark.parametrize("sizes", [(0,), (5,), (1, 100, 7)])
def test_ack_carries_the_segment_length(target, sizes):
    client, name, writer = writer_on(target)
    length = 0
    for i, size in enumerate(sizes, 1):
        length += 8 + size
        client.append(writer, [bytes(size)], i, "pravega.append.write-offset", offset=length)


@case("pravega.append.stored-verbatim")
def test_appended_events_read_back(target):
    client, name, writer = writer_on(target)
    events = [b"one", b"", b"three" * 50]
    client.append(writer, events, 3)
    data = client.read_all(name)
    if cmd.split_events(data) != events:
        raise client.diverge("pravega.append.stored-verbatim", f"events {events}", repr(data[:200]))


@case("pravega.append.stored-verbatim")
def test_malformed_event_bytes_are_stored_verbatim(target):
    client, name, writer = writer_on(target)
    junk = b"\x07\x07not-an-event-frame"
    rid = client.send("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(junk), data=junk, num_events=1,
                      last_event_number=1)
    client.acked(writer, rid, 1, "pravega.append.stored-verbatim")
    if client.read_all(name) != junk:
        raise client.diverge("pravega.append.stored-verbatim", junk.hex(), client.read_all(name).hex())


# -- block shapes ---------------------------------------------------------------------------------------------------


@case("pravega.append.ack")
def test_unbatched_block_shape_a(target):
    client, name, writer = writer_on(target)
    client.send_frame(block(writer, EV) + block_end(writer, 13, b"", 1, 1, 41))
    client.acked(writer, 41, 1, offset=13)
    if client.read_all(name) != EV:
        raise client.diverge("pravega.append.stored-verbatim", EV.hex(), client.read_all(name).hex())


@case("pravega.append.padding")
@pytest.mark.parametrize("padding", [0, 1, 19, 300])
def test_block_closed_by_padding(target, padding):
    client, name, writer = writer_on(target, data=BASE)
    pad = struct.pack(">ii", -1, padding) + bytes(padding)
    client.send_frame(block(writer, EV + pad) + block_end(writer, 13, b"", 1, 1, 42))
    client.acked(writer, 42, 1, "pravega.append.padding", offset=B + 13, stores="pravega.append.padding")
    if client.read_all(name, B, clause_id="pravega.append.padding") != EV:
        raise client.diverge("pravega.append.padding", "only the whole event stored", "other bytes")


@case("pravega.append.partial-event")
@pytest.mark.parametrize("split", [0, 1, 7, 8, 12, 13], ids=lambda n: f"split-{n}")
def test_event_split_across_block_and_block_end(target, split):
    client, name, writer = writer_on(target, data=BASE)
    second = cmd.event(b"world")
    partial = struct.pack(">ii", -2, split) + second[:split]
    client.send_frame(block(writer, EV + partial) + block_end(writer, 13, second[split:], 2, 2, 43))
    client.acked(writer, 43, 2, "pravega.append.partial-event")
    data = client.read_all(name, B, clause_id="pravega.append.partial-event")
    if data != EV + second:
        raise client.diverge("pravega.append.partial-event", (EV + second).hex(), data.hex())


@case("pravega.append.standalone-block-end")
@pytest.mark.parametrize("size", [13, 0, 26, -5], ids=["true", "zero", "too-big", "negative"])
def test_standalone_block_end_ignores_size(target, size):
    client, name, writer = writer_on(target, data=BASE)
    client.send_frame(block_end(writer, size, EV + EV, 2, 2, 44))
    client.acked(writer, 44, 2, "pravega.append.standalone-block-end", offset=B + 26,
                 stores="pravega.append.standalone-block-end")


@case("pravega.append.block-rules", hostile=True)
@pytest.mark.parametrize("violation", ["num-events-zero", "num-events-negative", "other-writer", "size-too-big",
                                       "size-negative", "two-blocks", "bad-trailer", "padding-then-data"])
def test_block_rule_violation_closes(target, violation):
    client, name, writer = writer_on(target)
    other = client.new_writer(name)
    if violation == "num-events-zero":
        frames = block_end(writer, 13, EV, 0, 1, 1)
    elif violation == "num-events-negative":
        frames = block_end(writer, 13, EV, -3, 1, 1)
    elif violation == "other-writer":
        frames = block(writer, EV) + block_end(other, 13, b"", 1, 1, 1)
    elif violation == "size-too-big":
        frames = block(writer, EV) + block_end(writer, 14, b"", 1, 1, 1)
    elif violation == "size-negative":
        frames = block(writer, EV) + block_end(writer, -1, b"", 1, 1, 1)
    elif violation == "two-blocks":
        frames = block(writer, EV) + block(writer, EV)
    elif violation == "bad-trailer":
        frames = block(writer, EV + struct.pack(">ii", 9, 0)) + block_end(writer, 13, b"", 1, 1, 1)
    else:
        frames = block(writer, EV + struct.pack(">ii", -1, 0)) + block_end(writer, 13, b"x", 1, 1, 1)
    client.send_frame(frames)
    client.closes("pravega.append.block-rules")


# -- event numbers --------------------------------------------------------------------------------------------------


@case("pravega.append.event-number-lower", hostile=True)
@pytest.mark.parametrize("lower", [4, 0, -1], ids=["4", "0", "-1"])
def test_lower_event_number_closes(target, lower):
    client, name, writer = writer_on(target)
    client.append(writer, [b"a"], 5)
    client.send_events(writer, [b"b"], lower)
    client.closes("pravega.append.event-number-lower")


@case("pravega.append.event-number-lower", hostile=True)
def test_negative_first_event_number_closes(target):
    client, name, writer = writer_on(target)
    client.send_events(writer, [b"b"], -7)
    client.closes("pravega.append.event-number-lower")


@case("pravega.append.event-number-equal")
def test_equal_event_number_is_not_acked_again(target):
    client, name, writer = writer_on(target)
    client.append(writer, [b"a"], 5)
    client.send_events(writer, [b"b"], 5)
    # The next answer is the Hello's. A close (or silence) is the SHOULD clause's other path: NON-STRICT (its
    # decision; the equal-event-number-closes variant); a second ack for 5 breaks the MUST of strictly increasing
    # acks (notes §7.2 Ack invariants: the Java client fails the connection).
    client.send("Hello", high_version=cmd.WIRE_VERSION, low_version=cmd.OLDEST_COMPATIBLE_VERSION)
    answer = client.receive("pravega.append.event-number-equal", silence="pravega.append.event-number-equal")
    if answer.name == "DataAppended":
        raise client.diverge("pravega.append.ack-previous", "no second DataAppended for event number 5 (acks "
                             "strictly increase)", client._text(answer))
    client.expect("pravega.append.event-number-equal", None, ("Hello",), decoded=answer)


@case("pravega.append.resetup")
@pytest.mark.parametrize("acked", [1, 3, 1000])
def test_setup_again_returns_last_acked(target, acked):
    client, name, writer = writer_on(target)
    client.append(writer, [b"a"], acked)
    client.close()
    again = Pravega(target)
    last = again.setup_append(name, writer, "pravega.append.resetup")
    if last != acked:
        raise again.diverge("pravega.append.resetup", f"lastEventNumber {acked}", str(last))
    again.append(writer, [b"b"], acked + 1, "pravega.append.resetup", previous=acked)


@case("pravega.append.invalid-event-number", hostile=True)
def test_writer_moved_by_another_connection(target):
    client, name, writer = writer_on(target)
    other = Pravega(target)
    other.setup_append(name, writer)
    other.append(writer, [b"other"], 7)
    rid = client.send_events(writer, [b"mine"], 1)
    answer = client.expect("pravega.append.invalid-event-number", rid, ("InvalidEventNumber",))
    if answer["writer_id"] != writer:
        raise client.diverge("pravega.append.invalid-event-number", f"writer {writer}", str(answer["writer_id"]))
    client.closes("pravega.append.invalid-event-number")


# -- sealed ---------------------------------------------------------------------------------------------------------


@case("pravega.append.sealed")
def test_append_to_sealed_segment(target):
    client, name, writer = writer_on(target)
    client.append(writer, [b"a"], 1, offset=9)
    Pravega(target).seal(name)
    rid = client.send_events(writer, [b"b"], 2)
    answer = client.expect("pravega.append.sealed", rid, ("SegmentIsSealed",))
    if answer["segment"] != name:
        raise client.diverge("pravega.append.sealed", f"segment {name!r}", repr(answer["segment"]))
    # A15: on the append path the offset is the refused event's number (2), not a byte offset (the length, 9)
    if answer["offset"] != 2:
        raise client.diverge("pravega.append.sealed", "offset 2 (the event number)", f"offset {answer['offset']}")
    length = Pravega(target).info(name, "pravega.append.sealed")["write_offset"]
    if length != 9:
        raise client.diverge("pravega.append.sealed", "nothing appended after the seal (length 9)", str(length))


@case("pravega.append.sealed", hostile=True)
def test_second_append_after_sealed_closes(target):
    client, name, writer = writer_on(target)
    Pravega(target).seal(name)
    rid = client.send_events(writer, [b"b"], 1)
    client.expect("pravega.append.sealed", rid, ("SegmentIsSealed",))
    client.send_events(writer, [b"c"], 2)
    client.closes("pravega.append.sealed")


@case("pravega.append.setup")
def test_setup_on_sealed_segment_still_answers(target):
    client, name = new_segment(target)
    client.seal(name)
    client.setup_append(name, uuid.uuid4())


# -- conditional ----------------------------------------------------------------------------------------------------


@case("pravega.append.conditional")
@pytest.mark.parametrize("command", ["ConditionalAppend", "ConditionalBlockEnd"])
def test_conditional_append_at_the_length(target, command):
    client, name, writer = writer_on(target, data=[b"abc"])
    data = b"xyz" if command == "ConditionalAppend" else cmd.event(b"xyz")
    field = "event" if command == "ConditionalAppend" else "data"
    rid = client.send(command, writer_id=writer, event_number=1, expected_offset=11, **{field: data})
    client.acked(writer, rid, 1, "pravega.append.conditional", offset=22, stores="pravega.append.conditional")
    if cmd.split_events(client.read_all(name)) != [b"abc", b"xyz"]:
        raise client.diverge("pravega.append.conditional", "both events stored", "other bytes")


@case("pravega.append.conditional")
@pytest.mark.parametrize("command", ["ConditionalAppend", "ConditionalBlockEnd"])
@pytest.mark.parametrize("expected", [0, 10, 12, 2**40, -1])
def test_conditional_append_at_a_wrong_offset(target, command, expected):
    client, name, writer = writer_on(target, data=[b"abc"])
    field = "event" if command == "ConditionalAppend" else "data"
    if expected < 0:
        target.beyond_comparison("a conditional append at a negative offset: ConditionalCheckFailed or appended at "
                                 "the end, both permitted (variant pravega.negative-conditional-appends)")
    rid = client.send(command, writer_id=writer, event_number=1, expected_offset=expected, **{field: b"xyz"})
    # a negative offset names no position: Pravega 0.13.0 appends at the end (SegmentMetadataUpdateTransaction.java
    # :297-307 at v0.13.0: an append offset below 0 is none), which the clause permits
    allowed = ("ConditionalCheckFailed", "DataAppended") if expected < 0 else ("ConditionalCheckFailed",)
    answer = client.expect("pravega.append.conditional", rid, allowed)
    if answer.name == "DataAppended":  # a ConditionalBlockEnd's data is the bytes it appends, not one event
        appended = cmd.event(b"xyz") if command == "ConditionalAppend" else b"xyz"
        client.acked(writer, rid, 1, "pravega.append.conditional", offset=11 + len(appended), decoded=answer,
                     stores="pravega.append.conditional")
        if client.read_all(name) != cmd.event(b"abc") + appended:
            raise client.diverge("pravega.append.conditional", "the bytes appended at the end", "other bytes")
        return
    if answer["writer_id"] != writer or answer["event_number"] != 1:
        raise client.diverge("pravega.append.conditional", "ConditionalCheckFailed(writer, 1)", client._text(answer))
    if client.info(name, "pravega.append.conditional")["write_offset"] != 11:
        raise client.diverge("pravega.append.conditional", "nothing appended", "the length moved")
    client.append(writer, [b"after"], 2, "pravega.append.conditional", offset=24)


@case("pravega.append.conditional-event-type", hostile=True)
@pytest.mark.parametrize("kind", [1, -1, 3])
def test_conditional_nested_type_must_be_event(target, kind):
    client, name, writer = writer_on(target)
    payload = writer.bytes + struct.pack(">qqii", 1, 0, kind, 3) + b"abc" + struct.pack(">q", 9)
    client.send_frame(struct.pack(">ii", cmd.CODE["ConditionalAppend"], len(payload)) + payload)
    client.closes("pravega.append.conditional-event-type")


@case("pravega.append.transient")
def test_transient_segment(target):
    client, name = new_segment(target)
    writer = uuid.uuid4()
    # the transient segment's name is the server's: Pravega 0.13.0 adds a random part (NameUtils.java
    # getTransientNameFromId, 276-288), a name of another length than the reference broker's, so no later request
    # that names it can be carried over to the other server
    target.beyond_comparison("a transient segment's name is the server's own choice")
    answer = client.call("CreateTransientSegment", "pravega.append.transient", ("SegmentCreated",),
                         writer_id=writer, parent_segment=name)
    transient = answer["segment"]
    if transient == name:
        raise client.diverge("pravega.append.transient", "a new segment name", repr(transient))
    client.setup_append(transient, writer, "pravega.append.transient")
    client.append(writer, [b"t"], 1, "pravega.append.transient")


@case("pravega.append.setup")
def test_several_writers_share_a_connection(target):
    client, name = new_segment(target)
    writers = [client.new_writer(name) for _ in range(3)]
    for i, w in enumerate(writers, 1):
        client.append(w, [b"%d" % i], 1, previous=MIN)
