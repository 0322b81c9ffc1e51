"""Fluvio's primitive encodings as versioned codecs (specs/fluvio.md §1; upstream ``fluvio-protocol`` core).

Fluvio is Kafka-like but not Kafka: no tagged fields, no compact types, no null strings. Fixed-width integers
are the shared ones from ``protocols.fields``; what differs lives here, and says how it differs:

* ``FluvioString``: i16 length, **a length <= 0 decodes as ""** (Kafka: -1 is null, other negatives invalid);
* ``FluvioVec``: i32 count, **a count < 1 decodes as empty** (Kafka: -1 is null);
* ``FluvioOption``: a bool tag byte 0/1 before the value (Kafka has no option tag; its nulls are lengths);
* ``FluvioBytes``: ``Vec<u8>``, i32 count of raw bytes (the same bytes as Kafka's classic BYTES).

Every codec takes the message version, because struct fields are gated by ``min_version``/``max_version``
(fluvio-protocol-derive ``version_check_token_stream``). ``write`` can record where each field landed
(``trace``: a list of ``(path, kind, start, end, prefix)`` tuples) so that strategies mutate real fields.
"""

from __future__ import annotations

from wirecheck.protocols import fields as f
from wirecheck.protocols.fields import DecodeError

I16_MAX = 2**15 - 1


class Plain:
    """A fixed-width big-endian integer from ``protocols.fields`` (INT16, UINT32, ...)."""

    def __init__(self, codec: f.FixedCodec):
        self.codec = codec
        self.min_size = codec.size

    def write(self, out, value, version, trace=None, path=""):
        start = len(out)
        self.codec.write(out, value)
        if trace is not None:
            trace.append((path, "fixed", start, len(out), self.codec.name))

    def read(self, buf, pos, version):
        return self.codec.read(buf, pos)


I8, I16, I32, I64 = Plain(f.INT8), Plain(f.INT16), Plain(f.INT32), Plain(f.INT64)
U8, U16, U32, U64 = Plain(f.UINT8), Plain(f.UINT16), Plain(f.UINT32), Plain(f.UINT64)


class Bool:
    """One byte, 0 or 1; any other byte is InvalidData (fluvio-protocol decoder, bool impl).

    Stricter than ``protocols.fields.BOOL`` (Kafka's readers take any non-zero byte as true)."""

    min_size = 1

    def write(self, out, value, version, trace=None, path=""):
        if trace is not None:
            trace.append((path, "fixed", len(out), len(out) + 1, "bool"))
        out.append(1 if value else 0)

    def read(self, buf, pos, version):
        if pos >= len(buf):
            raise DecodeError("truncated bool", pos)
        if buf[pos] > 1:
            raise DecodeError(f"bool byte {buf[pos]} is neither 0 nor 1", pos)
        return buf[pos] == 1, pos + 1


BOOL = Bool()


class FluvioString:
    """i16 length + UTF-8. A length <= 0 decodes as "" (there is no null string in Fluvio)."""

    min_size = 2

    def write(self, out, value, version, trace=None, path=""):
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        if len(data) > I16_MAX:
            raise ValueError(f"a Fluvio string holds at most {I16_MAX} bytes, not {len(data)}")
        start = len(out)
        out += len(data).to_bytes(2, "big")
        out += data
        if trace is not None:
            trace.append((path, "length", start, start + 2, "int16"))
            trace.append((path, "data", start + 2, len(out), "utf8"))

    def read(self, buf, pos, version):
        length, pos = f.INT16.read(buf, pos)
        if length <= 0:
            return "", pos
        end = pos + length
        if end > len(buf):
            raise DecodeError(f"string claims {length} bytes, {len(buf) - pos} left", pos - 2)
        try:
            return bytes(buf[pos:end]).decode("utf-8"), end
        except UnicodeDecodeError as exc:
            raise DecodeError(f"invalid UTF-8: {exc.reason}", pos) from None


STRING = FluvioString()


class FluvioBytes:
    """``Vec<u8>``: i32 count, then raw bytes; a count < 1 is empty."""

    min_size = 4

    def write(self, out, value, version, trace=None, path=""):
        start = len(out)
        out += len(value).to_bytes(4, "big")
        out += bytes(value)
        if trace is not None:
            trace.append((path, "length", start, start + 4, "int32"))
            trace.append((path, "data", start + 4, len(out), "bytes"))

    def read(self, buf, pos, version):
        count, pos = f.INT32.read(buf, pos)
        if count <= 0:
            return b"", pos
        if pos + count > len(buf):
            raise DecodeError(f"bytes claim {count}, {len(buf) - pos} left", pos - 4)
        return bytes(buf[pos : pos + count]), pos + count


BYTES = FluvioBytes()


class FluvioVec:
    """i32 count, then the elements. A count < 1 decodes as empty; a count the bytes left cannot hold is an
    error before anything is allocated (upstream: EOF while reading elements)."""

    def __init__(self, item):
        self.item = item
        self.min_size = 4

    def write(self, out, value, version, trace=None, path=""):
        start = len(out)
        out += len(value).to_bytes(4, "big")
        if trace is not None:
            trace.append((path, "count", start, start + 4, "int32"))
        for index, element in enumerate(value):
            self.item.write(out, element, version, trace, f"{path}[{index}]")

    def read(self, buf, pos, version):
        start = pos
        count, pos = f.INT32.read(buf, pos)
        if count <= 0:
            return [], pos
        if count * max(1, getattr(self.item, "min_size", 1)) > len(buf) - pos:
            raise DecodeError(f"count {count} but only {len(buf) - pos} bytes left", start)
        items = []
        for index in range(count):
            try:
                element, pos = self.item.read(buf, pos, version)
            except DecodeError as exc:
                raise exc.within(f"[{index}]") from None
            items.append(element)
        return items, pos


