"""Pravega segment-store values for Hypothesis: every command's fields from its codec
(``protocols.pravega.commands``), and harmless valid requests, for property-based and stateful cases (they
shrink a failure to one frame)."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

from wirecheck.protocols.fields import BOOL, UUID
from wirecheck.protocols.pravega import commands as cmd

KEEPALIVE = cmd.encode("KeepAlive")


# -- Hypothesis: every command's fields from its codec ------------------------------------------------------------


def _sized_binary(max_size: int):
    return st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=n, max_size=n))


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=24)
uuids = st.builds(lambda n: uuid.UUID(int=n), st.integers(0, 2**128 - 1))
longs = st.integers(-(2**63), 2**63 - 1)
ints = st.integers(-(2**31), 2**31 - 1)
table_keys = st.tuples(_sized_binary(16).filter(bool), st.sampled_from([cmd.NO_VERSION, cmd.NOT_EXISTS, 0, 31]))
table_entries = st.lists(st.tuples(_sized_binary(16).filter(bool), st.sampled_from([cmd.NO_VERSION, cmd.NOT_EXISTS]),
                                   _sized_binary(32)), max_size=4)


def event_payloads(max_size: int = 64):
    return _sized_binary(max_size)


def _codec_strategy(codec):
    if codec is cmd.STR:
        return names
    if codec is UUID:
        return uuids
    if codec is BOOL:
        return st.booleans()
    if codec is cmd.I8:
        return st.integers(-128, 127)
    if codec is cmd.I32:
        return ints
    if codec is cmd.I64:
        return longs
    if codec in (cmd.BLOB, cmd.LENIENT_BLOB, cmd.REST, cmd.EVENT):
        return _sized_binary(48)
    if codec is cmd.TABLE_ENTRIES:
        return table_entries
    if codec is cmd.TABLE_KEYS:
        return st.lists(table_keys, max_size=4)
    if codec is cmd.VERSIONS:
        return st.lists(longs, max_size=4)
    if codec is cmd.STRINGS:
        return st.lists(names, max_size=3)
    if codec is cmd.ITERATOR_ARGS:
        return st.fixed_dictionaries({p: _sized_binary(8) for p in cmd.IteratorArgs.PARTS})
    if codec is cmd.ATTRIBUTE_UPDATES:
        return st.lists(st.fixed_dictionaries({"attribute_id": uuids, "update_type": st.sampled_from([1, 4]),
                                               "new_value": longs, "old_value": longs}), max_size=2)
    if codec is cmd.MERGED_SOURCES:
        return st.lists(st.fixed_dictionaries({"source": names, "new_target_write_offset": longs}), max_size=2)
    if codec is cmd.CHUNKS:
        return st.lists(st.fixed_dictionaries({"length_in_metadata": longs, "length_in_storage": longs,
                                               "start_offset": longs, "chunk_name": names,
                                               "exists_in_storage": st.booleans()}), max_size=2)
    raise ValueError(f"no strategy for codec {codec!r}")


def command_values(name: str):
    """A dict of valid field values for the named command (any command: requests, replies, embedded)."""
    command = cmd.BY_NAME[name]
    return st.fixed_dictionaries({f.name: _codec_strategy(f.codec) for f in command.fields})


def layer_examples() -> dict:
    """Every message layer (protocols.pravega.layers.message_layers) -> a strategy of built payload layers."""
    from wirecheck.protocols.pravega import layers

    return {name: command_values(name).map(lambda values, cls=cls: cls(**values))
            for name, cls in layers.message_layers().items()}


@st.composite
def request_frames(draw, segment: str, table: str) -> tuple[str, bytes]:
    """(command name, frame) of a harmless valid request about ``segment`` / ``table`` (no state changes)."""
    rid = draw(st.integers(1, 2**62))
    choice = draw(st.sampled_from(["info", "read", "attribute", "table-read", "table-info", "keepalive"]))
    if choice == "info":
        return "GetStreamSegmentInfo", cmd.encode("GetStreamSegmentInfo", request_id=rid, segment=segment,
                                                  delegation_token="")
    if choice == "read":
        return "ReadSegment", cmd.encode("ReadSegment", segment=segment, offset=0,
                                         suggested_length=draw(ints), delegation_token="", request_id=rid)
    if choice == "attribute":
        return "GetSegmentAttribute", cmd.encode("GetSegmentAttribute", request_id=rid, segment=segment,
                                                 attribute_id=draw(uuids), delegation_token="")
    if choice == "table-read":
        return "ReadTable", cmd.encode("ReadTable", request_id=rid, segment=table, delegation_token="",
                                       keys=draw(st.lists(table_keys, max_size=3)))
    if choice == "table-info":
        return "GetTableSegmentInfo", cmd.encode("GetTableSegmentInfo", request_id=rid, segment=table,
                                                 delegation_token="")
    return "KeepAlive", KEEPALIVE
