"""Helpers for the Kafka broker's own tests and the real-client interop tests.

- :class:`InProcessBroker`: the Kafka personality on a background event loop, for tests that need
  ``KafkaOptions`` knobs (short session timeouts) or fast restarts with faults.
- :class:`Wire`: a raw-socket client that encodes requests and decodes responses with kafka-python's protocol
  classes, so the broker's own codec is checked by an independent one. Every read has a deadline.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatchBuilder

from wirecheck.broker.core import BrokerConfig, Listener

from tests.rawsocket import Closed, RawClient  # noqa: F401 - Closed is re-exported to the tests

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 5.0


# ---------------------------------------------------------------------------------------------- brokers


class InProcessBroker:
    """The Kafka personality served from a background thread's event loop (one per test or module)."""

    def __init__(self, faults: tuple[str, ...] = (), max_frame: int | None = None, data_dir: Path | None = None,
                 retention_records: int | None = None, cache_bytes: int = BrokerConfig.cache_bytes, **options):
        """``faults`` namespaced (``kafka.crc-ieee``); ``options``: KafkaOptions fields (min_session_ms 100 here)."""
        from wirecheck.broker.kafka import KafkaOptions, create  # the personality under test

        options.setdefault("min_session_ms", 100)
        self.config = BrokerConfig(faults=frozenset(faults), idle_timeout=10.0, max_frame=max_frame,
                                   data_dir=data_dir, retention_records=retention_records, cache_bytes=cache_bytes)
        self.personality = create(self.config, KafkaOptions(**options))
        self.loop = asyncio.new_event_loop()
        self.listener = Listener(self.personality, self.config, 0)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.port = 0

    def __enter__(self) -> "InProcessBroker":
        self.thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self.listener.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _shutdown(self) -> None:
        await self.listener.stop()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def wire(self) -> "Wire":
        return Wire(self.port)


# ---------------------------------------------------------------------------------------------- a raw client


def build(cls, version: int, **fields):
    """A kafka-python message built from nested dicts/lists (their classes want instances, not dicts)."""
    return cls(version=version, **_convert(cls.fields, fields))


def _convert(field_map, values: dict) -> dict:
    out = {}
    for name, value in values.items():
        field = field_map[name]
        if isinstance(value, list) and field.is_struct_array():
            inner = field.array_of
            value = [inner.data_class(**_convert(inner.fields, v)) if isinstance(v, dict) else v for v in value]
        elif isinstance(value, dict) and field.is_struct():
            value = field.data_class(**_convert(field.fields, value))
        out[name] = value
    return out


class Wire(RawClient):
    def __init__(self, port: int, timeout: float = DEADLINE):
        super().__init__(port, timeout)
        self.correlation_id = 0

    def send(self, request, client_id: str = "wirecheck-test") -> int:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id=client_id)
        self.send_raw(bytes(request.encode(header=True, framed=True)))
        return self.correlation_id

    def recv_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self._exactly(4))
        return self._exactly(size)

    def recv(self, response_cls, version: int):
        payload = self.recv_frame()
        return response_cls.decode(payload, version=version, header=True)

    def call(self, request_cls, response_cls, version: int, **fields):
        corr = self.send(build(request_cls, version, **fields))
        response = self.recv(response_cls, version)
        assert response.header.correlation_id == corr
        return response

    def expect_closed(self, timeout: float = DEADLINE) -> None:
        """Pass when the broker closes the connection (EOF or reset) within the deadline, sending nothing."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1)
        except ConnectionResetError:
            return
        except socket.timeout:
            raise AssertionError(f"connection still open after {timeout}s") from None
        assert data == b"", f"expected a close, got bytes {data!r}"

    def expect_silence(self, seconds: float) -> None:
        self.sock.settimeout(seconds)
        try:
            data = self.sock.recv(1)
        except socket.timeout:
            return
        finally:
            self.sock.settimeout(DEADLINE)
        raise AssertionError(f"expected no response, got {data!r}")


def outcome(w: Wire, raw: bytes, wait: float = 0.5) -> str:
    """'answered', 'closed' or 'silent' after sending raw bytes."""
    w.send_raw(raw)
    w.sock.settimeout(wait)
    try:
        data = w.sock.recv(4)
    except socket.timeout:
        return "silent"
    except ConnectionResetError:
        return "closed"
    return "answered" if data else "closed"


def record_batch(values: list[bytes], producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 compression: int = 0, timestamps: list[int] | None = None, transactional: bool = False) -> bytes:
    """One RecordBatch v2 built by kafka-python (an encoder nobody here wrote).

    Snappy (2) is applied here with cramjam, xerial-framed as Java clients do, because kafka-python needs
    python-snappy for it.
    """
    if compression == 2:
        return _snappy_xerial(record_batch(values, producer_id, producer_epoch, base_sequence, 0, timestamps,
                                           transactional))
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=base_sequence, batch_size=1 << 30)
    now = int(time.time() * 1000)
    for i, value in enumerate(values):
        ts = timestamps[i] if timestamps else now
        builder.append(i, timestamp=ts, key=b"k%d" % i, value=value, headers=[])
    return bytes(builder.build())


def _snappy_xerial(batch: bytes) -> bytes:
    import cramjam
    import crc32c

    raw = bytes(cramjam.snappy.compress_raw(batch[61:]))
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(raw)) + raw
    out = bytearray(batch[:61] + framed)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">h", out, 21, struct.unpack_from(">h", out, 21)[0] | 2)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)
