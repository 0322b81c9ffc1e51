"""ReadSegment: in range, suggested lengths, long polls at the tail, sealed and truncated segments
(notes §7.4)."""

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.suites.pravega.client import Pravega, new_segment, segment_name, segment_with

case = pytest.mark.case
EVENTS = [b"alpha", b"", b"gamma" * 20]


def stored(events):
    return b"".join(cmd.event(e) for e in events)


@case("pravega.read.in-range")
@pytest.mark.parametrize("offset", [0, 1, 8, 13, 30])
def test_read_inside_the_segment(target, offset):
    client, name, start = segment_with(target, EVENTS)
    whole = stored(EVENTS)
    answer = client.read(name, start + offset)
    data = answer["data"][: len(whole) - offset]  # on a shared segment, other writers' bytes may follow ours
    if answer["offset"] != start + offset or not data or len(answer["data"]) > cmd.MAX_READ_SIZE or \
            whole[offset:offset + len(data)] != data:
        raise client.diverge("pravega.read.in-range", f"SegmentRead at {start + offset} with a prefix of "
                             f"{whole[offset:offset + 32].hex()}...", client._text(answer))


@case("pravega.read.in-range")
def test_read_all_in_pieces(target):
    client, name = new_segment(target, data=EVENTS)
    if client.read_all(name, clause_id="pravega.read.in-range") != stored(EVENTS):
        raise client.diverge("pravega.read.in-range", "the stored bytes", "other bytes")


@case("pravega.read.suggested-length")
@pytest.mark.parametrize("length", [0, -1, 1, 7, 8, -(2**31), 2**31 - 1, 10 << 20])
def test_suggested_length_is_a_hint(target, length):
    client, name, start = segment_with(target, EVENTS)
    answer = client.read(name, start, length, "pravega.read.suggested-length")
    if not answer["data"] or len(answer["data"]) > cmd.MAX_READ_SIZE:
        raise client.diverge("pravega.read.suggested-length", "1..2 MiB bytes", str(len(answer["data"])))


@case("pravega.read.suggested-length")
def test_large_segment_reads_at_most_2mib(target):
    client, name = new_segment(target)
    writer = client.new_writer(name)
    client.append(writer, [bytes(1 << 20), bytes(1 << 20), bytes(100)], 3)
    answer = client.read(name, 0, 10 << 20, "pravega.read.suggested-length")
    if not 0 < len(answer["data"]) <= cmd.MAX_READ_SIZE:
        raise client.diverge("pravega.read.suggested-length", "1..2 MiB bytes", str(len(answer["data"])))


@case("pravega.read.long-poll")
@pytest.mark.parametrize("beyond", [0, 5], ids=["at-tail", "beyond-tail"])
def test_read_at_tail_waits_for_data(target, beyond):
    client, name = new_segment(target, data=[b"a"])
    length = 9
    offset = length + beyond
    rid = client.send("ReadSegment", segment=name, offset=offset, suggested_length=1000)
    client.silent("pravega.read.long-poll", 0.3, "the read parked until data arrives")
    appender = Pravega(target)
    writer = appender.new_writer(name)
    appender.append(writer, [b"more data here"], 1)
    answer = client.expect("pravega.read.long-poll", rid, ("SegmentRead",), silence="pravega.read.long-poll")
    # what plain reads from that offset get now (read.in-range and stored-verbatim judge those bytes)
    stored = client.read_all(name, offset, clause_id="pravega.read.long-poll")
    if answer["offset"] != offset or not answer["data"] or not stored.startswith(answer["data"]):
        raise client.diverge("pravega.read.long-poll", f"the new bytes from {offset}: {stored.hex()}",
                             client._text(answer))


@case("pravega.read.long-poll")
def test_parked_read_does_not_block_other_requests(target):
    client, name = new_segment(target)
    rid = client.send("ReadSegment", segment=name, offset=0, suggested_length=100)
    client.silent("pravega.read.long-poll", 0.2, "the read parked")  # first: else its answer would meet the info's
    rid_info = client.send("GetStreamSegmentInfo", segment=name)
    info = client.expect("pravega.read.long-poll", rid_info, ("StreamSegmentInfo",), silence="pravega.read.long-poll")
    if info["write_offset"] != 0:
        raise client.diverge("pravega.read.long-poll", "an empty segment", client._text(info))
    client.silent("pravega.read.long-poll", 0.2, "the read still parked")
    deleter = Pravega(target)
    with target.precondition(f"segment {name} deleted"):
        deleter.delete(name)
        deleter.absent(name, "pravega.segment.delete")
    client.expect("pravega.read.long-poll", rid, ("SegmentRead", "NoSuchSegment"), silence="pravega.read.long-poll")


