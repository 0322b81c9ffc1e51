"""Raw-socket helpers for the Fluvio broker's own tests: tiny encoders/decoders and an in-thread broker.

Independent of the suite (no ``protocols``/``suites``/``targets.session`` imports) and of the broker's codec:
the layouts are written again from the notes (specs/fluvio.md), with struct only, so that a misreading in the
broker shows up here as a failure instead of being shared.
"""

from __future__ import annotations

import socket
import struct

import crc32c

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.fluvio import FluvioOptions, create

from tests.rawsocket import Closed, InThreadBroker, RawClient  # noqa: F401 - Closed is re-exported to the tests

DEADLINE = 5.0


# ------------------------------------------------------------------------------------------------ encoders

def s16(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def opt(text: str | None) -> bytes:
    return b"\x00" if text is None else b"\x01" + s16(text)


def varint(n: int) -> bytes:
    """64-bit zig-zag LEB128 (notes §1, A11)."""
    z = (n << 1) ^ (n >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def record(value: bytes, key: bytes | None = None, offset_delta: int = 0, timestamp_delta: int = 0) -> bytes:
    """Notes §4.3: varint length, attributes i8, ts delta, offset delta, Option key, value, headers count."""
    key_part = b"\x00" if key is None else b"\x01" + varint(len(key)) + key
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta) + key_part + varint(len(value)) + value + b"\x00"
    return varint(len(body)) + body


def batch(values: list[bytes] | None = None, *, records: bytes | None = None, count: int | None = None,
          last_offset_delta: int | None = None, attributes: int = 0, base_offset: int = 0, timestamp: int = -1,
          crc: int | None = None, schema_id: int | None = None, epoch: int = -1, batch_len: int | None = None) -> bytes:
    """A RecordBatch (notes §4.2) with correct length and CRC-32C unless told otherwise."""
    values = values if values is not None else [b"v"]
    if records is None:
        records = b"".join(record(v, offset_delta=i) for i, v in enumerate(values))
        count = len(values) if count is None else count
        records = struct.pack(">i", count) + records
    lod = len(values) - 1 if last_offset_delta is None else last_offset_delta
    if schema_id is not None:
        attributes |= 0x10
    covered = struct.pack(">hiqqqhi", attributes, lod, timestamp, timestamp, -1, -1, -1)
    if schema_id is not None:
        covered += struct.pack(">I", schema_id)
    covered += records
    the_crc = crc32c.crc32c(covered) if crc is None else crc
    length = 4 + 1 + 4 + len(covered) if batch_len is None else batch_len
    return struct.pack(">qiibI", base_offset, length, epoch, 2, the_crc) + covered


def record_set(*batches: bytes) -> bytes:
    data = b"".join(batches)
    return struct.pack(">i", len(data)) + data


def produce_body(topics: list[tuple[str, list[tuple[int, bytes]]]], *, isolation: int = 1, timeout: int = 1500,
                 transactional_id: str | None = None, smartmodules: bytes | None = b"\x00\x00\x00\x00") -> bytes:
    out = opt(transactional_id) + struct.pack(">hi", isolation, timeout) + struct.pack(">i", len(topics))
    for name, partitions in topics:
        out += s16(name) + struct.pack(">i", len(partitions))
        for index, records in partitions:
            out += struct.pack(">I", index) + records
    return out + (smartmodules or b"")


def fetch_body(topics: list[tuple[str, list[tuple[int, int]]]], *, max_bytes: int = 1048588, isolation: int = 0,
               version: int = 25) -> bytes:
    out = struct.pack(">ii", 0, 0)
    if version >= 3:
        out += struct.pack(">i", max_bytes)
    if version >= 4:
        out += bytes([isolation])
    out += struct.pack(">i", len(topics))
    for name, partitions in topics:
        out += s16(name) + struct.pack(">i", len(partitions))
        for index, offset in partitions:
            out += struct.pack(">I", index)
            if version >= 9:
                out += struct.pack(">i", 0)
            out += struct.pack(">q", offset)
            if version >= 5:
                out += struct.pack(">q", 0)
            out += struct.pack(">i", max_bytes)
    if version >= 7:
        out += struct.pack(">i", 0)
    return out


def fetch_offsets_body(topics: list[tuple[str, list[int]]]) -> bytes:
    out = struct.pack(">i", len(topics))
    for name, indexes in topics:
        out += s16(name) + struct.pack(">i", len(indexes)) + b"".join(struct.pack(">I", i) for i in indexes)
    return out


def stream_fetch_body(topic: str, partition: int, offset: int, *, max_bytes: int = 1048588, isolation: int = 0,
                      smartmodules: bytes = b"\x00\x00\x00\x00", consumer_id: str | None = None) -> bytes:
    """At v25: smartmodules Vec and consumer_id (notes §5.4)."""
    return (s16(topic) + struct.pack(">Iqi", partition, offset, max_bytes) + bytes([isolation]) + smartmodules
            + opt(consumer_id))


def fetch_consumer_offsets_body(consumer_id: str | None = None) -> bytes:
    """FetchConsumerOffsets v25: filter_opts None, or Some{replica_id None, consumer_id} (notes §5.6)."""
    return b"\x00" if consumer_id is None else b"\x01\x00" + opt(consumer_id)


def decode_fetch_consumer_offsets(body: bytes) -> tuple[int, list[tuple[str, str, int, int]]]:
    """(error code, [(consumer_id, topic, partition, offset)])."""
    r = R(body)
    error = r.take(">h")
    out = []
    for _ in range(r.take(">i")):
        consumer, topic = r.string(), r.string()
        partition, offset, _modified = r.take(">IqQ")
        out.append((consumer, topic, partition, offset))
    return error, out


def update_offsets_body(offsets: list[tuple[int, int]]) -> bytes:
    return struct.pack(">i", len(offsets)) + b"".join(struct.pack(">qI", o, s) for o, s in offsets)


def api_versions_body(client_version: str = "0.18.2", os_name: str = "linux", arch: str = "x86_64") -> bytes:
    return s16(client_version) + s16(os_name) + s16(arch)


def request(key: int, version: int, correlation_id: int, body: bytes, client_id: str = "fluvio") -> bytes:
    payload = struct.pack(">Hhi", key, version, correlation_id) + s16(client_id) + body
    return struct.pack(">i", len(payload)) + payload


# ------------------------------------------------------------------------------------------------ decoders

class R:
    """A cursor for decoding responses in tests."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        n = self.take(">h")
        raw = self.data[self.pos:self.pos + max(n, 0)]
        self.pos += max(n, 0)
        return raw.decode()

    def raw(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def error(self):
        """An ErrorCode with its payload (notes §6): the code, or (code, payload...)."""
        code = self.take(">h")
        if code in (2, 6001, 8001):
            return code, self.string()
        if code == 71:
            return code, self.take(">q"), self.take(">q")
        if code == 72:
            return code, self.string(), self.take(">I")
        if code == 6002:
            message = self.string()
            return code, message, (self.string() if self.take(">B") else None)
        return code

    def done(self) -> bool:
        return self.pos == len(self.data)


def decode_api_versions(body: bytes) -> tuple[int, list[tuple[int, int, int]], str]:
    r = R(body)
    error = r.error()
    keys = [r.take(">hhh") for _ in range(r.take(">i"))]
    platform = r.string()
    assert r.done()
    return error, keys, platform


def decode_produce(body: bytes, version: int = 25) -> list[tuple[str, list[tuple]]]:
    """[(topic, [(partition, error, base_offset), ...])]; log_append_time/log_start must be 0 (A19)."""
    r = R(body)
    topics = []
    for _ in range(r.take(">i")):
        name = r.string()
        parts = []
        for _ in range(r.take(">i")):
            index, error, base = r.take(">I"), r.error(), r.take(">q")
            if version >= 2:
                assert r.take(">q") == 0
            if version >= 5:
                assert r.take(">q") == 0
            parts.append((index, error, base))
        topics.append((name, parts))
    if version >= 1:
        assert r.take(">i") == 0
    assert r.done(), f"{len(body) - r.pos} bytes left"
    return topics


def _partition(r: R, version: int) -> dict:
    p = {"index": r.take(">I"), "error": r.error(), "hw": r.take(">q")}
    if version >= 11:
        p["next_filter"] = r.take(">q")
    p["log_start"] = r.take(">q")
    assert r.take(">B") == 0  # aborted: None
    p["records"] = r.raw(r.take(">i"))
    return p


def decode_fetch(body: bytes, version: int = 25) -> list[tuple[str, list[dict]]]:
    r = R(body)
    assert r.take(">i") == 0 and r.error() == 0 and r.take(">i") == 0
    topics = [(r.string(), [_partition(r, version) for _ in range(r.take(">i"))]) for _ in range(r.take(">i"))]
    assert r.done()
    return topics


def decode_fetch_offsets(body: bytes) -> list[tuple[str, list[tuple]]]:
    r = R(body)
    out = []
    for _ in range(r.take(">i")):
        name = r.string()
        out.append((name, [(r.error(), r.take(">I"), r.take(">q"), r.take(">q")) for _ in range(r.take(">i"))]))
    assert r.done()
    return out


def decode_stream_fetch(body: bytes, version: int = 25) -> tuple[str, int, dict]:
    r = R(body)
    topic, stream_id = r.string(), r.take(">I")
    part = _partition(r, version)
    assert r.done()
    return topic, stream_id, part


def decode_update_offsets(body: bytes) -> list[tuple[int, object]]:
    r = R(body)
    out = [(r.take(">I"), r.error()) for _ in range(r.take(">i"))]
    assert r.done()
    return out


def batches_of(records: bytes) -> list[dict]:
    """Split stored batches: base_offset, last_offset_delta, crc and whether the CRC is right."""
    out, pos = [], 0
    while pos + 12 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        end = pos + 12 + length
        if end > len(records):
            break  # a batch cut by max_bytes (notes §5.2)
        data = records[pos:end]
        crc = struct.unpack_from(">I", data, 17)[0]
        lod = struct.unpack_from(">i", data, 23)[0]
        out.append({"base": base, "lod": lod, "crc": crc, "crc_ok": crc == crc32c.crc32c(data[21:]), "data": data})
        pos = end
    return out


# ------------------------------------------------------------------------------------------------ client

class Client(RawClient):
    def __init__(self, port: int, timeout: float = DEADLINE):
        super().__init__(port, timeout)
        self.correlation = 0

    def recv(self) -> tuple[int, bytes]:
        """(correlation_id, body) of the next response frame."""
        (size,) = struct.unpack(">i", self._exactly(4))
        payload = self._exactly(size)
        return struct.unpack_from(">i", payload)[0], payload[4:]

    def call(self, key: int, version: int, body: bytes) -> bytes:
        self.correlation += 1
        self.send_raw(request(key, version, self.correlation, body))
        correlation, response = self.recv()
        assert correlation == self.correlation, (correlation, self.correlation)
        return response

    def outcome(self, data: bytes, wait: float = 0.5) -> str:
        """'answered', 'closed' or 'silent' after sending raw bytes."""
        self.send_raw(data)
        self.sock.settimeout(wait)
        try:
            first = self.sock.recv(4)
        except socket.timeout:
            return "silent"
        except ConnectionResetError:
            return "closed"
        finally:
            self.sock.settimeout(DEADLINE)
        return "answered" if first else "closed"

    # shortcuts at the current versions
    def produce(self, topic: str, *batches: bytes, partition: int = 0, version: int = 25, **kw) -> tuple:
        body = self.call(0, version, produce_body([(topic, [(partition, record_set(*batches))])], **kw))
        return decode_produce(body, version)[0][1][0][1:]  # (error, base_offset)

    def fetch(self, topic: str, offset: int, partition: int = 0, version: int = 25, **kw) -> dict:
        body = self.call(1, version, fetch_body([(topic, [(partition, offset)])], version=version, **kw))
        return decode_fetch(body, version)[0][1][0]

    def fetch_offsets(self, topic: str, partition: int = 0) -> tuple:
        return decode_fetch_offsets(self.call(1002, 25, fetch_offsets_body([(topic, [partition])])))[0][1][0]


class ThreadBroker(InThreadBroker):
    """The Fluvio personality in a background thread (see InThreadBroker)."""

    client_class = Client
    timeout = DEADLINE

    def __init__(self, faults=(), max_frame: int | None = None, idle_timeout: float = 30.0,
                 retention_records: int | None = None, **options):
        """``options``: FluvioOptions fields (max_request_size, topics, ...)."""
        self.options = FluvioOptions(**options)
        super().__init__(BrokerConfig(faults=frozenset(faults), max_frame=max_frame, idle_timeout=idle_timeout,
                                      retention_records=retention_records))

    def create_personality(self, config):
        return create(config, self.options)
