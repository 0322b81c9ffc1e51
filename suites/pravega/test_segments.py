"""Segment lifecycle and attributes: create, info, seal, truncate, delete, merge, policy, locate offset,
attribute compare-and-set (notes §7.5)."""

import uuid

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.suites.pravega.client import MIN, Pravega, needs_wire_version, new_segment, new_table, segment_name

case = pytest.mark.case


@case("pravega.segment.create")
@pytest.mark.parametrize("rate,scale", [(0, 0), (100, 1), (5, 2)])
def test_create_then_info(target, rate, scale):
    # create() also asks StreamSegmentInfo: the segment exists, unsealed and empty
    Pravega(target).create(segment_name(target), target_rate=rate, scale_type=scale)


@case("pravega.segment.create-exists")
@pytest.mark.parametrize("existing", ["stream", "table"])
def test_create_twice(target, existing):
    # CreateSegment on a name a stream or a table segment holds; a table segment's second CreateTableSegment is
    # pravega.table.create's (test_tables.test_create_table)
    client, name = new_segment(target) if existing == "stream" else new_table(target)
    client.call("CreateSegment", "pravega.segment.create-exists", ("SegmentAlreadyExists",), segment=name,
                target_rate=0, scale_type=0)


@case("pravega.segment.info")
def test_info_tracks_state(target):
    client, name = new_segment(target, data=[b"abc", b"de"])
    info = client.info(name)
    if (info["exists"], info["is_sealed"], info["is_deleted"], info["write_offset"], info["start_offset"]) != \
            (True, False, False, 21, 0):
        raise client.diverge("pravega.segment.info", "exists, length 21, start 0", client._text(info))
    client.truncate(name, 11)
    client.seal(name)
    info = client.info(name)
    if (info["is_sealed"], info["write_offset"], info["start_offset"]) != (True, 21, 11):
        raise client.diverge("pravega.segment.info", "sealed, length 21, start 11", client._text(info))


@case("pravega.segment.info")
def test_info_of_missing_segment(target):
    Pravega(target).absent(segment_name(target), "pravega.segment.info")


@case("pravega.segment.seal")
def test_seal_twice(target):
    client, name = new_segment(target)
    client.seal(name)
    answer = client.call("SealSegment", "pravega.segment.seal", ("SegmentIsSealed",), segment=name)
    if answer["segment"] != name:
        raise client.diverge("pravega.segment.seal", repr(name), repr(answer["segment"]))


def truncate_outside(client: Pravega, name: str, offset: int) -> cmd.Decoded | None:
    """TruncateSegment outside the segment's range: its SegmentIsTruncated, or None when a negative offset closed the
    connection (Pravega 0.13.0: StreamSegmentTruncateOperation.java:51 refuses it on the connection's thread)."""
    if offset < 0:  # either answer is permitted, so the two servers' answers are no comparison from here
        client.target.beyond_comparison("a truncation at a negative offset: SegmentIsTruncated or a closed "
                                        "connection, both permitted (variant pravega.negative-truncate-closes)")
    rid = client.send("TruncateSegment", segment=name, truncation_offset=offset)
    if offset < 0:
        reply = client.session.recv()
        if reply.ended:
            return None
        return client.expect("pravega.segment.truncate", rid, ("SegmentIsTruncated",),
                             decoded=client.decode(reply, "pravega.segment.truncate"))
    return client.expect("pravega.segment.truncate", rid, ("SegmentIsTruncated",))


@case("pravega.segment.truncate")
@pytest.mark.parametrize("offset", [0, 9, 18])
def test_truncate_within_range(target, offset):
    client, name = new_segment(target, data=[b"a", b"b"])
    client.truncate(name, offset)
    # the start moved to offset: a truncation just below it is outside the range, and its answer names the start
    # (the truncate clause's own answer; StreamSegmentInfo's startOffset is pravega.segment.info's)
    answer = truncate_outside(client, name, offset - 1)
    if answer is None:
        return
    if answer["start_offset"] != offset:
        raise client.diverge("pravega.segment.truncate", f"startOffset {offset}", client._text(answer))