class FluvioOption:
    """A bool tag (0 None, 1 Some) then the value. Fluvio-only: Kafka marks absence inside lengths."""

    min_size = 1

    def __init__(self, item):
        self.item = item

    def write(self, out, value, version, trace=None, path=""):
        BOOL.write(out, value is not None, version, trace, f"{path}?")
        if value is not None:
            self.item.write(out, value, version, trace, path)

    def read(self, buf, pos, version):
        present, pos = BOOL.read(buf, pos, version)
        if not present:
            return None, pos
        return self.item.read(buf, pos, version)


class StringMap:
    """``BTreeMap<String, String>``: u16 count, then key/value pairs (SmartModule params)."""

    min_size = 2

    def write(self, out, value, version, trace=None, path=""):
        start = len(out)
        out += len(value).to_bytes(2, "big")
        if trace is not None:
            trace.append((path, "count", start, start + 2, "int16"))
        for key in sorted(value):
            STRING.write(out, key, version, trace, f"{path}.{key}")
            STRING.write(out, value[key], version, trace, f"{path}[{key}]")

    def read(self, buf, pos, version):
        count, pos = f.UINT16.read(buf, pos)
        if count * 4 > len(buf) - pos:
            raise DecodeError(f"map count {count} but only {len(buf) - pos} bytes left", pos - 2)
        result = {}
        for _ in range(count):
            key, pos = STRING.read(buf, pos, version)
            result[key], pos = STRING.read(buf, pos, version)
        return result, pos


class Field:
    """One struct field, present when ``low <= version <= high``."""

    __slots__ = ("name", "codec", "low", "high")

    def __init__(self, name: str, codec, low: int = -(2**15), high: int = 2**15):
        self.name, self.codec, self.low, self.high = name, codec, low, high

    def present(self, version: int) -> bool:
        return self.low <= version <= self.high


class Struct:
    """Fields in declaration order, each gated by version; the value is a dict."""

    def __init__(self, name: str, fields: list[Field]):
        self.name = name
        self.fields = fields
        self.min_size = sum(getattr(fl.codec, "min_size", 0) for fl in fields if fl.low <= 0)

    def write(self, out, value, version, trace=None, path=""):
        for fl in self.fields:
            if fl.present(version):
                fl.codec.write(out, value[fl.name], version, trace, f"{path}.{fl.name}" if path else fl.name)

    def read(self, buf, pos, version):
        result = {}
        for fl in self.fields:
            if not fl.present(version):
                continue
            try:
                result[fl.name], pos = fl.codec.read(buf, pos, version)
            except DecodeError as exc:
                raise exc.within(fl.name) from None
        return result, pos


class Union:
    """A data-carrying enum with a u8 tag (``#[fluvio(tag = N)]`` on an enum without ``repr``): the value is
    ``(variant name, payload)``; a variant without data has payload None."""

    min_size = 1

    def __init__(self, name: str, variants: dict[int, tuple[str, object]]):
        self.name = name
        self.variants = variants
        self.tags = {variant: tag for tag, (variant, _) in variants.items()}

    def write(self, out, value, version, trace=None, path=""):
        variant, payload = value
        tag = self.tags[variant]
        if trace is not None:
            trace.append((path, "enum", len(out), len(out) + 1, "u8"))
        out.append(tag)
        codec = self.variants[tag][1]
        if codec is not None:
            codec.write(out, payload, version, trace, f"{path}.{variant}")

    def read(self, buf, pos, version):
        if pos >= len(buf):
            raise DecodeError(f"truncated {self.name} tag", pos)
        tag = buf[pos]
        if tag not in self.variants:
            raise DecodeError(f"unknown {self.name} type {tag}", pos)
        variant, codec = self.variants[tag]
        if codec is None:
            return (variant, None), pos + 1
        payload, pos = codec.read(buf, pos + 1, version)
        return (variant, payload), pos


class RecordSetField:
    """A partition's records: i32 byte length, then back-to-back batches (specs/fluvio.md §2.5). The value is
    the raw batch bytes; ``protocols.fluvio.records`` builds and parses them."""

    min_size = 4

    def write(self, out, value, version, trace=None, path=""):
        start = len(out)
        out += len(value).to_bytes(4, "big", signed=True)
        out += bytes(value)
        if trace is not None:
            trace.append((path, "length", start, start + 4, "int32"))
            trace.append((path, "recordset", start + 4, len(out), "batches"))

    def read(self, buf, pos, version):
        length, pos = f.INT32.read(buf, pos)
        if length < 0:
            raise DecodeError(f"negative RecordSet length {length}", pos - 4)
        if pos + length > len(buf):
            raise DecodeError(f"RecordSet claims {length} bytes, {len(buf) - pos} left", pos - 4)
        return bytes(buf[pos : pos + length]), pos + length


RECORD_SET = RecordSetField()
