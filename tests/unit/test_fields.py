"""The shared field codecs (protocols/fields.py): varints, length-prefixed values, arrays, tagged sections."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError


@given(st.integers(0, 2**32 - 1))
def test_uvarint_round_trip(value):
    data = f.uvarint_bytes(value)
    assert len(data) <= 5
    assert f.read_uvarint(data + b"\xff", 0) == (value, len(data))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value):
    out = bytearray()
    f.VARLONG.write(out, value)
    assert f.VARLONG.read(bytes(out), 0) == (value, len(out))


def test_overlong_and_oversized_varints_are_rejected():
    with pytest.raises(DecodeError, match="overlong"):
        f.read_uvarint(b"\x80\x80\x80\x80\x80\x00", 0)
    with pytest.raises(DecodeError, match="32 bits"):
        f.read_uvarint(b"\xff\xff\xff\xff\x7f", 0)
    with pytest.raises(DecodeError, match="truncated"):
        f.read_uvarint(b"\x80", 0)


@pytest.mark.parametrize("compact", [False, True])
def test_strings_null_and_lengths(compact):
    nullable = f.string_codec(compact, nullable=True)
    strict = f.string_codec(compact, nullable=False)
    out = bytearray()
    nullable.write(out, None)
    assert nullable.read(bytes(out), 0) == (None, len(out))
    with pytest.raises(DecodeError, match="non-nullable"):
        strict.read(bytes(out), 0)
    out = bytearray()
    strict.write(out, "h\u00e9")
    assert strict.read(bytes(out), 0) == ("h\u00e9", len(out))
    with pytest.raises(DecodeError, match="claims"):
        strict.read(bytes(out[:-1]), 0)


def test_negative_length_other_than_null_is_rejected():
    with pytest.raises(DecodeError, match="negative length -2"):
        f.string_codec(False, True).read(b"\xff\xfe", 0)
    with pytest.raises(DecodeError, match="negative length -2"):
        f.bytes_codec(False, True).read(b"\xff\xff\xff\xfe", 0)


def test_invalid_utf8_is_rejected_with_offset():
    with pytest.raises(DecodeError) as caught:
        f.string_codec(False, False).read(b"\x00\x02\xc3\x28", 0)
    assert caught.value.offset == 2


def test_hostile_array_count_fails_before_allocating():
    array = f.ArrayCodec("items", f.INT32, f.INT32, nullable=False, item_min_size=4)
    with pytest.raises(DecodeError, match="claims 2147483647 elements"):
        array.read(b"\x7f\xff\xff\xff" + b"\x00" * 8, 0)
    with pytest.raises(DecodeError, match="negative count -2"):
        array.read(b"\xff\xff\xff\xfe", 0)


def test_errors_carry_the_path_of_nested_elements():
    inner = f.ArrayCodec("inner", f.INT16, f.INT32, nullable=False, item_min_size=1)
    outer = f.ArrayCodec("outer", inner, f.INT32, nullable=False, item_min_size=4)
    data = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x02" + b"\x00\x01" + b"\x00"  # second int16 truncated
    with pytest.raises(DecodeError) as caught:
        outer.read(data, 0)
    assert caught.value.path == ["[0]", "[1]"]
    assert caught.value.offset == 10


def test_tagged_section_round_trip_and_order():
    out = bytearray()
    f.write_tagged_section(out, [(0, b"\x01"), (5, b"abc")])
    entries, end = f.read_tagged_section(bytes(out), 0)
    assert [(t, p) for t, p, _ in entries] == [(0, b"\x01"), (5, b"abc")] and end == len(out)
    descending = bytearray()
    f.write_tagged_section(descending, [(5, b""), (1, b"")])
    with pytest.raises(DecodeError, match="ascending"):
        f.read_tagged_section(bytes(descending), 0)
    with pytest.raises(DecodeError, match="claims 9 bytes"):
        f.read_tagged_section(b"\x01\x00\x09ab", 0)


def test_codec_field_wraps_a_codec_for_scapy():
    from scapy.packet import Packet

    class Demo(Packet):
        fields_desc = [f.CodecField("label", "x", f.string_codec(True, True)), f.CodecField("n", 0, f.VARINT)]

    packet = Demo(label="abc", n=-3)
    assert bytes(packet) == b"\x04abc\x05"
    assert Demo(b"\x00\x05").label is None and Demo(b"\x00\x05").n == -3
