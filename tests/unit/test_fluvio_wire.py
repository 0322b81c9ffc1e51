"""Fluvio primitives, version gates and ErrorCode payloads (protocols/fluvio/wire.py, errors.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import errors, messages
from wirecheck.protocols.fluvio.wire import BOOL, BYTES, I32, STRING, U32, Field, FluvioOption, FluvioVec, Struct


def roundtrip(codec, value, version=0):
    out = bytearray()
    codec.write(out, value, version)
    decoded, end = codec.read(bytes(out), 0, version)
    assert end == len(out)
    return decoded, bytes(out)


@pytest.mark.parametrize("length", [0, -1, -32768])
def test_string_length_at_most_zero_is_empty(length):
    data = length.to_bytes(2, "big", signed=True) + b"rest"
    assert STRING.read(data, 0, 0) == ("", 2)


def test_string_rejects_invalid_utf8_and_overruns():
    with pytest.raises(DecodeError, match="UTF-8"):
        STRING.read(b"\x00\x02\xc3\x28", 0, 0)
    with pytest.raises(DecodeError, match="claims"):
        STRING.read(b"\x00\x09abc", 0, 0)


@pytest.mark.parametrize("count", [0, -1, -(2**31)])
def test_vec_count_below_one_is_empty(count):
    assert FluvioVec(I32).read(count.to_bytes(4, "big", signed=True), 0, 0) == ([], 4)


def test_vec_count_beyond_the_data_fails_before_allocating():
    with pytest.raises(DecodeError, match="count"):
        FluvioVec(I32).read(b"\x7f\xff\xff\xff" + b"\0" * 8, 0, 0)


@pytest.mark.parametrize("tag", [2, 0xFF])
def test_option_and_bool_tags_other_than_0_1_fail(tag):
    with pytest.raises(DecodeError):
        FluvioOption(U32).read(bytes([tag, 0, 0, 0, 1]), 0, 0)
    with pytest.raises(DecodeError):
        BOOL.read(bytes([tag]), 0, 0)


@given(st.none() | st.text(max_size=40), st.binary(max_size=40), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=5))
def test_roundtrips(text, blob, ints):
    assert roundtrip(FluvioOption(STRING), text)[0] == text
    assert roundtrip(BYTES, blob)[0] == blob
    assert roundtrip(FluvioVec(I32), ints)[0] == ints


def test_version_gates():
    codec = Struct("S", [Field("a", I32), Field("b", I32, 2), Field("c", I32, 3, 4)])
    value = {"a": 1, "b": 2, "c": 3}
    assert len(roundtrip(codec, value, 0)[1]) == 4
    assert len(roundtrip(codec, value, 2)[1]) == 8
    assert len(roundtrip(codec, value, 4)[1]) == 12
    assert len(roundtrip(codec, value, 5)[1]) == 8


@pytest.mark.parametrize("version,size", [(0, 24), (1, 28), (2, 36), (5, 44)])
def test_produce_response_fields_by_version(version, size):
    body = {"responses": [{"name": "", "partitions": [{"partition_index": 0, "error_code": 0, "base_offset": 0,
                                                        "log_append_time_ms": 0, "log_start_offset": 0}]}],
            "throttle_time_ms": 0}
    out = bytearray()
    messages.PRODUCE_RESPONSE.write(out, body, version)
    assert len(out) == size


def _payload_value(codec):
    name = type(codec).__name__
    if codec is STRING:
        return "x"
    if name == "Plain":
        return 1
    if name == "FluvioOption":
        return None
    if name == "_RecordData":
        return b"v"
    if name == "Struct":
        return {f.name: _payload_value(f.codec) for f in codec.fields}
    raise AssertionError(name)


@pytest.mark.parametrize("code", sorted(errors.VARIANTS))
def test_every_error_code_round_trips_with_its_payload(code):
    payload = {field: _payload_value(codec) for field, codec in errors.VARIANTS[code][1]}
    data = errors.encode(code, **payload)
    value, end = errors.ERROR_CODE.read(data + b"tail", 0, 0)
    assert (value.code, value.payload, end) == (code, payload, len(data))
    assert (len(data) > 2) == (code in errors.WITH_PAYLOAD)


def test_unknown_error_code_tag_fails():
    with pytest.raises(DecodeError, match="unknown ErrorCode"):
        errors.ERROR_CODE.read(b"\x00\x03", 0, 0)


def test_reading_only_the_tag_of_a_payload_variant_desyncs():
    """A9: two bytes are not enough for Other(String): a parser that stops there misreads what follows."""
    data = errors.encode(errors.OTHER, message="beyond") + (7).to_bytes(8, "big")
    value, end = errors.ERROR_CODE.read(data, 0, 0)
    assert value.payload == {"message": "beyond"} and int.from_bytes(data[end:], "big") == 7