@case("pravega.segment.truncate")
@pytest.mark.parametrize("offset", [19, 2**40, 4, -1], ids=["length+1", "huge", "below-start", "negative"])
def test_truncate_out_of_range(target, offset):
    client, name = new_segment(target, data=[b"a", b"b"])
    client.truncate(name, 9)
    answer = truncate_outside(client, name, offset)
    if answer is None:
        return
    if answer["start_offset"] != 9 or answer["offset"] != offset:
        raise client.diverge("pravega.segment.truncate", f"startOffset 9, offset {offset}", client._text(answer))


@case("pravega.segment.delete")
def test_delete_then_gone(target):
    client, name = new_segment(target, data=[b"x"])
    client.delete(name)
    client.call("DeleteSegment", "pravega.segment.delete", ("NoSuchSegment",), segment=name)
    client.absent(name, "pravega.segment.delete")


@case("pravega.segment.no-such-segment")
@pytest.mark.parametrize("command", ["SealSegment", "TruncateSegment", "UpdateSegmentPolicy", "GetSegmentAttribute",
                                     "UpdateSegmentAttribute", "MergeSegments", "LocateOffset"])
def test_operations_on_missing_segment(target, command):
    if command == "LocateOffset":
        needs_wire_version(target, 17, command)
    client = Pravega(target)
    name = segment_name(target)
    values = {"TruncateSegment": {"truncation_offset": 0}, "UpdateSegmentPolicy": {"target_rate": 0, "scale_type": 0},
              "GetSegmentAttribute": {"attribute_id": uuid.uuid4()},
              "UpdateSegmentAttribute": {"attribute_id": uuid.uuid4(), "new_value": 1, "expected_value": MIN},
              "MergeSegments": {"target": name, "source": name + "-src"},
              "LocateOffset": {"target_offset": 0}}.get(command, {})
    if command != "MergeSegments":
        values["segment"] = name
    client.call(command, "pravega.segment.no-such-segment", ("NoSuchSegment",), **values)
    client.stays_open("pravega.segment.no-such-segment")


@case("pravega.segment.merge")
@pytest.mark.parametrize("target_events", [[], [b"t1", b"t2"]], ids=["empty-target", "target-with-data"])
def test_merge_sealed_source(target, target_events):
    client, dest = new_segment(target, "dst", target_events)
    _, source = new_segment(target, "src", [b"s1", b"s2", b"s3"])
    client.seal(source)
    answer = client.call("MergeSegments", "pravega.segment.merge", ("SegmentsMerged",), target=dest, source=source)
    expected = b"".join(cmd.event(e) for e in target_events + [b"s1", b"s2", b"s3"])
    if answer["new_target_write_offset"] != len(expected) or answer["source"] != source:
        raise client.diverge("pravega.segment.merge", f"newTargetWriteOffset {len(expected)}", client._text(answer))
    if client.read_all(dest, clause_id="pravega.segment.merge") != expected:
        raise client.diverge("pravega.segment.merge", "the target followed by the source", "other bytes")
    client.absent(source, "pravega.segment.merge")


@case("pravega.segment.merge")
def test_merge_without_attribute_list(target):
    client, dest = new_segment(target, "dst")
    _, source = new_segment(target, "src", [b"s"])
    client.seal(source)
    payload = cmd.encode_payload(cmd.CODE["MergeSegments"], {"request_id": 61, "target": dest, "source": source,
                                                             "delegation_token": client.token}, omit_optional=True)
    client.send_frame(cmd.frame(cmd.CODE["MergeSegments"], payload))
    client.expect("pravega.segment.merge", 61, ("SegmentsMerged",))


