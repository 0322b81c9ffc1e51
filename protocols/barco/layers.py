"""Scapy layers for Barco: the binary producer frame and its bodies, stored records and the binary poll
response. For humans (transcripts, captures, vector tests); the hot paths use ``wire``, and tests/vectors
checks both against the same bytes.

``BarcoFrame`` computes its body length and its head CRC (IEEE over bytes 0..8) when they are left None, so
``BarcoFrame(stream_id=1) / Produce(topic=b"t1", messages=[Message(data=b"hello")])`` is a valid frame.
"""

from __future__ import annotations

import struct
import zlib

from scapy.fields import (ByteEnumField, ByteField, ConditionalField, FieldLenField, FlagsField, IntField,
                          PacketListField, ShortField, SignedIntField, SignedLongField, StrField, StrLenField,
                          XIntField)
from scapy.packet import Packet, Raw, bind_layers

from wirecheck.protocols.barco import wire


class BarcoFrame(Packet):
    name = "Barco frame"
    fields_desc = [
        ByteField("version", wire.VERSION),
        FlagsField("flags", 0, 8, ["withTimestamp"]),
        ShortField("stream_id", 0),
        ByteEnumField("opcode", wire.STARTUP, wire.OPCODES),
        IntField("body_length", None),
        XIntField("crc", None),
    ]

    def post_build(self, pkt, pay):
        if self.body_length is None:
            pkt = pkt[:5] + struct.pack(">I", len(pay)) + pkt[9:]
        if self.crc is None:
            pkt = pkt[:9] + struct.pack(">I", zlib.crc32(pkt[:9]) & 0xFFFFFFFF)
        return pkt + pay

    def extract_padding(self, s):
        return s[: self.body_length], s[self.body_length :]


class Message(Packet):
    """One producer message: ``u32 length`` then its bytes."""

    name = "message"
    fields_desc = [FieldLenField("length", None, length_of="data", fmt="!I"),
                   StrLenField("data", b"", length_from=lambda p: p.length)]

    def extract_padding(self, s):
        return b"", s


def _timestamped(pkt) -> bool:
    frame = pkt.underlayer
    return frame is not None and int(frame.flags) & wire.FLAG_TIMESTAMP


class Produce(Packet):
    name = "PRODUCE"
    fields_desc = [
        ConditionalField(SignedLongField("timestamp", 0), _timestamped),
        FieldLenField("key_length", None, length_of="key", fmt="B"),
        StrLenField("key", b"", length_from=lambda p: p.key_length),
        FieldLenField("topic_length", None, length_of="topic", fmt="B"),
        StrLenField("topic", b"", length_from=lambda p: p.topic_length),
        PacketListField("messages", [], Message),
    ]


class Error(Packet):
    """ERROR: a code byte, then the message as UTF-8 with no length prefix (its length is body length - 1)."""

    name = "ERROR"
    fields_desc = [ByteEnumField("code", 0, wire.ERROR_CODES), StrField("message", b"")]


bind_layers(BarcoFrame, Produce, opcode=wire.PRODUCE)
bind_layers(BarcoFrame, Error, opcode=wire.ERROR)


class Record(Packet):
    """A stored record (notes §4): ``i64 timestamp µs | u32 length | body``."""

    name = "record"
    fields_desc = [SignedLongField("timestamp", 0), FieldLenField("length", None, length_of="body", fmt="!I"),
                   StrLenField("body", b"", length_from=lambda p: p.length)]

    def extract_padding(self, s):
        return b"", s


class Records(Packet):
    """The decompressed content of one chunk: records until the bytes run out (no count, no terminator)."""

    name = "records"
    fields_desc = [PacketListField("records", [], Record)]


class PollItem(Packet):
    name = "poll item"
    fields_desc = [
        SignedLongField("token", 0),
        ByteField("range_index", 0),
        IntField("version", 1),
        FieldLenField("topic_length", None, length_of="topic", fmt="B"),
        StrLenField("topic", b"", length_from=lambda p: p.topic_length),
        SignedLongField("offset", 0),
        FieldLenField("chunk_length", None, length_of="chunk", fmt="!i"),  # "payload" is scapy's own
        StrLenField("chunk", b"", length_from=lambda p: max(0, p.chunk_length)),
    ]

    def extract_padding(self, s):
        return b"", s


class PollResponse(Packet):
    """The binary poll body: ``u16`` item count (a number of items, not a byte length), then the items."""

    name = "poll response"
    fields_desc = [FieldLenField("count", None, count_of="items", fmt="!H"),
                   PacketListField("items", [], PollItem, count_from=lambda p: p.count)]


def message_layers() -> dict[str, type[Packet]]:
    """Every message layer by name (the contract tests round-trip each one). A PRODUCE body reads its
    timestamp only under a frame whose flags say so, so "BarcoFrame" covers bodies in their frames too."""
    return {cls.__name__: cls for cls in (BarcoFrame, Message, Produce, Error, Record, Records, PollItem,
                                          PollResponse)}


def dissect(answer: bytes, request: bytes | None = None) -> Packet:
    """A binary producer answer as a layer (a response says what it is: no request needed)."""
    try:
        return BarcoFrame(answer)
    except Exception:  # hostile bytes: show them raw
        return Raw(answer)


__all__ = ["BarcoFrame", "Error", "Message", "PollItem", "PollResponse", "Produce", "Record", "Records",
           "SignedIntField", "dissect"]
