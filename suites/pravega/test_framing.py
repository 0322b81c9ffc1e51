"""Framing, strings, Hello, KeepAlive and requestId echo (notes §1, §2, §6, §7.1, §8)."""

import struct
import uuid

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega import mutf8
from wirecheck.suites.pravega.client import Pravega, new_segment, segment_name, server_range, token_of

case = pytest.mark.case


def raw(code: int, payload: bytes) -> bytes:
    return struct.pack(">ii", code, len(payload)) + payload


def unopened(target) -> Pravega:
    """A connection without the Hello every other one opens with: the Hello cases send their own first."""
    return Pravega(target, target.connect(login=False))


# -- Hello and KeepAlive -----------------------------------------------------------------------------------------


@case("pravega.hello.reply")
@pytest.mark.parametrize("high,low", [(17, 5), (15, 5), (17, 17), (5, 5), (100, 5)])
def test_hello_is_answered_with_hello(target, high, low):
    # notes §6: the server always replies with its own range (Hello(17, 5) upstream), whatever the client sent. Its
    # own range is learnt on a connection of its own: a range that misses the server's (Hello(17, 17) to Pravega
    # 0.13.0, whose WIRE_VERSION is 16) is answered, then the connection closed (AppendProcessor.java:144-151 at
    # v0.13.0; pravega.hello.incompatible's)
    own_high, own_low = server_range(target)
    own = {"high_version": own_high, "low_version": own_low}
    client = unopened(target)
    answer = client.hello(high, low)
    if (answer["high_version"], answer["low_version"]) != (own["high_version"], own["low_version"]):
        raise client.diverge("pravega.hello.reply", f"the server's own range Hello({own['high_version']}, "
                             f"{own['low_version']}) to Hello({high}, {low}) too",
                             f"Hello({answer['high_version']}, {answer['low_version']})")


@case("pravega.hello.versions")
def test_server_hello_carries_a_usable_range(target):
    client = unopened(target)
    answer = client.hello()
    low, high = answer["low_version"], answer["high_version"]
    if not (low <= high and high >= cmd.OLDEST_COMPATIBLE_VERSION):
        raise client.diverge("pravega.hello.versions", "lowVersion <= highVersion, highVersion >= 5",
                             f"Hello({high}, {low})")


@case("pravega.hello.incompatible", hostile=True)
@pytest.mark.parametrize("high,low", [(4, 1), (2, 2), (200, 18), (2**31 - 1, 2**31 - 1)],
                         ids=["too-old", "ancient", "too-new", "far-future"])
def test_incompatible_hello_is_answered_then_closed(target, high, low):
    client = unopened(target)
    client.send("Hello", high_version=high, low_version=low)
    seen = client.closes("pravega.hello.incompatible", allowed=("Hello",))
    if not seen:
        raise client.diverge("pravega.hello.incompatible", "the server's Hello, then the close",
                             "the connection closed without a Hello")


@case("pravega.hello.not-required")
def test_commands_work_without_hello(target):
    client = unopened(target)
    name = segment_name(target)
    client.create(name, clause_id="pravega.hello.not-required")
    client.info(name, clause_id="pravega.hello.not-required")


@case("pravega.hello.not-required")
def test_hello_after_other_commands(target):
    client = unopened(target)
    name = segment_name(target)
    client.create(name, clause_id="pravega.hello.not-required")
    client.hello(clause_id="pravega.hello.not-required")
    client.info(name, clause_id="pravega.hello.not-required")


@case("pravega.keepalive.echo")
@pytest.mark.parametrize("count", [1, 3])
def test_keepalive_is_echoed(target, count):
    client = Pravega(target)
    for _ in range(count):
        client.send("KeepAlive")
        client.expect("pravega.keepalive.echo", None, ("KeepAlive",), silence="pravega.keepalive.echo")


# -- requestId ----------------------------------------------------------------------------------------------------


@case("pravega.request-id.echo")
@pytest.mark.parametrize("rid", [0, 1, 2**63 - 1, -1, -(2**63), 0x0000000100000002],
                         ids=["0", "1", "max", "-1", "min", "flow"])
def test_request_id_is_echoed(target, rid):
    client = Pravega(target)
    client.call("CreateSegment", "pravega.request-id.echo", ("SegmentCreated",), request_id=rid,
                segment=segment_name(target), target_rate=0, scale_type=0)