@case("pravega.segment.merge-batch")
def test_merge_batch(target):
    client, dest = new_segment(target, "dst", [b"t"])
    sources = []
    for i in range(3):
        _, source = new_segment(target, f"src{i}", [b"s%d" % i])
        client.seal(source)
        sources.append(source)
    answer = client.call("MergeSegmentsBatch", "pravega.segment.merge-batch", ("SegmentsBatchMerged",),
                         target=dest, sources=sources)
    got = [(m["source"], m["new_target_write_offset"]) for m in answer["merged"]]
    if got != [(s, 9 + 10 * (i + 1)) for i, s in enumerate(sources)]:
        raise client.diverge("pravega.segment.merge-batch", "each source with the target's length after it", str(got))


@case("pravega.segment.policy")
def test_update_policy(target):
    client, name = new_segment(target)
    client.call("UpdateSegmentPolicy", "pravega.segment.policy", ("SegmentPolicyUpdated",), segment=name,
                target_rate=10, scale_type=1)


@case("pravega.segment.locate-offset")
@pytest.mark.parametrize("wanted", [0, 5, 1000])
def test_locate_offset(target, wanted):
    needs_wire_version(target, 17, "LocateOffset")
    client, name = new_segment(target, data=[b"abcdefgh"])
    answer = client.call("LocateOffset", "pravega.segment.locate-offset", ("OffsetLocated",), segment=name,
                         target_offset=wanted)
    if not 0 <= answer["offset"] <= 16:
        raise client.diverge("pravega.segment.locate-offset", "an offset in 0..16", client._text(answer))


# -- attributes -----------------------------------------------------------------------------------------------------


@case("pravega.attribute.unset")
def test_unset_attribute_is_min(target):
    client, name = new_segment(target)
    value = client.get_attribute(name, uuid.uuid4(), "pravega.attribute.unset")
    if value != MIN:
        raise client.diverge("pravega.attribute.unset", str(MIN), str(value))


@case("pravega.attribute.cas")
@pytest.mark.parametrize("value", [0, 1, -5, 2**63 - 1])
def test_attribute_compare_and_set(target, value):
    client, name = new_segment(target)
    attribute = uuid.uuid4()
    if not client.update_attribute(name, attribute, value, MIN):
        raise client.diverge("pravega.attribute.cas", "success from Long.MIN_VALUE", "false")
    if client.get_attribute(name, attribute) != value:
        raise client.diverge("pravega.attribute.cas", f"value {value}", "another value")
    if client.update_attribute(name, attribute, 99, MIN):
        raise client.diverge("pravega.attribute.cas", "false on a stale expected value", "true")
    if client.get_attribute(name, attribute) != value:
        raise client.diverge("pravega.attribute.cas", f"value still {value}", "changed")
    if not client.update_attribute(name, attribute, 7, value):
        raise client.diverge("pravega.attribute.cas", "success with the current value", "false")


@case("pravega.attribute.cas")
def test_writer_attribute_is_the_event_number(target):
    client, name = new_segment(target)
    writer = client.new_writer(name)
    client.append(writer, [b"x"], 12)
    if client.get_attribute(name, writer) != 12:
        raise client.diverge("pravega.attribute.cas", "the writer's attribute holds event number 12", "another")


@case("pravega.segment.merge")
def test_merge_into_itself_is_refused(target):
    client, name = new_segment(target, data=[b"x"])
    client.seal(name)
    rid = client.send("MergeSegments", target=name, source=name)
    reply = client.session.recv()
    if not reply.ended:
        client.expect("pravega.segment.merge", rid, ("ErrorMessage", "SegmentIsSealed", "OperationUnsupported"),
                      decoded=client.decode(reply, "pravega.segment.merge"))
    check = Pravega(target)
    if check.read_all(name, clause_id="pravega.segment.merge") != cmd.event(b"x"):
        raise check.diverge("pravega.segment.merge", "the segment unchanged", "other bytes")
