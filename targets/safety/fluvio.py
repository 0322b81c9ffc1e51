"""The Fluvio safety workload: the ``fluvio`` Python client (bindings of the Rust client) writes unique values to the
partitions of one topic and reads them back, recording every operation (reports/safety/history.py).

- producers: ``send`` operations of 1-3 values to one partition (a producer per partition, its specific
  partitioner), each value's offset from its RecordMetadata. Safe settings: at-most-once delivery (the client never
  resends a record on its own: Fluvio has no idempotent producer, so a resend after a lost answer would be a
  duplicate the server cannot prevent) and ReadCommitted isolation (answered once the record is committed);
- consumers: an ``assign`` (every partition from offset 0), then ``poll`` operations, each reading every partition
  from the consumer's own next offset to the partition's end (a consumer stream with continuous reading off, so a
  read ends instead of waiting for more); a poll that fails is ``info`` and its position stays;
- every client is dropped and replaced after a random number of operations, and its process is killed -9 now and
  then (supervisor.py);
- the final read: a new consumer reads every partition from offset 0 until every acknowledged value has been seen.

The clients start at the SC (``BOOTSTRAP``), whose SPU objects name the SPU; behind the fault proxy they name a
proxy listener in front of it (fluvio_address.py). Fluvio has no transactions: aborted and precommitted reads cannot
occur (``UNJUDGED``). The client holds the GIL while it waits on the server, so a stalled call cannot be timed out
from inside: the producer's own timeout bounds each send, and a process stuck past that is one the supervisor's
crashes replace.
"""

from __future__ import annotations

import logging
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.safety.fluvio_address import FluvioAddressRewriter
from wirecheck.targets.safety.run import Run
from wirecheck.targets.safety.workload import ClientWorkload

TOPIC_PREFIX = "wirecheck-safety-"  # + a run id: a target reused across runs never mixes their values
BOOTSTRAP = "sc"  # the reference broker's port the clients start from (the SPU's comes from the SC)
ROLES = {"send": 3, "poll": 2}
UNJUDGED = {"aborted-read": "Fluvio has no transactions", "precommitted-read": "Fluvio has no transactions"}
PARTITIONS = 4
FINAL_READ_S = 60.0
SEND_TIMEOUT_MS = 5000  # the producer's own bound on an unanswered send