@case("pravega.read.long-poll-sealed")
def test_parked_read_answered_on_seal(target):
    client, name = new_segment(target, data=[b"a"])
    rid = client.send("ReadSegment", segment=name, offset=9, suggested_length=100)
    client.silent("pravega.read.long-poll", 0.2, "the read parked")
    Pravega(target).seal(name)
    answer = client.expect("pravega.read.long-poll-sealed", rid, ("SegmentIsSealed", "SegmentRead"),
                           silence="pravega.read.long-poll-sealed")
    if answer.name == "SegmentRead" and (answer["data"] or not answer["end_of_segment"]):
        raise client.diverge("pravega.read.long-poll-sealed", "an empty SegmentRead with endOfSegment",
                             client._text(answer))


@case("pravega.read.end-of-segment")
@pytest.mark.parametrize("events", [[], [b"x"]], ids=["empty", "one-event"])
def test_read_at_sealed_end(target, events):
    client, name = new_segment(target, data=events)
    with target.precondition(f"segment {name} sealed"):
        client.seal(name)
    length = len(stored(events))
    answer = client.read(name, length, clause_id="pravega.read.end-of-segment")
    if answer["data"] or not answer["end_of_segment"]:
        raise client.diverge("pravega.read.end-of-segment", "empty, endOfSegment true", client._text(answer))


@case("pravega.read.end-of-segment")
def test_read_reaching_sealed_end_may_say_so(target):
    client, name = new_segment(target, data=[b"abc"])
    with target.precondition(f"segment {name} sealed"):
        client.seal(name)
    answer = client.read(name, 0, clause_id="pravega.read.end-of-segment")
    if answer["at_tail"]:
        raise client.diverge("pravega.read.end-of-segment", "atTail false on a sealed segment",
                             client._text(answer))


@case("pravega.read.beyond-sealed", hostile=True)
@pytest.mark.parametrize("where", ["beyond-sealed", "negative"])
def test_read_outside_the_segment(target, where):
    client, name = new_segment(target, data=[b"abc"])
    if where == "beyond-sealed":
        with target.precondition(f"segment {name} sealed"):
            client.seal(name)
        offset = 100
    else:
        offset = -1
    target.beyond_comparison("a read outside the segment: ErrorMessage or a closed connection, both permitted "
                             "(variant pravega.beyond-sealed-closes)")
    rid = client.send("ReadSegment", segment=name, offset=offset, suggested_length=10)
    reply = client.session.recv()
    if reply.ended:
        return
    answer = client.decode(reply, "pravega.read.beyond-sealed")
    answer = client.expect("pravega.read.beyond-sealed", rid, ("ErrorMessage",), decoded=answer)
    if answer["error_code"] != 0:
        raise client.diverge("pravega.read.beyond-sealed", "ErrorMessage code 0", client._text(answer))


@case("pravega.read.truncated")
@pytest.mark.parametrize("offset", [0, 5, 12])
def test_read_below_start_offset(target, offset):
    client, name = new_segment(target, data=[b"abcde", b"fg"])
    with target.precondition(f"segment {name} truncated at 13"):
        client.truncate(name, 13)
    answer = client.read(name, offset, clause_id="pravega.read.truncated", replies=("SegmentIsTruncated",))
    if answer["start_offset"] != 13 or answer["offset"] != offset:
        raise client.diverge("pravega.read.truncated", f"startOffset 13, offset {offset}", client._text(answer))


@case("pravega.read.truncated")
def test_read_at_start_offset_after_truncation(target):
    client, name = new_segment(target, data=[b"abcde", b"fg"])
    with target.precondition(f"segment {name} truncated at 13"):
        client.truncate(name, 13)
    data = client.read_all(name, 13, clause_id="pravega.read.truncated")  # each read judged under read.in-range
    if data != cmd.event(b"fg"):
        raise client.diverge("pravega.read.truncated", cmd.event(b"fg").hex(), data.hex())


@case("pravega.read.no-such-segment")
@pytest.mark.parametrize("offset", [0, 42])
def test_read_missing_segment(target, offset):
    client = Pravega(target)
    name = segment_name(target, "r")
    answer = client.read(name, offset, clause_id="pravega.read.no-such-segment", replies=("NoSuchSegment",))
    if answer["segment"] != name or answer["offset"] != offset:
        raise client.diverge("pravega.read.no-such-segment", f"NoSuchSegment({name!r}, offset {offset})",
                             client._text(answer))
