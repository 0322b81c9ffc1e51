"""The SC's view of the SPU's topic store: topic configs, the metadata epoch and the change log watches read.

One epoch counts every change. D4 (sc.py): the change log keeps the last CHANGE_LOG changes (bounded memory); a
watcher that falls behind it gets ``all`` again. Partitions are named "<topic>-<index>" (ReplicaKey's Display);
the one SPU has id SPU_ID and the SPU's public port, and leads every partition.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass

from wirecheck.broker.fluvio import sc_messages as sm
from wirecheck.broker.fluvio.faults import FluvioFaults
from wirecheck.broker.fluvio.storage import Storage, Topic

SPU_ID = 5001
EMPTY_KINDS = {"SmartModule", "SpuGroup", "TableFormat", "CustomSpu"}
CHANGE_LOG = 1024
SETTLE_LIMIT = 1.0


@dataclass
class TopicConfig:
    partitions: int
    replication: int = 1
    compression: int = sm.COMPRESSION_ANY
    system: bool = False


@dataclass
class Change:
    epoch: int
    label: str  # "Topic" or "Partition"
    name: str
    deleted: bool
    topic: str
    config: TopicConfig
    index: int = 0


class ControlPlane:
    """Topic configs beside the SPU's store, the epoch and the bounded change log that watches read."""

    def __init__(self, storage: Storage, spu_host: str, faults: FluvioFaults):
        self.storage = storage
        self.spu_host = spu_host
        self.spu_port = 0
        self.faults = faults
        self.epoch = 1
        self.configs: dict[str, TopicConfig] = {name: TopicConfig(len(t.partitions))
                                                for name, t in storage.topics.items()}
        self.log: collections.deque[Change] = collections.deque(maxlen=CHANGE_LOG)
        self.wakers: set[asyncio.Event] = set()
        self.sent: dict[asyncio.Event, int] = {}  # each Topic/Partition watch -> the epoch it has delivered
        storage.watchers.append(self._changed)

    async def settled(self, limit: float = SETTLE_LIMIT) -> None:
        """Wait (up to ``limit`` seconds) until every Topic/Partition watch has delivered the current epoch, so
        that a client which reads a Create / Delete Status already holds the change (D7)."""
        deadline = asyncio.get_running_loop().time() + limit
        while any(epoch < self.epoch for epoch in self.sent.values()):
            if asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.002)

    def _changed(self, name: str, topic: Topic, deleted: bool) -> None:
        config = self.configs.pop(name, None) if deleted else self.configs.setdefault(
            name, TopicConfig(len(topic.partitions)))
        config = config or TopicConfig(len(topic.partitions))
        self.epoch += 1
        self.log.append(Change(self.epoch, sm.TOPIC_LABEL, name, deleted, name, config))
        for index in range(config.partitions):
            self.log.append(Change(self.epoch, sm.PARTITION_LABEL, f"{name}-{index}", deleted, name, config,
                                   index))
        for waker in self.wakers:
            waker.set()

    @property
    def shown_epoch(self) -> int:
        """The epoch an answer carries (the fault: always the first one, though changes are still tracked)."""
        return 1 if self.faults.sc_watch_epoch_stale else self.epoch

    # -------------------------------------------------------------------------------- object encodings

    def spu_objects(self, version: int) -> list[bytes]:
        return [sm.spu(SPU_ID, self.spu_host, self.spu_port, version)]

    def topic_object(self, name: str, config: TopicConfig, version: int) -> bytes:
        return sm.topic(name, config.partitions, config.replication, SPU_ID, config.compression, config.system,
                        version)

    def partition_object(self, topic: str, index: int, config: TopicConfig, version: int) -> bytes:
        partition = self.storage.partition(topic, index)
        hw = leo = size = start = 0
        if partition is not None:
            hw, leo, size, start = partition.hw, partition.leo, partition.size, partition.log_start
        return sm.partition(topic, index, SPU_ID, hw, leo, size, start, config.compression, config.system,
                            version)

    def all_of(self, label: str, version: int, names: list[str] | None = None,
               system: bool | None = None) -> list[bytes] | None:
        """Every object of a kind (filtered by name when names are given, and for List, by ``system``: a List
        names either system topics only or user topics only, objects/list.rs); None for an unknown label."""
        def wanted(name: str) -> bool:
            return not names or name in names

        if label == sm.SPU_LABEL:
            return [o for o in self.spu_objects(version) if wanted(str(SPU_ID))]
        if label == sm.TOPIC_LABEL:
            return [self.topic_object(n, c, version) for n, c in self.configs.items()
                    if wanted(n) and (system is None or c.system == system)]
        if label == sm.PARTITION_LABEL:
            return [self.partition_object(n, i, c, version) for n, c in self.configs.items()
                    for i in range(c.partitions) if wanted(f"{n}-{i}")]
        if label in EMPTY_KINDS:
            return []
        return None

    def changes_since(self, label: str, epoch: int, version: int) -> list[tuple[int, bytes]] | None:
        """The change messages of one kind after ``epoch``; None when the log no longer reaches back there."""
        if self.log and self.log[0].epoch > epoch + 1 and self.epoch > epoch:
            return None
        out = []
        for change in self.log:
            if change.epoch <= epoch or change.label != label:
                continue
            if label == sm.TOPIC_LABEL:
                body = self.topic_object(change.name, change.config, version)
            else:
                body = self.partition_object(change.topic, change.index, change.config, version)
            out.append((sm.DELETE if change.deleted else sm.UPDATE, body))
        return out
