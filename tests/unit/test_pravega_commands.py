"""The Pravega command table and codec: every command round-trips, every cut inside the required fields fails,
optional trailing fields default, modified UTF-8 follows the JDK's readUTF/writeUTF."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega import layers, mutf8
from wirecheck.strategies.pravega import command_values

NAMES = sorted(cmd.BY_NAME)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_command_round_trips(name, data):
    values = data.draw(command_values(name))
    frame = cmd.encode(name, values)
    decoded = cmd.decode(frame)
    assert (decoded.name, decoded.fields, decoded.trailing) == (name, values, 0)
    assert bytes(layers.PravegaFrame() / layers.LAYERS[name](**values)) == frame


@pytest.mark.parametrize("name", [n for n in NAMES if cmd.BY_NAME[n].fields])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_cut_inside_the_required_fields_does_not_decode(name, data):
    values = data.draw(command_values(name))
    code = cmd.CODE[name]
    required = cmd.encode_payload(code, values, omit_optional=True)
    if cmd.BY_NAME[name].fields[-1].codec in (cmd.REST, cmd.ITERATOR_ARGS) or not required:
        return  # the last field takes whatever is left: every cut decodes
    cut = data.draw(st.integers(0, len(required) - 1))
    with pytest.raises(DecodeError):
        cmd.decode_payload(code, required[:cut])


def test_optional_fields_take_their_defaults():
    payload = cmd.encode_payload(cmd.CODE["StreamSegmentInfo"], {
        "request_id": 1, "segment": "s", "exists": True, "is_sealed": False, "is_deleted": False,
        "last_modified": 0, "write_offset": 5}, omit_optional=True)
    assert cmd.decode_payload(cmd.CODE["StreamSegmentInfo"], payload)["start_offset"] == 0  # A25: 0, not -1
    payload = cmd.encode_payload(cmd.CODE["AuthTokenCheckFailed"], {"request_id": 1}, omit_optional=True)
    decoded = cmd.decode_payload(cmd.CODE["AuthTokenCheckFailed"], payload)
    assert (decoded["server_stack_trace"], decoded["error_code"]) == ("", -1)


def test_unknown_codes_and_lying_lengths():
    with pytest.raises(DecodeError):
        cmd.decode(b"\x00\x00\x00\x36\x00\x00\x00\x00")  # 54: retired
    with pytest.raises(DecodeError):
        cmd.decode(cmd.encode("KeepAlive")[:4] + b"\x00\x00\x00\x01")
    assert all(code not in cmd.COMMANDS for code in cmd.RETIRED)


def test_empty_table_key_has_no_version_on_the_wire():
    out = bytearray()
    cmd.TABLE_KEY.write(out, (b"", 7))
    assert bytes(out) == bytes.fromhex("0000000c00000000")  # payloadSize still claims 12 (A18)
    assert cmd.TABLE_KEY.read(bytes(out), 0) == ((b"", cmd.NO_VERSION), 8)


@given(st.text())
def test_modified_utf8_round_trips(text):
    data = mutf8.encode(text)
    assert b"\x00" not in data and not any(0xF0 <= b for b in data)
    assert mutf8.decode(data) == text


@pytest.mark.parametrize("bad", [b"\xf0\x9f\x98\x80", b"\x80", b"\xc3", b"\xe2\x82", b"\xff"])
def test_modified_utf8_rejects_what_readutf_rejects(bad):
    with pytest.raises(DecodeError):
        mutf8.decode(b"a" + bad)


def test_modified_utf8_accepts_raw_nul_and_overlong_forms():
    assert mutf8.decode(b"a\x00b") == "a\0b"
    assert mutf8.decode(b"\xc1\x81\xe0\x81\x81") == "AA"