#: command -> (the error reply a missing segment, or for CreateSegment an existing one, gets; the clause that
#: decides which reply that is; this case judges only the requestId in it)
ERRORS = {"GetStreamSegmentInfo": (("NoSuchSegment", "StreamSegmentInfo"), "pravega.segment.info"),
          "SealSegment": (("NoSuchSegment",), "pravega.segment.no-such-segment"),
          "DeleteSegment": (("NoSuchSegment",), "pravega.segment.delete"),
          "CreateSegment": (("SegmentAlreadyExists",), "pravega.segment.create-exists")}


@case("pravega.request-id.echo")
@pytest.mark.parametrize("command", list(ERRORS))
def test_request_id_is_echoed_on_errors(target, command):
    client, name = new_segment(target)
    values = {"target_rate": 0, "scale_type": 0} if command == "CreateSegment" else {}
    segment = name if command == "CreateSegment" else name + "-absent"
    replies, owner = ERRORS[command]
    client.call(command, owner, replies, request_id=0x5EED, segment=segment, **values)


@case("pravega.request-id.echo")
def test_read_request_id_is_echoed(target):
    client, name = new_segment(target, data=[b"x"])
    client.call("ReadSegment", "pravega.request-id.echo", ("SegmentRead",), segment=name, offset=0,
                suggested_length=100, request_id=77)


# -- frames -------------------------------------------------------------------------------------------------------


@case("pravega.framing.reply")
def test_replies_decode_exactly(target):
    client, name = new_segment(target, data=[b"a", b"bc"])
    client.info(name)  # the client decodes every reply strictly: its length, its fields, no bytes after them
    client.read(name, 0)
    client.hello()


@case("pravega.framing.unknown-type", hostile=True)
@pytest.mark.parametrize("code", [6, 13, 22, 54, 72, 73, 92, 99, 101, 127, -7, -126, -128, 2**31 - 1, -(2**31)])
def test_unknown_type_closes(target, code):
    client = Pravega(target)
    client.send_frame(raw(code, struct.pack(">q", 1)))
    client.closes("pravega.framing.unknown-type")


@case("pravega.framing.not-a-request", hostile=True)
@pytest.mark.parametrize("name", ["Event", "PartialEvent", "DataAppended", "AppendSetup", "SegmentRead",
                                  "ErrorMessage", "NoSuchSegment", "TableRead", "FlushToStorage"])
def test_reply_only_or_embedded_command_closes(target, name):
    values = {f.name: _zero(f.codec) for f in cmd.BY_NAME[name].fields}
    client = Pravega(target)
    client.send_frame(cmd.encode(name, values))
    client.closes("pravega.framing.not-a-request")


def _zero(codec):
    if codec is cmd.STR:
        return "x"
    if codec in (cmd.BLOB, cmd.LENIENT_BLOB, cmd.REST, cmd.EVENT):
        return b"\0" * 8
    if codec is cmd.UUID:
        return uuid.UUID(int=1)
    if isinstance(codec, cmd.ListOf):
        return []
    return 0


@case("pravega.framing.oversize", hostile=True)
# 2^24 and 24 MiB are past both readings of A3 (DOC: payload below 2^24), so only a close conforms there
@pytest.mark.parametrize("length", [cmd.MAX_PAYLOAD + 1, 0x00FFFFFF, 1 << 24, 24 << 20, 2**31 - 1, -1, -(2**31)],
                         ids=["limit+1", "0xffffff", "2^24", "24MiB", "max", "-1", "min"])
def test_oversize_length_closes(target, length):
    client = Pravega(target)
    client.send_frame(struct.pack(">ii", cmd.CODE["KeepAlive"], length) + b"\0" * 16)
    if 0 < length <= 0xFFFFFF:
        # A3: the protocol doc allows payloads below 2^24, upstream's decoder counts the header in that limit:
        # a server following the doc waits for the rest of the payload, which conforms too. The liveness probe
        # after the case checks the server survived.
        reply = client.session.recv(min(target.deadline, 0.5))
        if reply.ended or reply.outcome.value == "silent":
            return
        raise client.diverge("pravega.framing.oversize", "a close, or waiting for the payload",
                             client.show(reply.frame) if reply.is_frame else str(reply))
    client.closes("pravega.framing.oversize")


