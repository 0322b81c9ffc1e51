"""Barco binary producer values for Hypothesis: every frame and request (``protocols.barco.wire``), for
property-based cases, which shrink a failure to one frame."""

from __future__ import annotations

from hypothesis import strategies as st

from wirecheck.protocols.barco import wire

INVALID_TOPICS = (b"", b"..", b"a/b", b"a\\b", b"nul\x00", b"\xff\xfe", b"../escape", b"tab\tname")

# -- Hypothesis strategies -----------------------------------------------------------------------------------

topic_names = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/\\."),
                      min_size=1, max_size=40)
partition_keys = st.binary(max_size=32)
message_lists = st.lists(st.binary(max_size=256), min_size=1, max_size=8)
stream_ids = st.integers(0, 0xFFFF)
timestamps = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))


def layer_examples() -> dict:
    """Every message layer (protocols.barco.layers.message_layers) -> a strategy of built layers."""
    from wirecheck.protocols.barco import layers as L

    small = st.binary(max_size=24)
    messages = st.lists(small.map(lambda data: L.Message(data=data)), max_size=3)
    names = st.binary(max_size=12)
    produce = st.builds(L.Produce, key=names, topic=names, messages=messages)
    error = st.builds(L.Error, code=st.sampled_from(sorted(wire.ERROR_CODES)), message=st.binary(max_size=40))
    record = st.builds(L.Record, timestamp=st.integers(-(2**63), 2**63 - 1), body=small)
    item = st.builds(L.PollItem, token=st.integers(-(2**63), 2**63 - 1), range_index=st.integers(0, 255),
                     version=st.integers(0, 2**32 - 1), topic=names, offset=st.integers(-(2**63), 2**63 - 1),
                     chunk=small)

    @st.composite
    def frames(draw):
        frame = L.BarcoFrame(stream_id=draw(stream_ids))
        body = draw(st.sampled_from(["empty", "produce", "timestamped", "error"]))
        if body == "empty":
            frame.opcode = draw(st.sampled_from([wire.STARTUP, wire.READY, wire.HEARTBEAT]))
            return frame
        if body == "error":
            return frame / draw(error)
        if body == "timestamped":
            frame.flags = wire.FLAG_TIMESTAMP
            return frame / L.Produce(timestamp=draw(st.integers(-(2**63), 2**63 - 1)), key=draw(names),
                                     topic=draw(names), messages=draw(messages))
        return frame / draw(produce)

    return {"BarcoFrame": frames(), "Message": small.map(lambda data: L.Message(data=data)), "Produce": produce,
            "Error": error, "Record": record, "Records": st.lists(record, max_size=3).map(lambda r: L.Records(records=r)),
            "PollItem": item, "PollResponse": st.lists(item, max_size=3).map(lambda i: L.PollResponse(items=i))}


@st.composite
def produce_frames(draw, topic: str | None = None) -> tuple[bytes, wire.Produce, int]:
    """A valid PRODUCE frame, what it carries and its stream id."""
    produce = wire.Produce(topic=(topic or draw(topic_names)).encode(), key=draw(partition_keys),
                           messages=draw(message_lists), timestamp=draw(timestamps))
    sid = draw(stream_ids)
    return wire.produce(produce.topic, produce.messages, produce.key, sid, produce.timestamp), produce, sid


@st.composite
def control_frames(draw) -> tuple[bytes, int, int]:
    """STARTUP or HEARTBEAT (optionally with a body, D6): (frame, opcode, stream id)."""
    op = draw(st.sampled_from([wire.STARTUP, wire.HEARTBEAT]))
    sid = draw(stream_ids)
    return wire.frame(op, draw(st.binary(max_size=16)), sid), op, sid


@st.composite
def unknown_op_frames(draw) -> tuple[bytes, int]:
    op = draw(st.integers(0, 255).filter(lambda o: o not in (wire.PRODUCE, wire.HEARTBEAT, wire.STARTUP)))
    sid = draw(stream_ids)
    return wire.frame(op, draw(st.binary(max_size=32)), sid), sid


@st.composite
def invalid_produce_bodies(draw, topic: str) -> tuple[str, bytes]:
    """(what is wrong, body) for a PRODUCE the target must refuse with ERROR(0)."""
    kind = draw(st.sampled_from(["trailing", "overrun", "barco-no-messages", "bad-topic", "truncated"]))
    messages = draw(message_lists)
    body = wire.produce_body(topic, messages)
    if kind == "trailing":
        body += draw(st.binary(min_size=1, max_size=3))
    elif kind == "overrun":
        body = body[:-1] if messages[-1] else body + b"\x00\x00\x00\x05ab"
        if not messages[-1]:
            kind = "trailing"
    elif kind == "barco-no-messages":
        body = wire.produce_body(topic, [])
    elif kind == "bad-topic":
        body = wire.produce_body(draw(st.sampled_from(INVALID_TOPICS)), messages)
    else:
        body = bytes([200]) + b"k" * draw(st.integers(0, 100))
    return kind, body
