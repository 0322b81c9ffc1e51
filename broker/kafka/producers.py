"""Idempotent-producer state: producer ids, epochs and per-partition sequence numbers.

Follows ProducerStateManager/ProducerAppendInfo (Kafka 3.x):
- a batch identical in (epoch, first seq, last seq) to one of the last 5 appended for that producer and
  partition is a retry: answered with NONE and the original base offset, not appended again;
- an older epoch -> 47 INVALID_PRODUCER_EPOCH;
- a newer epoch must start at sequence 0, the same epoch must continue at last + 1 (wrapping at 2^31-1),
  anything else -> 45 OUT_OF_ORDER_SEQUENCE_NUMBER;
- a producer id this broker never issued -> 59 UNKNOWN_PRODUCER_ID. (Decision: Kafka >= 2.5 would treat it as
  a new producer; with in-memory state that never expires, an id we did not issue can only be a client bug.)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from wirecheck.broker.kafka.errors import (INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING, INVALID_REQUEST, NONE,
                                           OUT_OF_ORDER_SEQUENCE_NUMBER, PRODUCER_FENCED, UNKNOWN_PRODUCER_ID)

MAX_CACHED_BATCHES = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN


@dataclass
class _PartitionState:
    epoch: int
    last_seq: int = -1
    #: (first, last, base, timestamp): Kafka's BatchMetadata, the timestamp the batch's max (its append time
    #: under LogAppendTime), which a duplicate's answer repeats
    recent: deque = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))


class Producers:
    def __init__(self):
        self.next_id = 1000
        self.epochs: dict[int, int] = {}  # producer id -> current epoch
        self.transactional: dict[str, int] = {}
        self._state: dict[tuple[str, int, int], _PartitionState] = {}

    def init(self, transactional_id: str | None, producer_id: int, epoch: int) -> tuple[int, int, int]:
        """InitProducerId: (error, producer id, epoch), as KafkaApis/TransactionCoordinator answer it.

        - producer id and epoch must both be -1 or both be set, and a transactional id must not be empty,
          else 42 INVALID_REQUEST;
        - no transactional id: always a fresh producer id with epoch 0 (the request's id/epoch are ignored);
        - a transactional id: the same producer id, epoch bumped (fencing the previous holder); when the request
          names an id/epoch (KIP-360) they must be the current ones: another id is 49
          INVALID_PRODUCER_ID_MAPPING, another epoch 90 PRODUCER_FENCED.
        """
        if (producer_id == -1) != (epoch == -1) or transactional_id == "":
            return INVALID_REQUEST, -1, -1
        if transactional_id is None:
            return NONE, self._new_id(), 0
        pid = self.transactional.get(transactional_id)
        if pid is None:
            pid = self.transactional[transactional_id] = self._new_id()
            return NONE, pid, 0
        if producer_id != -1 and producer_id != pid:
            return INVALID_PRODUCER_ID_MAPPING, -1, -1
        if producer_id != -1 and epoch != self.epochs[pid]:
            return PRODUCER_FENCED, -1, -1
        self.epochs[pid] = (self.epochs[pid] + 1) & 0x7FFF
        return NONE, pid, self.epochs[pid]

    def _new_id(self) -> int:
        pid = self.next_id
        self.next_id += 1
        self.epochs[pid] = 0
        return pid

    def check(self, topic: str, partition: int, pid: int, epoch: int, first_seq: int, last_seq: int,
              check_sequences: bool = True) -> tuple[int, tuple[int, int] | None]:
        """Before an append: (error, (base offset, timestamp) of a duplicate or None)."""
        if pid not in self.epochs:
            return UNKNOWN_PRODUCER_ID, None
        if epoch < self.epochs[pid]:
            return INVALID_PRODUCER_EPOCH, None
        state = self._state.get((topic, partition, pid))
        if state is not None and state.epoch == epoch:
            for first, last, base, timestamp in state.recent:
                if first == first_seq and last == last_seq:
                    return NONE, (base, timestamp)
            expected = 0 if state.last_seq == 0x7FFFFFFF else state.last_seq + 1
        else:
            expected = 0
        if first_seq != expected and check_sequences:  # check_sequences off: a fault (a retry is still one)
            return OUT_OF_ORDER_SEQUENCE_NUMBER, None
        return NONE, None

    def record(self, topic: str, partition: int, pid: int, epoch: int, first_seq: int, last_seq: int,
               base: int, timestamp: int = -1) -> None:
        if epoch > self.epochs.get(pid, -1):
            self.epochs[pid] = epoch
        key = (topic, partition, pid)
        state = self._state.get(key)
        if state is None or state.epoch != epoch:
            state = self._state[key] = _PartitionState(epoch)
        state.last_seq = last_seq
        state.recent.append((first_seq, last_seq, base, timestamp))

    def forget_topic(self, topic: str) -> None:
        for key in [k for k in self._state if k[0] == topic]:
            del self._state[key]

    def active(self, topic: str, partition: int) -> list[tuple[int, int, int, int]]:
        """(producer id, epoch, last sequence, last timestamp) of every producer that wrote to the partition
        (DescribeProducers: Apache Kafka's ProducerStateEntry.lastTimestamp, its last batch's timestamp)."""
        return [(pid, state.epoch, state.last_seq, state.recent[-1][3] if state.recent else -1)
                for (t, p, pid), state in self._state.items() if t == topic and p == partition]