@case("pravega.framing.max-payload")
def test_largest_payload_is_accepted(target):
    client = Pravega(target, target.connect(deadline=max(target.deadline, 10)))
    with target.precondition("a small top-level Padding accepted"):  # the padding clause's, not the size's
        client.send_frame(raw(cmd.CODE["Padding"], bytes(8)))
        client.stays_open("pravega.framing.padding")
    client.send_frame(raw(cmd.CODE["Padding"], bytes(cmd.MAX_PAYLOAD)), decode=False)
    client.stays_open("pravega.framing.max-payload")


@case("pravega.framing.truncated", hostile=True)
@pytest.mark.parametrize("cut", [0, 4, 9, 12, 20])
def test_truncated_payload_closes(target, cut):
    frame = cmd.encode("GetStreamSegmentInfo", request_id=1, segment="wirecheck/x/0", delegation_token=token_of(target))
    payload = frame[8:][:cut]
    client = Pravega(target)
    client.send_frame(raw(cmd.CODE["GetStreamSegmentInfo"], payload))
    client.closes("pravega.framing.truncated")


@case("pravega.framing.truncated", hostile=True)
@pytest.mark.parametrize("count", [1, 1000, 2**31 - 1, -1])
def test_lying_list_count_closes(target, count):
    frame = cmd.encode("ReadTable", request_id=1, segment="wirecheck/x/t", delegation_token=token_of(target), keys=[])
    client = Pravega(target)
    client.send_frame(frame[:-4] + struct.pack(">i", count))
    client.closes("pravega.framing.truncated")


@case("pravega.framing.truncated", hostile=True)
def test_short_append_block_closes(target):
    client = Pravega(target)
    client.send_frame(raw(cmd.CODE["AppendBlock"], b"\1" * 15))
    client.closes("pravega.framing.truncated")


@case("pravega.framing.trailing-bytes")
@pytest.mark.parametrize("extra", [1, 24, 1000])
def test_trailing_bytes_are_skipped(target, extra):
    client, name = new_segment(target)
    frame = cmd.encode("GetStreamSegmentInfo", request_id=9, segment=name, delegation_token=token_of(target))
    client.send_frame(raw(cmd.CODE["GetStreamSegmentInfo"], frame[8:] + b"\xAB" * extra))
    client.expect("pravega.framing.trailing-bytes", 9, ("StreamSegmentInfo",))


@case("pravega.framing.trailing-bytes")
def test_hello_with_unknown_fields(target):
    client = Pravega(target)
    client.send_frame(raw(cmd.CODE["Hello"], struct.pack(">ii", 17, 5) + bytes(24)))
    client.expect("pravega.framing.trailing-bytes", None, ("Hello",))


@case("pravega.framing.optional-fields")
def test_read_without_request_id(target):
    client, name = new_segment(target, data=[b"abc"])
    with_id = client.read(name, 0, 100)["data"]  # what the read with its requestId gets (read.in-range judges that)
    payload = cmd.encode_payload(cmd.CODE["ReadSegment"], {"segment": name, "offset": 0, "suggested_length": 100,
                                                           "delegation_token": client.token}, omit_optional=True)
    client.send_frame(raw(cmd.CODE["ReadSegment"], payload))
    answer = client.expect("pravega.framing.optional-fields", None, ("SegmentRead",))
    if answer["data"] != with_id:
        raise client.diverge("pravega.framing.optional-fields", f"the bytes the read with a requestId got: "
                             f"{with_id.hex()}", answer["data"].hex())


@case("pravega.framing.optional-fields")
@pytest.mark.parametrize("name", ["CreateSegment", "CreateTableSegment"])
def test_create_without_trailing_options(target, name):
    client = Pravega(target)
    values = {"request_id": 31, "segment": segment_name(target), "delegation_token": client.token}
    if name == "CreateSegment":
        values.update(target_rate=0, scale_type=0)
    client.send_frame(raw(cmd.CODE[name], cmd.encode_payload(cmd.CODE[name], values, omit_optional=True)))
    client.expect("pravega.framing.optional-fields", 31, ("SegmentCreated",))


@case("pravega.framing.partial")
@pytest.mark.parametrize("split", [1, 4, 7, 8, 9, 20])
def test_frame_split_across_segments(target, split):
    client, name = new_segment(target)
    frame = cmd.encode("GetStreamSegmentInfo", request_id=5, segment=name, delegation_token=token_of(target))
    client.session.send(frame[:split])
    client.silent("pravega.framing.partial", 0.2, "no reply before the frame is complete")
    client.session.send(frame[split:])
    client.expect("pravega.framing.partial", 5, ("StreamSegmentInfo",), silence="pravega.framing.partial")


