"""Java's modified UTF-8 with a u16 byte count (``DataOutput.writeUTF`` / ``DataInput.readUTF``), the string
encoding of every Pravega wire command (specs/pravega.md §2).

Differences from UTF-8: U+0000 is ``C0 80``; characters outside the BMP are written as their two UTF-16
surrogates, three bytes each. The reader (the JDK's ``DataInputStream.readUTF``) accepts a raw ``00`` and
overlong 2- and 3-byte forms, and rejects 4-byte lead bytes (``F0``-``F7``), ``1111xxxx`` leads and stray
continuation bytes; we decode exactly that set.
"""

from __future__ import annotations

from wirecheck.protocols.fields import DecodeError

MAX_BYTES = 65_535


def encode(text: str) -> bytes:
    """The modified UTF-8 bytes of ``text`` (without the length)."""
    if text.isascii() and "\0" not in text:
        return text.encode("ascii")
    out = bytearray()
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        unit = (units[i] << 8) | units[i + 1]
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | (unit >> 6) & 0x3F, 0x80 | unit & 0x3F))
    return bytes(out)


def decode(data: bytes, offset: int = 0) -> str:
    """Decode as readUTF does; DecodeError (at ``offset`` + position) where readUTF throws."""
    if data.isascii():
        return data.decode("ascii")
    units = bytearray()
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            unit, i = b, i + 1
        elif b >> 5 == 0b110:
            if i + 1 >= n or data[i + 1] >> 6 != 0b10:
                raise DecodeError("malformed modified UTF-8 (2-byte form)", offset + i)
            unit, i = (b & 0x1F) << 6 | data[i + 1] & 0x3F, i + 2
        elif b >> 4 == 0b1110:
            if i + 2 >= n or data[i + 1] >> 6 != 0b10 or data[i + 2] >> 6 != 0b10:
                raise DecodeError("malformed modified UTF-8 (3-byte form)", offset + i)
            unit, i = (b & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | data[i + 2] & 0x3F, i + 3
        else:
            raise DecodeError(f"byte {b:#04x} cannot start a modified UTF-8 character", offset + i)
        units += unit.to_bytes(2, "big")
    return units.decode("utf-16-be", "surrogatepass")


class JavaUtfCodec:
    """``u16 length | modified UTF-8`` as a ``protocols.fields`` codec (write/read)."""

    name = "java-utf"

    def write(self, out: bytearray, value) -> None:
        data = encode(value) if isinstance(value, str) else bytes(value)
        if len(data) > MAX_BYTES:
            raise ValueError(f"string of {len(data)} encoded bytes: writeUTF allows at most {MAX_BYTES}")
        out += len(data).to_bytes(2, "big") + data

    def read(self, buf: bytes, pos: int):
        if pos + 2 > len(buf):
            raise DecodeError(f"truncated string length: {len(buf) - pos} bytes left", pos)
        size = int.from_bytes(buf[pos : pos + 2], "big")
        end = pos + 2 + size
        if end > len(buf):
            raise DecodeError(f"string length {size} runs past the payload ({len(buf) - pos - 2} bytes left)", pos)
        return decode(bytes(buf[pos + 2 : end]), pos + 2), end


JAVA_UTF = JavaUtfCodec()