class FluvioWorkload(ClientWorkload):

    def key_of(self, partition: int) -> str:
        return f"{self.topic}/{partition}"

    def config(self):
        import fluvio

        config = fluvio.FluvioConfig.new(self.bootstrap)  # no profile in $HOME needed
        config.disable_tls()
        config.set_use_spu_local_address(False)  # the SPU the SC names (the proxy's listener), not its own idea
        return config

    def connect(self):
        import fluvio

        return fluvio.Fluvio.connect_with_config(self.config())

    # ------------------------------------------------------------------------------------------ setup

    def create_topic(self, timeout: float = 60.0) -> None:
        """In a child process: the client holds the GIL while it waits, and this process runs the fault proxy."""
        try:
            done = subprocess.run([sys.executable, "-m", __name__, self.bootstrap, self.topic], capture_output=True,
                                  text=True, timeout=timeout + 10)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"could not create topic {self.topic} on {self.bootstrap} in {timeout:.0f} s") from None
        if done.returncode:
            raise HarnessError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else
                               f"creating topic {self.topic} exited with status {done.returncode}")

    def _create_topic(self, timeout: float = 60.0) -> None:
        import fluvio

        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            try:
                admin = fluvio.FluvioAdmin.connect_with_config(self.config())
            except Exception as exc:  # the SC is not there yet
                last = str(exc)
                time.sleep(1)
                continue
            try:
                admin.create_topic(self.topic, fluvio.TopicSpec.create().with_partitions(PARTITIONS).build())
                return
            except Exception as exc:  # the client's errors are text: an existing topic is checked, others retried
                last = str(exc)
                if "exist" in last.lower():
                    self._check_partitions(admin)
                    return
            time.sleep(1)
        raise HarnessError(f"could not create topic {self.topic} on {self.bootstrap} in {timeout:.0f} s: {last}")

    def _check_partitions(self, admin) -> None:
        count = sum(1 for p in admin.list_partitions([]) if p.name().rsplit("-", 1)[0] == self.topic)
        if count != PARTITIONS:
            raise HarnessError(f"topic {self.topic} exists with {count} partitions, not {PARTITIONS}: delete it or "
                               f"start the target empty")

    # ------------------------------------------------------------------------------------------ clients

    def loops(self):
        return {"send": self._producer_loop, "poll": self._consumer_loop}

    def _producer(self, client, partition: int):
        import fluvio

        builder = fluvio.TopicProducerConfigBuilder()
        builder = builder.set_specific_partitioner(partition).delivery_semantic(fluvio.DeliverySemantic.AtMostOnce)
        builder = builder.isolation(fluvio.Isolation.ReadCommitted).timeout(SEND_TIMEOUT_MS)
        return client.topic_producer_with_config(self.topic, builder.build())

    def _producer_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            try:
                client = self.connect()
            except Exception as exc:  # the SC is away (a restart, a proxy fault): a new client soon
                self.log.info("process %s: connect: %s", process, exc)
                self.run.stop.wait(0.5)
                continue
            producers: dict[int, object] = {}
            for _ in range(self._life()):
                if not self._pace() or not self._send(process, client, producers):
                    break

    def _send(self, process: int, client, producers: dict) -> bool:
        """One send operation; False when the client is to be replaced."""
        partition = self.rng.randrange(PARTITIONS)
        key, values = self.key_of(partition), self.run.values(self.rng.randint(1, 3))
        self.run.record("invoke", process, "send", [["send", key, v] for v in values])
        offsets: dict[int, int] = {}
        try:
            if partition not in producers:
                producers[partition] = self._producer(client, partition)
            producer = producers[partition]
            outputs = [(value, producer.send([], str(value).encode())) for value in values]
            producer.flush()
            for value, output in outputs:
                metadata = output.wait()
                if metadata.partition_id() != partition:
                    raise HarnessError(f"a record sent to partition {partition} was answered for partition "
                                       f"{metadata.partition_id()}")
                offsets[value] = metadata.offset()
        except HarnessError:
            raise
        except Exception as exc:  # no answer, a lost connection, an error code: it may or may not have taken effect
            self.run.record("info", process, "send", [["send", key, [offsets.get(v), v]] for v in values],
                            error=str(exc))
            return False
        self.run.record("ok", process, "send", [["send", key, [offsets[v], v]] for v in values])
        return True

    def _consumer_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            try:
                client = self.connect()
            except Exception as exc:  # as the producer's
                self.log.info("process %s: connect: %s", process, exc)
                self.run.stop.wait(0.5)
                continue
            positions = self._assigned(process)
            for _ in range(self._life()):
                if not self._pace() or self._poll(process, client, positions) is None:
                    break

    def _assigned(self, process: int) -> dict[int, int]:
        keys = [self.key_of(p) for p in range(PARTITIONS)]
        self.run.record("invoke", process, "assign", keys)
        self.run.record("ok", process, "assign", keys)
        return dict.fromkeys(range(PARTITIONS), 0)

    def _poll(self, process: int, client, positions: dict[int, int]) -> dict[str, list] | None:
        """Every partition from the consumer's next offset to its end; None when the client is to be replaced."""
        import fluvio

        self.run.record("invoke", process, "poll", [["poll"]])
        reads: dict[str, list] = {}
        moved = dict(positions)
        try:
            for partition in range(PARTITIONS):
                builder = fluvio.ConsumerConfigExtBuilder(self.topic)
                builder.partition(partition)
                builder.offset_start(fluvio.Offset.absolute(moved[partition]))
                builder.disable_continuous(True)  # to the partition's end, then the stream ends
                for record in client.consumer_with_config(builder.build()):
                    raw = bytes(record.value())
                    try:
                        value: int | str = int(raw)
                    except ValueError:
                        value = raw.decode(errors="replace")  # not a value we wrote: the checker finds no writer
                    reads.setdefault(self.key_of(partition), []).append([record.offset(), value])
                    moved[partition] = record.offset() + 1
        except Exception as exc:  # nothing of a failed poll is claimed: its position stays
            self.run.record("info", process, "poll", [["poll"]], error=str(exc))
            return None
        positions.update(moved)
        self.run.record("ok", process, "poll", [["poll", reads]])
        return reads

    # ------------------------------------------------------------------------------------------ final read

    def final_read(self, owed: set, timeout: float = FINAL_READ_S) -> bool:
        """Read every partition from offset 0 until every ``owed`` value is seen; True if they all were."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            process = self.run.process()
            try:
                client = self.connect()
            except Exception as exc:  # the target may still be coming back
                self.log.info("final read: connect: %s", exc)
                time.sleep(1)
                continue
            positions = self._assigned(process)
            while owed and time.monotonic() < end:
                reads = self._poll(process, client, positions)
                if reads is None:
                    break
                for pairs in reads.values():
                    owed.difference_update(value for _, value in pairs)
                if owed:
                    time.sleep(0.2)
            if not owed:
                self._poll(process, client, positions)  # once more: a value read twice shows as a duplicate
                return True
        return not owed


# what the shared runner asks of a protocol's workload module (ProtocolSpec.safety)
Workload = FluvioWorkload
address_rewriter = FluvioAddressRewriter


def _create(bootstrap: str, topic: str) -> int:
    """``python -m wirecheck.targets.safety.fluvio BOOTSTRAP TOPIC``: the topic created (create_topic's child)."""
    run = Run(Path(os.devnull), time.monotonic())  # no history: setup is not an operation
    try:
        FluvioWorkload(bootstrap, topic, run, random.Random(0), logging.getLogger("setup"))._create_topic()
    except HarnessError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_create(sys.argv[1], sys.argv[2]))
