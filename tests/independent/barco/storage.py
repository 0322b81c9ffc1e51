"""In-memory storage for a dev-mode (single broker) Barco node.

Sections 4, 5.4 and 7 of the notes: Murmur3 tokens, range indexes, chunks made of records
``{i64 ts, u32 len, body}`` compressed as one zstd frame with the content checksum, offsets per
(topic, token, range index, generation version).
"""

from __future__ import annotations

import itertools
import struct
import time
from dataclasses import dataclass, field

import zstandard

from . import defects

MIN_INT64 = -(1 << 63)
MAX_INT64 = (1 << 63) - 1
MASK64 = (1 << 64) - 1

CONSUMER_RANGES = 4  # POLAR_CONSUMER_RANGES default
DEV_TOKEN = MIN_INT64  # the only broker of a 1-broker ring owns [MinInt64, MaxInt64]
DEV_GEN_VERSION = 1

MAX_MESSAGE_SIZE = 1024 * 1024  # 1 MiB (section 8)
MAX_GROUP_SIZE = 2 * 1024 * 1024  # 2 MiB (section 8), also the consumer read threshold
MAX_TOPIC_LENGTH = 255


# --------------------------------------------------------------------------------------------
# Murmur3 x64_128, first 64 bits, seed 0, Cassandra flavour (tail bytes sign-extended), section 7


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK64


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k


def _signed_byte(b: int) -> int:
    return b - 256 if b > 127 else b


def murmur3_h1(data: bytes) -> int:
    """Return h1 of Murmur3 x64_128 (seed 0, signed tail bytes) as a signed int64."""
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    length = len(data)
    h1 = h2 = 0
    nblocks = length // 16
    for i in range(nblocks):
        k1 = int.from_bytes(data[i * 16 : i * 16 + 8], "little")
        k2 = int.from_bytes(data[i * 16 + 8 : i * 16 + 16], "little")
        k1 = _rotl((k1 * c1) & MASK64, 31)
        h1 ^= (k1 * c2) & MASK64
        h1 = (_rotl(h1, 27) + h2) & MASK64
        h1 = (h1 * 5 + 0x52DCE729) & MASK64
        k2 = _rotl((k2 * c2) & MASK64, 33)
        h2 ^= (k2 * c1) & MASK64
        h2 = (_rotl(h2, 31) + h1) & MASK64
        h2 = (h2 * 5 + 0x38495AB5) & MASK64
    tail = data[nblocks * 16 :]
    k1 = k2 = 0
    for i in range(len(tail) - 1, 7, -1):
        k2 ^= (_signed_byte(tail[i]) << ((i - 8) * 8)) & MASK64
    if len(tail) > 8:
        k2 = _rotl((k2 * c2) & MASK64, 33)
        h2 ^= (k2 * c1) & MASK64
    for i in range(min(len(tail), 8) - 1, -1, -1):
        k1 ^= (_signed_byte(tail[i]) << (i * 8)) & MASK64
    if tail:
        k1 = _rotl((k1 * c1) & MASK64, 31)
        h1 ^= (k1 * c2) & MASK64
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & MASK64
    return h1 - (1 << 64) if h1 >= (1 << 63) else h1


def range_index_for_token(token: int) -> int:
    """Range index of ``token`` within the dev-mode ring (one broker owning the whole ring).

    The notes (section 7) say the reference overflows here; we compute the intended value:
    the ring is split into CONSUMER_RANGES equal sub-ranges.
    """
    return ((token - MIN_INT64) * CONSUMER_RANGES) >> 64


# --------------------------------------------------------------------------------------------
# records and chunks (section 4)


def encode_records(records: list[tuple[int, bytes]]) -> bytes:
    out = bytearray()
    length_fmt = "<I" if defects.on("record-length-little-endian") else ">I"
    for ts, body in records:
        out += struct.pack(">q", ts)
        out += struct.pack(length_fmt, _length_field(body))
        out += body
    return bytes(out)


def _length_field(body: bytes) -> int:
    if defects.on("record-length-counts-characters"):
        try:
            return len(body.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return len(body)


_COMPRESSOR = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
_COMPRESSOR_NO_CRC = zstandard.ZstdCompressor(write_checksum=False, write_content_size=True)


def compress_chunk(raw: bytes) -> bytes:
    if defects.on("zstd-without-checksum"):
        return _COMPRESSOR_NO_CRC.compress(raw)
    return _COMPRESSOR.compress(raw)


@dataclass
class Chunk:
    start_offset: int
    records: list[tuple[int, bytes]]
    payload: bytes  # one zstd frame

    @property
    def end_offset(self) -> int:
        return self.start_offset + len(self.records)


@dataclass(frozen=True)
class ReaderKey:
    topic: str
    token: int
    range_index: int
    gen_version: int


@dataclass
class Log:
    chunks: list[Chunk] = field(default_factory=list)
    next_offset: int = 0

    def first_chunk_ending_after(self, offset: int) -> Chunk | None:
        for chunk in self.chunks:  # small in-memory logs; a linear scan keeps it obvious
            if chunk.end_offset > offset:
                return chunk
        return None


class Store:
    """All logs of this broker, keyed by reader key."""

    def __init__(self) -> None:
        self.logs: dict[ReaderKey, Log] = {}
        self._round_robin = itertools.count()

    def range_for_key(self, key: bytes) -> int:
        if not key:
            # no key: no hashing, round-robin over the ranges (first use -> range 0)
            return next(self._round_robin) % CONSUMER_RANGES
        return range_index_for_token(murmur3_h1(key))

    def append(self, topic: str, key: bytes, bodies: list[bytes], timestamp: int | None) -> Chunk:
        """Store one produce request as one chunk; return it."""
        ts = timestamp if timestamp is not None else time.time_ns() // 1000
        rkey = ReaderKey(topic, DEV_TOKEN, self.range_for_key(key), DEV_GEN_VERSION)
        log = self.logs.setdefault(rkey, Log())
        records = [(ts, body) for body in bodies]
        chunk = Chunk(log.next_offset, records, compress_chunk(encode_records(records)))
        log.chunks.append(chunk)
        log.next_offset = chunk.end_offset
        return chunk

    def readers_of(self, topic: str) -> list[ReaderKey]:
        return [k for k in self.logs if k.topic == topic]


def valid_topic(topic: bytes) -> bool:
    """Our topic rule (the notes leave it open, sections 10.13 and 11)."""
    if not topic or len(topic) > MAX_TOPIC_LENGTH:
        return False
    if b"/" in topic or b"\\" in topic or b"\x00" in topic or b".." in topic:
        return False
    try:
        text = topic.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.isprintable()
