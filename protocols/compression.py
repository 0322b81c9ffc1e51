"""Record-batch compression codecs (attributes bits 0-2), each through its well-kept library.

Kafka defined them; Fluvio's batches use the same codes and, for gzip, lz4 and zstd, the same framings (its
snappy framing differs and is Fluvio's own, in protocols/fluvio/records.py). Kafka's framings:
Codes (protocol guide, "Record Batch"): 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd (zstd only in magic 2,
KIP-110). Framings:

* gzip: RFC 1952 members (stdlib ``zlib``).
* snappy: Kafka's Java client wraps snappy in xerial's ``SnappyOutputStream`` framing for every magic
  (``SnappyFactory.wrapForOutput``; kafka-python's ``snappy_encode`` defaults to the same): an 8-byte magic
  ``\\x82SNAPPY\\x00``, int32 version 1, int32 compatible 1, then int32-length-prefixed raw snappy blocks.
  xerial's reader also accepts a plain raw snappy block, and librdkafka writes raw blocks, so we decode both
  and encode xerial. (Decision: the brief suggested raw-only for v2; the Java and Python clients disagree.)
* lz4: the standard LZ4 frame format (KIP-57) for magic 1 and 2. Magic 0 used a broken header checksum
  (KAFKA-3160); we do not write it.
* zstd: a zstd frame (``zstandard``).

Every decompressor is bounded by ``limit`` bytes of output: a hostile ratio cannot exhaust memory.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
DEFAULT_LIMIT = 64 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024  # xerial's default block size


class CompressionError(ValueError):
    """Compressed data that does not decompress (corrupt, truncated, unknown codec, over the limit)."""


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
        return compressor.compress(data) + compressor.flush()
    if codec == SNAPPY:
        out = bytearray(_XERIAL_HEADER)
        for start in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == LZ4:
        return lz4.frame.compress(data)
    if codec == ZSTD:
        return zstandard.ZstdCompressor(level=3).compress(data)
    raise CompressionError(f"unknown compression codec {codec}")


def _snappy_raw(block: bytes, limit: int) -> bytes:
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except Exception as exc:  # cramjam raises its own error types
        raise CompressionError(f"snappy: {exc}") from None
    if size > limit:
        raise CompressionError(f"snappy block claims {size} bytes, over the limit {limit}")
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as exc:
        raise CompressionError(f"snappy: {exc}") from None


def _bounded(name: str, run, decompressor, limit: int, errors) -> bytes:
    """One streaming decompressor call asked for at most ``limit`` + 1 bytes: more is over the limit, and a
    decompressor that has not reached the end of its stream saw truncated input."""
    try:
        out = run()
    except errors as exc:
        raise CompressionError(f"{name}: {exc}") from None
    if len(out) > limit:
        raise CompressionError(f"{name} output over the limit {limit}")
    if not decompressor.eof:
        raise CompressionError(f"{name}: truncated stream")
    return out


def read_zstd(data: bytes, limit: int, across_frames: bool) -> bytes:
    """zstd-decompress at most ``limit`` bytes (more is an error, never allocated beyond limit + 1); the
    frame's checksum is verified when it has one. ``across_frames``: all concatenated frames, or the first."""
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=across_frames)
        out = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise CompressionError(f"zstd: {exc}") from None
    if len(out) > limit:
        raise CompressionError(f"zstd output over the limit {limit}")
    return out


def decompress(codec: int, data: bytes, limit: int = DEFAULT_LIMIT) -> bytes:
    data = bytes(data)
    if codec == NONE:
        return data
    if codec == GZIP:
        decompressor = zlib.decompressobj(47)  # 32+15: gzip or zlib header, auto-detected
        return _bounded("gzip", lambda: decompressor.decompress(data, limit + 1), decompressor, limit, zlib.error)
    if codec == SNAPPY:
        if not data.startswith(XERIAL_MAGIC):
            return _snappy_raw(data, limit)
        pos, out = len(_XERIAL_HEADER), bytearray()
        if len(data) < pos:
            raise CompressionError("snappy: truncated xerial header")
        while pos < len(data):
            if pos + 4 > len(data):
                raise CompressionError("snappy: truncated xerial block length")
            (size,) = struct.unpack_from(">i", data, pos)
            if size < 0 or pos + 4 + size > len(data):
                raise CompressionError(f"snappy: xerial block of {size} bytes overruns the data")
            out += _snappy_raw(data[pos + 4 : pos + 4 + size], limit - len(out))
            pos += 4 + size
        return bytes(out)
    if codec == LZ4:
        decompressor = lz4.frame.LZ4FrameDecompressor()
        return _bounded("lz4", lambda: decompressor.decompress(data, max_length=limit + 1), decompressor, limit,
                        RuntimeError)
    if codec == ZSTD:
        out = read_zstd(data, limit, across_frames=True)
        if not out and data:
            # an empty result from non-empty input: check it really is a complete empty frame
            try:
                zstandard.ZstdDecompressor().decompress(data)
            except zstandard.ZstdError as exc:
                raise CompressionError(f"zstd: {exc}") from None
        return out
    raise CompressionError(f"unknown compression codec {codec}")