@case("pravega.framing.pipelined")
def test_pipelined_requests_each_answered(target):
    client, name = new_segment(target)
    hello = cmd.encode("Hello", high_version=cmd.WIRE_VERSION, low_version=cmd.OLDEST_COMPATIBLE_VERSION)
    data = b"".join(cmd.encode("GetStreamSegmentInfo", request_id=100 + i, segment=name,
                               delegation_token=token_of(target)) for i in range(10)) + hello
    # the order the answers come in is the server's (Pravega 0.13.0 answers the Hello at once on the connection's
    # thread, each info once its container completes it), so they are compared as the set the case checks, not here
    target.beyond_comparison("pipelined requests: the order of their answers is the server's")
    client.session.send(data)
    seen = set()
    for _ in range(11):
        answer = client.receive("pravega.framing.pipelined", silence="pravega.framing.pipelined")
        seen.add(answer.get("request_id", answer.name))
    if seen != set(range(100, 110)) | {"Hello"}:
        raise client.diverge("pravega.framing.pipelined", "requestIds 100..109 and the Hello", str(sorted(
            map(str, seen))))


@case("pravega.framing.padding")
@pytest.mark.parametrize("size", [0, 1, 100])
def test_top_level_padding_is_ignored(target, size):
    client = Pravega(target)
    client.send_frame(raw(cmd.CODE["Padding"], bytes(size)))
    client.stays_open("pravega.framing.padding")


# -- strings ------------------------------------------------------------------------------------------------------


@case("pravega.strings.modified-utf8")
@pytest.mark.parametrize("suffix", ["\0", "é", "\u20ac", "\U0001F600", "a\0\U0001F600é"],
                         ids=["nul", "2-byte", "3-byte", "supplementary", "mixed"])
def test_names_travel_as_modified_utf8(target, suffix):
    client = Pravega(target)
    name = segment_name(target) + suffix
    rid = client.send("CreateSegment", segment=name, target_rate=0, scale_type=0)
    frame = client.frame("pravega.strings.modified-utf8")
    wanted = len(mutf8.encode(name)).to_bytes(2, "big") + mutf8.encode(name)
    if frame[16:16 + len(wanted)] != wanted:
        raise client.diverge("pravega.strings.modified-utf8", f"SegmentCreated naming the segment as {wanted.hex()}",
                             f"{frame[16:16 + len(wanted) + 4].hex()} ({client.show(frame)})")
    client.expect("pravega.strings.modified-utf8", rid, ("SegmentCreated",), decoded=cmd.decode(frame))
    client.info(name, clause_id="pravega.strings.modified-utf8")


@case("pravega.strings.modified-utf8")
def test_raw_nul_byte_is_accepted(target):
    client = Pravega(target)
    name = segment_name(target)
    token = client.token.encode()  # ASCII: a delegation token is a JWT
    payload = struct.pack(">q", 3) + struct.pack(">H", len(name) + 1) + name.encode() + b"\0" + \
        struct.pack(">ibH", 0, 0, len(token)) + token
    client.send_frame(raw(cmd.CODE["CreateSegment"], payload))
    client.expect("pravega.strings.modified-utf8", 3, ("SegmentCreated",))


@case("pravega.strings.invalid", hostile=True)
@pytest.mark.parametrize("bad", [b"\xf0\x9f\x98\x80", b"\x80", b"\xbf\xbf", b"\xc3", b"\xe2\x82", b"\xff"],
                         ids=["4-byte", "continuation", "two-continuations", "cut-2", "cut-3", "ff"])
def test_invalid_modified_utf8_closes(target, bad):
    client = Pravega(target)
    payload = struct.pack(">q", 4) + struct.pack(">H", len(bad) + 1) + b"a" + bad + struct.pack(">ibH", 0, 0, 0)
    client.send_frame(raw(cmd.CODE["CreateSegment"], payload))
    client.closes("pravega.strings.invalid")


@case("pravega.framing.truncated", hostile=True)
def test_string_length_past_payload_closes(target):
    client = Pravega(target)
    client.send_frame(raw(cmd.CODE["GetStreamSegmentInfo"], struct.pack(">qH", 1, 500) + b"abc"))
    client.closes("pravega.framing.truncated")
