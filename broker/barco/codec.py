"""The byte formats the broker writes and reads, written here independently of protocols/barco (the suite's
codec), so that a misreading of the notes shows up as a disagreement between the two.

Binary producer frame: 13-byte header ``version u8, flags u8, stream u16, op u8, length u32, crc u32`` (CRC-32
IEEE of the first nine bytes), then the body. Stored records: ``ts i64 µs, length u32, body``. Poll response:
``count u16`` then per chunk ``token i64, range u8, version u32, topic (u8 length), offset i64, payload (i32
length)``.
"""

from __future__ import annotations

import struct
import zlib

import zstandard

OP_STARTUP, OP_READY, OP_ERROR, OP_PRODUCE, OP_PRODUCE_RESPONSE, OP_HEARTBEAT = range(1, 7)
HEAD = struct.Struct("!BBHBI")
HEAD_SIZE = 13
TIMESTAMP_FLAG = 1
MAX_MESSAGE = 1048576
MAX_FRAME_BODY = MAX_MESSAGE + 8 + 2 + 2 * 255
ERROR_LIMIT = 512


class Malformed(Exception):
    pass


class BadLengths(Malformed):
    """The message lengths of a messages part do not add up to its size (D3)."""


def encode_frame(op: int, stream: int, body: bytes = b"", crc_over: int = 9) -> bytes:
    head = HEAD.pack(1, 0, stream, op, len(body))
    return head + (zlib.crc32(head[:crc_over]) & 0xFFFFFFFF).to_bytes(4, "big") + body


def error_frame(stream: int, message: str, code: int = 0, crc_over: int = 9, capped: bool = True,
                prefixed: bool = False) -> bytes:
    text = message.encode()[: ERROR_LIMIT - 1] if capped else message.encode()  # the Go client's 512-byte buffer
    if prefixed:  # fault error-length-prefixed: a uint16 length before the message, which §2.5 has none of
        text = text[: ERROR_LIMIT - 3] if capped else text
        text = len(text).to_bytes(2, "big") + text
    return encode_frame(OP_ERROR, stream, bytes([code]) + text, crc_over)


def decode_head(head: bytes) -> tuple[int, int, int, int, int, bool]:
    """(version, flags, stream, op, length, crc matches)."""
    version, flags, stream, op, length = HEAD.unpack_from(head)
    return version, flags, stream, op, length, zlib.crc32(head[:9]) & 0xFFFFFFFF == int.from_bytes(head[9:13], "big")


def decode_produce(body: bytes, flags: int, check_lengths: bool = True):
    """(timestamp or None, key, topic, [messages]); Malformed names what is wrong."""
    view = memoryview(body)
    at = 0
    timestamp = None
    if flags & TIMESTAMP_FLAG:
        if len(view) < 8:
            raise Malformed("EOF in the timestamp")
        timestamp = int.from_bytes(view[:8], "big", signed=True)
        at = 8
    parts = []
    for _ in range(2):
        if at >= len(view) or at + 1 + view[at] > len(view):
            raise Malformed("EOF in the partition key or the topic")
        parts.append(bytes(view[at + 1 : at + 1 + view[at]]))
        at += 1 + view[at]
    key, topic = parts
    return timestamp, key, topic, split_framed(view[at:], check_lengths)


def split_framed(view, check_lengths: bool = True) -> list[bytes]:
    messages, at, size = [], 0, len(view)
    while at + 4 <= size:
        length = int.from_bytes(view[at : at + 4], "big")
        if at + 4 + length > size:
            raise BadLengths(f"message length {length} runs past the body")
        messages.append(bytes(view[at + 4 : at + 4 + length]))
        at += 4 + length
    if at != size and check_lengths:
        raise BadLengths(f"{size - at} bytes left after the last message")
    return messages


def topic_problem(topic: bytes, notes_rule_only: bool = False) -> str | None:
    """D5: 1-255 bytes of UTF-8 without '/', '\\', '..' or control characters (NUL among them). The notes' own
    rule (``notes_rule_only``, a variant) leaves out the UTF-8 and control-character checks but NUL."""
    if not 0 < len(topic) <= 255:
        return "Invalid topic: length"
    if notes_rule_only:
        return "Invalid topic: forbidden characters" if any(s in topic for s in (b"..", b"/", b"\\", b"\x00")) else None
    try:
        name = topic.decode()
    except UnicodeDecodeError:
        return "Invalid topic: not UTF-8"
    if ".." in name or any(c in name for c in "/\\") or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "Invalid topic: forbidden characters"
    return None


def encode_records(records: list[tuple[int, bytes]]) -> bytes:
    pack = struct.Struct("!qI").pack
    return b"".join(pack(ts, len(body)) + body for ts, body in records)


def compress(data: bytes, checksum: bool = True) -> bytes:
    return zstandard.ZstdCompressor(level=3, write_checksum=checksum).compress(data)


#: a chunk's records: at most one frame body of 4-byte (empty) messages, each re-framed with a 12-byte header
MAX_RECORDS_BYTES = 3 * MAX_FRAME_BODY


def decompress_records(payload: bytes) -> list[tuple[int, bytes]]:
    # max_output_size: frames streamed without a declared content size decode too (notes §4)
    data = zstandard.ZstdDecompressor().decompress(payload, max_output_size=MAX_RECORDS_BYTES)
    out, at = [], 0
    while at < len(data):
        ts, length = struct.unpack_from("!qI", data, at)
        out.append((ts, data[at + 12 : at + 12 + length]))
        at += 12 + length
    return out


def poll_body(items) -> bytes:
    """items: (token, range, version, topic, offset, payload)."""
    out = [len(items).to_bytes(2, "big")]
    for token, range_index, version, topic, offset, payload in items:
        out.append(struct.pack("!qBIB", token, range_index, version, len(topic)) + topic
                   + struct.pack("!qi", offset, len(payload)) + payload)
    return b"".join(out)


# -- partition key -> token: MurmurHash3 x64_128 h1, seed 0, tail bytes sign-extended (Cassandra) --------------

_M = 0xFFFFFFFFFFFFFFFF


def _rot(v: int, n: int) -> int:
    return ((v << n) | (v >> (64 - n))) & _M


def _mix(v: int) -> int:
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        v = ((v ^ (v >> 33)) * mult) & _M
    return v ^ (v >> 33)


def token_of(key: bytes) -> int:
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    a = b = 0
    full = len(key) - len(key) % 16
    for at in range(0, full, 16):
        k1, k2 = struct.unpack_from("<QQ", key, at)
        a ^= (_rot((k1 * c1) & _M, 31) * c2) & _M
        a = ((_rot(a, 27) + b) * 5 + 0x52DCE729) & _M
        b ^= (_rot((k2 * c2) & _M, 33) * c1) & _M
        b = ((_rot(b, 31) + a) * 5 + 0x38495AB5) & _M
    rest = key[full:]
    lanes = [0, 0]
    for i, byte in enumerate(rest):
        lanes[i // 8] ^= ((byte ^ 0x80) - 0x80 << (8 * (i % 8))) & _M
    if len(rest) > 8:
        b ^= (_rot((lanes[1] * c2) & _M, 33) * c1) & _M
    if rest:
        a ^= (_rot((lanes[0] * c1) & _M, 31) * c2) & _M
    a ^= len(key)
    b ^= len(key)
    a = (a + b) & _M
    b = (b + a) & _M
    a, b = _mix(a), _mix(b)
    a = (a + b) & _M
    return a - (1 << 64) if a >> 63 else a
