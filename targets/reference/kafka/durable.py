"""The optional durable log of the Kafka personality (``--data-dir``): stored batches survive a restart.

Layout under ``<data-dir>/kafka/``:
    topics.json                  every topic: name, partition count, topic id (hex), timestamp type;
                                 rewritten atomically (write + rename) on create and delete
    logs/<topic-id>-<n>.log      partition n's stored batches, appended exactly as served (offsets assigned)

fsync policy (``--fsync``): ``batch`` fsyncs the partition file before the produce is acknowledged; ``none``
leaves flushing to the OS. On start the logs are replayed; a torn tail (an incomplete last batch or one whose
CRC-32C does not match) is cut off, as Kafka's log recovery truncates an unflushed segment.
What is not kept: committed offsets, groups and producer state (all in memory), and retention only trims the
in-memory view (the files keep every batch until the topic is deleted).
"""

from __future__ import annotations

import json
import logging
import os
import struct
from pathlib import Path

import crc32c

from wirecheck.targets.reference.kafka import records

log = logging.getLogger("wirecheck.broker.kafka")
MAX_OPEN_FILES = 128


class DurableLog:
    def __init__(self, data_dir: Path, fsync: bool):
        self.root = Path(data_dir) / "kafka"
        self.logs = self.root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._files: dict[tuple[bytes, int], object] = {}

    def _path(self, topic_id: bytes, partition: int) -> Path:
        return self.logs / f"{topic_id.hex()}-{partition}.log"

    # ------------------------------------------------------------------------------------------ writing

    def save_topics(self, topics) -> None:
        doc = [{"name": t.name, "partitions": len(t.partitions), "topic_id": t.topic_id.hex(),
                "log_append_time": t.log_append_time, "configs": t.configs} for t in topics]
        tmp = self.root / "topics.json.tmp"
        tmp.write_text(json.dumps(doc))
        if self.fsync:
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
        tmp.replace(self.root / "topics.json")

    def append(self, topic_id: bytes, partition: int, stored: bytes) -> None:
        key = (topic_id, partition)
        f = self._files.get(key)
        if f is None:
            if len(self._files) >= MAX_OPEN_FILES:  # many partitions must not exhaust file descriptors
                self._files.pop(next(iter(self._files))).close()
            f = self._files[key] = open(self._path(topic_id, partition), "ab")
        f.write(stored)
        f.flush()
        if self.fsync:
            os.fsync(f.fileno())

    def drop(self, topic_id: bytes, partitions: int) -> None:
        for n in range(partitions):
            f = self._files.pop((topic_id, n), None)
            if f is not None:
                f.close()
            self._path(topic_id, n).unlink(missing_ok=True)

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    # ------------------------------------------------------------------------------------------ recovery

    def load(self, storage) -> None:
        """Recreate every saved topic in ``storage`` and replay its partitions' batches."""
        index = self.root / "topics.json"
        if not index.exists():
            return
        for entry in json.loads(index.read_text()):
            topic = storage.create(entry["name"], entry["partitions"], log_append_time=entry["log_append_time"],
                                   topic_id=bytes.fromhex(entry["topic_id"]), persist=False,
                                   configs=entry.get("configs"))
            for partition in topic.partitions:
                self._replay(topic.topic_id, partition)

    def _replay(self, topic_id: bytes, partition) -> None:
        path = self._path(topic_id, partition.index)
        if not path.exists():
            return
        data = path.read_bytes()
        pos = 0
        while pos + records.LOG_OVERHEAD <= len(data):
            (length,) = struct.unpack_from(">i", data, pos + 8)
            end = pos + records.LOG_OVERHEAD + length
            if length < records.HEADER_SIZE - records.LOG_OVERHEAD or end > len(data):
                break
            batch_bytes = data[pos:end]
            batch = records.parse_header(batch_bytes)
            if crc32c.crc32c(batch_bytes[records.CRC_START:]) != batch.crc:
                break
            partition.restore(batch_bytes, batch)
            pos = end
        if pos < len(data):
            log.warning("%s: cutting a torn tail of %d bytes", path.name, len(data) - pos)
            with open(path, "r+b") as f:
                f.truncate(pos)
