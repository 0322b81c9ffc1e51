"""Partition key -> token: the first 64 bits (h1) of MurmurHash3 x64_128, seed 0, Cassandra flavour.

The Cassandra flavour differs from the reference MurmurHash3 only in the tail: each of the last ``len % 16``
bytes is taken as a *signed* int8 and sign-extended before it is shifted into place (upstream
``internal/types/murmur.go``, adapted from gocql). ``mmh3`` implements the reference flavour (unsigned tail), so
keys with a tail byte >= 0x80 hash differently there; this small implementation is checked against upstream's
vectors in tests/vectors/test_barco_vectors.py.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
C1 = 0x87C37B91114253D5
C2 = 0x4CF5AD432745937F
MIN_TOKEN = -(1 << 63)
TOKEN_SPACE = 1 << 64


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK
    return k ^ (k >> 33)


def _signed(x: int) -> int:
    return x - (1 << 64) if x & (1 << 63) else x


def murmur3_h1(data: bytes) -> int:
    """h1 of MurmurHash3 x64_128 (seed 0, signed tail bytes) as a signed int64."""
    length = len(data)
    h1 = h2 = 0
    blocks = length // 16
    for i in range(blocks):
        k1 = int.from_bytes(data[16 * i : 16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8 : 16 * i + 16], "little")
        k1 = (_rotl((k1 * C1) & MASK, 31) * C2) & MASK
        h1 = _rotl(h1 ^ k1, 27)
        h1 = ((h1 + h2) * 5 + 0x52DCE729) & MASK
        k2 = (_rotl((k2 * C2) & MASK, 33) * C1) & MASK
        h2 = _rotl(h2 ^ k2, 31)
        h2 = ((h2 + h1) * 5 + 0x38495AB5) & MASK
    tail = data[16 * blocks :]
    k1 = k2 = 0
    for i in range(len(tail) - 1, -1, -1):
        byte = tail[i] - 256 if tail[i] >= 128 else tail[i]  # Cassandra: int8, sign-extended
        if i >= 8:
            k2 ^= (byte << ((i - 8) * 8)) & MASK
        else:
            k1 ^= (byte << (i * 8)) & MASK
    if len(tail) > 8:
        h2 ^= (_rotl((k2 * C2) & MASK, 33) * C1) & MASK
    if tail:
        h1 ^= (_rotl((k1 * C1) & MASK, 31) * C2) & MASK
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & MASK
    h2 = (h2 + h1) & MASK
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & MASK
    return _signed(h1)


def hash_token(key: bytes) -> int:
    return murmur3_h1(key)


def range_index(token: int, ranges: int, start: int = MIN_TOKEN, size: int = TOKEN_SPACE) -> int:
    """Which of ``ranges`` equal sub-ranges of the token range [start, start + size) holds ``token``.

    Dev mode (one broker) owns the whole ring; upstream's formula overflows there (notes §7), so the suite
    accepts any index below ``ranges`` for keyed messages and checks only that one key keeps one index.
    """
    return min(ranges - 1, ((token - start) * ranges) // size)
