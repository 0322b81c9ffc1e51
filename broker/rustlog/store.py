"""Topics, their partition logs, committed offsets and counters: the broker's state.

Topic metadata is persisted under ``--data-dir`` as ``<dir>/<topic>/topic.json`` (written to a temporary
file, fsynced and renamed, so a crash leaves either no topic or a whole one), beside one directory per partition
(durable.py). All durable partitions share one batch cache of ``cache_bytes``, the bound on the memory their
records take. Committed offsets stay in memory only: the seed says they are lost on restart (§Offset Commit
Request, "in-memory only"), even with a data dir.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.broker.batchlog import DEFAULT_CACHE_BYTES, write_atomically
from wirecheck.broker.rustlog.durable import DurableLog, ThreadSafeCache, fsync_dir
from wirecheck.broker.rustlog.log import PartitionLog
from wirecheck.broker.rustlog.schema import TOPIC_NAME

log = logging.getLogger("wirecheck.broker.rustlog")

METADATA = "topic.json"


@dataclass
class Topic:
    name: str
    partitions: list[PartitionLog | DurableLog]


@dataclass
class Counters:
    """MetricsFetch counters (decision D10); bytes count decoded payload bytes, messages count records."""

    messages_produced_total: int = 0
    messages_fetched_total: int = 0
    bytes_in_total: int = 0
    bytes_out_total: int = 0


@dataclass
class Store:
    data_dir: Path | None
    segment_records: int = 1000
    retention_records: int | None = None
    fsync: bool = True
    cache_bytes: int = DEFAULT_CACHE_BYTES
    log_end_short: bool = False  # fault rustlog.safety-log-end-reused (faults_safety.py)
    topics: dict[str, Topic] = field(default_factory=dict)
    commits: dict[tuple, int] = field(default_factory=dict)
    counters: Counters = field(default_factory=Counters)

    def __post_init__(self):
        self._create_lock = asyncio.Lock()
        if self.data_dir is not None:
            self.cache = ThreadSafeCache(self.cache_bytes)  # appends fill it from worker threads
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._load()

    def topic_dir(self, name: str) -> Path:
        # A valid name is a safe directory name ([A-Za-z0-9_-], no dots). Only the topic-name-unchecked fault
        # lets other names in; they get a hashed directory ('~' is never in a valid name) and keep their name
        # in topic.json.
        if TOPIC_NAME.fullmatch(name):
            return self.data_dir / name
        return self.data_dir / ("~" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest())

    def _partition_log(self, topic_dir: Path | None, partition: int) -> PartitionLog | DurableLog:
        if topic_dir is None:
            return PartitionLog(self.segment_records, self.retention_records)
        return DurableLog(topic_dir / str(partition), self.cache, self.segment_records, self.retention_records,
                          self.fsync, log_end_short=self.log_end_short)

    def _load(self) -> None:
        for entry in sorted(self.data_dir.iterdir()):
            meta_path = entry / METADATA
            if not meta_path.is_file():
                continue
            try:
                meta = json.loads(meta_path.read_text("utf-8"))
                name, count = meta["name"], meta["partition_count"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("skipping %s: unreadable topic metadata (%s)", entry, exc)
                continue
            self.topics[name] = Topic(name, [self._partition_log(entry, p) for p in range(count)])

    async def create_topic(self, name: str, partition_count: int) -> Topic | None:
        """Create a topic; None if it already exists. Durable mode persists the metadata first."""
        async with self._create_lock:  # no await between the existence check and the insert by others
            if name in self.topics:
                return None
            directory = None
            if self.data_dir is not None:
                directory = self.topic_dir(name)
                await asyncio.to_thread(self._write_metadata, directory, name, partition_count)
            topic = Topic(name, [self._partition_log(directory, p) for p in range(partition_count)])
            self.topics[name] = topic
            return topic

    def provision(self, topics: dict[str, int]) -> None:
        """Topics that exist before any client connects (an operator's pre-created topics); existing ones are kept."""
        for name, partition_count in topics.items():
            if name in self.topics:
                continue
            directory = None
            if self.data_dir is not None:
                directory = self.topic_dir(name)
                self._write_metadata(directory, name, partition_count)
            self.topics[name] = Topic(name, [self._partition_log(directory, p) for p in range(partition_count)])

    def _write_metadata(self, directory: Path, name: str, partition_count: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        metadata = json.dumps({"name": name, "partition_count": partition_count}).encode()
        write_atomically(directory / METADATA, metadata, self.fsync)
        if self.fsync:
            fsync_dir(self.data_dir)  # the topic directory's own name

    @property
    def partition_total(self) -> int:
        return sum(len(topic.partitions) for topic in self.topics.values())

    def close(self) -> None:
        for topic in self.topics.values():
            for partition in topic.partitions:
                if isinstance(partition, DurableLog):
                    partition.close()
