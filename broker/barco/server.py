"""The Barco personality: discovery (primary), HTTP producer, consumer API (HTTP/1.1 and h2c) and the binary
producer, one dev-mode broker (n=1). Decisions D1-D8 are the suite's (protocols/barco/clauses.py), implemented
from the notes; each branch says which.

One module per endpoint, each a mixin of :class:`BarcoPersonality`: discovery.py, http_producer.py, binary.py and
consumer_api.py. This one holds what they share: the lifecycle, the endpoint routing, where a message is stored
(and in which reader), and the durable consumer offsets.
"""

from __future__ import annotations

import itertools
import json
import time

from wirecheck.broker.barco import codec
from wirecheck.broker.barco.binary import BinaryProducer
from wirecheck.broker.barco.consumer_api import ConsumerApi
from wirecheck.broker.barco.consumers import Consumers
from wirecheck.broker.barco.discovery import Discovery
from wirecheck.broker.barco.faults import BarcoFaults, BarcoVariants
from wirecheck.broker.barco.http import serve
from wirecheck.broker.barco.http_producer import HttpProducer
from wirecheck.broker.barco.store import ChunkStore
from wirecheck.broker.core import BrokerConfig, Connection

TOKEN = -(1 << 63)  # dev mode: one broker owns the whole ring (D7)
VERSION = 1
HTTP_MAX_BODY = 1 << 20


def now_us() -> int:
    return time.time_ns() // 1000


class BarcoPersonality(Discovery, HttpProducer, ConsumerApi, BinaryProducer):
    name = "barco"

    def __init__(self, config: BrokerConfig, options):
        self.config = config
        self.options = options
        self.faults = config.faults_as(BarcoFaults)
        self.variants = config.variants_as(BarcoVariants)
        self.ports: dict[str | None, int] = {}
        self.store = ChunkStore(config.data_dir, config.fsync == "batch", config.retention_records,
                                options.max_store_bytes, config.cache_bytes,
                                lose_tail=self.faults.safety_unsynced_tail_lost)
        self.offsets_path = config.data_dir / "barco" / "offsets.json" if config.data_dir else None
        self.consumers = Consumers(options.consumer_ranges, self._load_offsets())
        self._round_robin = itertools.count(1)
        self._crc_over = 8 if self.faults.response_crc_wrong else 9
        self.wedged = False  # only under crash-on-oversize: no endpoint answers any more

    # -- lifecycle

    def listening(self, endpoint: str | None, port: int) -> None:
        self.ports[endpoint] = port

    async def close(self) -> None:
        self._save_offsets()
        self.store.close()

    def _load_offsets(self) -> dict:
        if self.offsets_path is None or not self.offsets_path.exists():
            return {}
        saved = json.loads(self.offsets_path.read_text())
        return {(g, (bytes.fromhex(t), tok, r, v)): o for g, t, tok, r, v, o in saved}

    def _save_offsets(self) -> None:
        if self.offsets_path is None:
            return
        self.offsets_path.parent.mkdir(parents=True, exist_ok=True)
        rows = [[g, k[0].hex(), k[1], k[2], k[3], o] for (g, k), o in self.consumers.saved.items()]
        tmp = self.offsets_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows))
        tmp.replace(self.offsets_path)

    async def serve(self, conn: Connection) -> None:
        if self.wedged:
            return await self._wedge(conn)
        await serve(conn, self._discovery, 4096, faults=self.faults)

    async def serve_endpoint(self, endpoint: str, conn: Connection) -> None:
        if self.wedged:
            await self._wedge(conn)
        elif endpoint == "producer":
            await self._binary(conn)
        elif endpoint == "producer-http":
            await serve(conn, self._producer_http, HTTP_MAX_BODY, allow_h2=False, faults=self.faults)
        else:
            await serve(conn, self._consumer, HTTP_MAX_BODY, faults=self.faults)

    async def _wedge(self, conn: Connection) -> None:
        """crash-on-oversize: the broker hangs (as upstream's buffer pool can, notes §2.7): reads, never answers."""
        while True:
            await conn.read_exactly(1)

    # -- storing

    def _reader_key(self, topic: bytes, key: bytes) -> tuple:
        ranges = self.options.consumer_ranges
        if key and not self.faults.partition_key_ignored:
            index = min(ranges - 1, ((codec.token_of(key) - TOKEN) * ranges) >> 64)
            if self.variants.keyed_range_zero:  # upstream's dev mode: GetPrimaryTokenIndex overflows (notes §7)
                index = 0
        else:
            index = next(self._round_robin) % ranges
        return (topic, TOKEN, index, VERSION)

    def _store(self, topic: bytes, key: bytes, messages: list[bytes], timestamp: int | None = None) -> None:
        """Store one produce's messages as one chunk, each stamped ``timestamp`` (µs; None: now)."""
        ts = now_us() if timestamp is None else timestamp
        records = [(ts, body) for body in messages]
        if self.faults.empty_message_dropped:
            records = [(ts, body) for ts, body in records if body]
            if not records:
                return
        if self.faults.record_cut_64k:
            records = [(ts, body[:0xFFFF]) for ts, body in records]
        payload = codec.compress(codec.encode_records(records), checksum=not self.faults.zstd_no_checksum)
        self.store.append(self._reader_key(topic, key), len(records), payload)
