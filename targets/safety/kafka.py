"""The Kafka safety workload: confluent-kafka (librdkafka), kafka-python and the Apache Kafka Java client
(kafka-clients) with safe settings write unique values to a few partitions and read them back, recording every
operation (reports/safety/history.py). The client slots KAFKA_PYTHON_SLOTS names run kafka-python
(kafka_python.py), those KAFKA_JAVA_SLOTS names run kafka-clients in a JVM that writes its own history lines
(kafka_java.py, suites/kafka/clients/java SafetyClient.java), the others confluent-kafka (below); all record the
same operations the same way. A run needs java and the Java driver's built jar (a HarnessError before any client
starts otherwise).

- idempotent producers (acks=all, enable.idempotence): ``send`` operations of 1-3 values to one partition;
- transactional producers (one transactional.id per slot, so a replacement fences its predecessor): ``txn``
  operations of 1-4 values to one or two partitions, committed, or aborted on purpose one time in ten;
- consumers (read_committed, assign instead of subscribe, no auto-commit, no group membership): ``poll``
  operations from the start of every partition;
- every client is closed and replaced after a random number of operations; each role runs in a child process of its
  own (client.py), which the supervisor kills (-9) now and then: a client crash, whose open operation is
  indeterminate (supervisor.py);
- the final read: a new consumer reads every partition from the start until every acknowledged value has been
  seen, or FINAL_READ_S has passed.

Timeouts are short (librdkafka's defaults wait minutes) so that a fault makes operations indeterminate, not the
run stall.
"""

from __future__ import annotations

import time

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.safety.kafka_address import KafkaAddressRewriter
from wirecheck.targets.safety.workload import ClientWorkload

TOPIC_PREFIX = "wirecheck-safety-"  # + a run id: a target reused across runs never mixes their values
PARTITIONS = 4
FINAL_READ_S = 60.0
ABORT_CHANCE = 0.1  # per transaction: aborted on purpose
OP_TIMEOUT_S = 15.0
ROLES = {"send": 4, "txn": 3, "poll": 3}  # role -> client processes at once (supervisor.py)
#: role -> the client slots (of ROLES: send 0-3, txn 0-2, poll 0-2) that run kafka-python, and those that run
#: kafka-clients (a JVM each: kafka_java.py); the others, and the final read, are confluent-kafka's
KAFKA_PYTHON_SLOTS = {"send": (2,), "txn": (1,), "poll": (1,)}
KAFKA_JAVA_SLOTS = {"send": (3,), "txn": (2,), "poll": (2,)}

COMMON = {"enable.metrics.push": False, "request.timeout.ms": 5000, "socket.timeout.ms": 5000, "reconnect.backoff.ms": 50,
          "reconnect.backoff.max.ms": 1000, "retry.backoff.ms": 100, "topic.metadata.refresh.interval.ms": 5000}
PRODUCER = {**COMMON, "enable.idempotence": True, "acks": "all", "linger.ms": 2, "message.timeout.ms": 10000}
CONSUMER = {**COMMON, "enable.auto.commit": False, "isolation.level": "read_committed",
            "auto.offset.reset": "earliest", "fetch.wait.max.ms": 200, "session.timeout.ms": 10000}


class KafkaWorkload(ClientWorkload):

    def key_of(self, partition: int) -> str:
        return f"{self.topic}/{partition}"

    def config(self, base: dict, **extra) -> dict:
        return {"bootstrap.servers": self.bootstrap, "logger": self.log, **base, **extra}

    # ------------------------------------------------------------------------------------------ setup

    def create_topic(self, timeout: float = 60.0) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient(self.config(COMMON))
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            future = admin.create_topics([NewTopic(self.topic, PARTITIONS, 1)], request_timeout=10)[self.topic]
            try:
                future.result(15)
                return
            except KafkaException as exc:
                error = exc.args[0]
                if error.name() == "TOPIC_ALREADY_EXISTS":
                    metadata = admin.list_topics(self.topic, timeout=10)
                    count = len(metadata.topics[self.topic].partitions)
                    if count != PARTITIONS:
                        raise HarnessError(f"topic {self.topic} exists with {count} partitions, not {PARTITIONS}: "
                                           f"delete it or start the target empty") from None
                    return
                last = error.str()
            time.sleep(1)
        raise HarnessError(f"could not create topic {self.topic} on {self.bootstrap} in {timeout:.0f} s: {last}")

    # ------------------------------------------------------------------------------------------ clients

    def role(self, name: str) -> None:
        """Run one role's client loop until the run stops (in a child process: client.py)."""
        if self.slot in KAFKA_JAVA_SLOTS.get(name, ()):
            raise HarnessError(f"{name} slot {self.slot} is kafka-clients': its process runs the JVM (client_argv)")
        python = self.slot in KAFKA_PYTHON_SLOTS.get(name, ())
        # which client a process runs, in its log (client-N.log), as the Java client says it too
        self.log.info("%s safety client: role %s slot %s", "kafka-python" if python else "confluent-kafka", name,
                      self.slot)
        if python:
            from wirecheck.targets.safety.kafka_python import KafkaPythonClients

            KafkaPythonClients(self).role(name)
            return
        super().role(name)

    def loops(self):
        return {"send": self._producer_loop, "txn": self._transactional_loop, "poll": self._consumer_loop}

    def _producer_loop(self) -> None:
        from confluent_kafka import KafkaException, Producer

        while not self.run.stop.is_set():
            process = self.run.process()
            producer = Producer(self.config(PRODUCER))
            for _ in range(self._life()):
                if not self._pace():
                    break
                partition = self.rng.randrange(PARTITIONS)
                key, values = self.key_of(partition), self.run.values(self.rng.randint(1, 3))
                self.run.record("invoke", process, "send", [["send", key, v] for v in values])
                delivered: dict[int, tuple[int | None, str | None]] = {}
                try:
                    for value in values:
                        producer.produce(self.topic, value=str(value).encode(), partition=partition,
                                         on_delivery=_delivery(delivered, value))
                except Exception as exc:  # BufferError, KafkaException: the producer cannot take it
                    self._indeterminate(process, "send", key, values, delivered, f"produce: {exc}")
                    break
                try:
                    producer.flush(OP_TIMEOUT_S)
                except KafkaException as exc:  # a fatal error (e.g. sequence desynchronisation): replaced
                    self._indeterminate(process, "send", key, values, delivered, f"flush: {exc.args[0].str()}")
                    break
                errors = [err for _, err in delivered.values() if err]
                if len(delivered) == len(values) and not errors:
                    self.run.record("ok", process, "send", [["send", key, [delivered[v][0], v]] for v in values])
                else:
                    self._indeterminate(process, "send", key, values, delivered,
                                        "; ".join(errors) or "not delivered in time")
                    if any("fatal" in e.lower() for e in errors):
                        break
            _quietly(producer.flush, 5)

    def _transactional_loop(self) -> None:
        from confluent_kafka import KafkaException, Producer

        while not self.run.stop.is_set():
            process = self.run.process()
            producer = Producer(self.config(PRODUCER, **{"transactional.id": f"wirecheck-safety-{self.slot}",
                                                         "transaction.timeout.ms": 10000}))
            try:
                producer.init_transactions(OP_TIMEOUT_S)
            except KafkaException as exc:
                self.log.warning("process %s: init_transactions: %s", process, exc)
                self.run.stop.wait(0.5)
                continue
            for _ in range(self._life()):
                if not self._pace() or self._transaction(process, producer) != "continue":
                    break
            _quietly(producer.flush, 5)

    def _transaction(self, process: int, producer) -> str:
        """One txn operation: 'continue', or 'replace' (the producer is unusable)."""
        from confluent_kafka import KafkaException

        partitions = self.rng.sample(range(PARTITIONS), self.rng.randint(1, 2))
        plan = [(self.key_of(p), p, v) for p in partitions for v in self.run.values(self.rng.randint(1, 2))]
        self.run.record("invoke", process, "txn", [["send", key, v] for key, _, v in plan])
        delivered: dict[int, tuple[int | None, str | None]] = {}
        commit_time: float | None = None

        def record(type_: str, **extra) -> None:
            value = [["send", key, [delivered.get(v, (None, None))[0], v]] for key, _, v in plan]
            if commit_time is not None:
                extra["commit_time"] = commit_time
            self.run.record(type_, process, "txn", value, **{k: v for k, v in extra.items() if v is not None})

        try:
            producer.begin_transaction()
            for _key, partition, value in plan:
                producer.produce(self.topic, value=str(value).encode(), partition=partition,
                                 on_delivery=_delivery(delivered, value))
            producer.flush(OP_TIMEOUT_S)
            errors = [err for _, err in delivered.values() if err]
            if self.rng.random() < ABORT_CHANCE or errors or len(delivered) != len(plan):
                producer.abort_transaction(OP_TIMEOUT_S)
                record("fail", abort=True, error="; ".join(errors) or None)
                return "continue"
            commit_time = self.run.clock()
            producer.commit_transaction(OP_TIMEOUT_S)
            record("ok")
            return "continue"
        except KafkaException as exc:
            error = exc.args[0].str()
            if exc.args[0].txn_requires_abort():
                try:
                    producer.abort_transaction(OP_TIMEOUT_S)
                    commit_time = None  # certainly aborted: no commit took effect
                    record("fail", abort=True, error=error)
                    return "continue"
                except KafkaException as again:
                    error += f"; abort: {again.args[0].str()}"
            # indeterminate; commit_time says whether a commit was requested (a read before it is precommitted)
            record("info", error=error)
            return "replace"

    def _consumer_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            consumer = self._assigned(process)
            for _ in range(self._life()):
                if not self._pace():
                    break
                self._poll(process, consumer)
            _quietly(consumer.close)

    def _assigned(self, process: int):
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer(self.config(CONSUMER, **{"group.id": f"wirecheck-safety-{process}"}))
        keys = [self.key_of(p) for p in range(PARTITIONS)]
        self.run.record("invoke", process, "assign", keys)
        consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.run.record("ok", process, "assign", keys)
        return consumer

    def _poll(self, process: int, consumer, timeout: float = 0.5) -> dict[str, list]:
        self.run.record("invoke", process, "poll", [["poll"]])
        reads: dict[str, list] = {}
        try:
            messages = consumer.consume(500, timeout)
        except Exception as exc:  # KafkaException from the consumer itself: nothing read
            self.run.record("info", process, "poll", [["poll"]], error=str(exc))
            return reads
        for message in messages:
            if message.error():
                self.log.info("process %s: poll: %s", process, message.error())
                continue
            raw = message.value() or b""
            try:
                value: int | str = int(raw)
            except ValueError:
                value = raw.decode(errors="replace")  # not a value we wrote: the checker finds no writer
            reads.setdefault(self.key_of(message.partition()), []).append([message.offset(), value])
        self.run.record("ok", process, "poll", [["poll", reads]])
        return reads

    def _indeterminate(self, process: int, f: str, key: str, values: list[int], delivered: dict, error: str) -> None:
        self.run.record("info", process, f, [["send", key, [delivered.get(v, (None, None))[0], v]] for v in values],
                        error=error)

    # ------------------------------------------------------------------------------------------ final read

    def final_read(self, owed: set, timeout: float = FINAL_READ_S) -> bool:
        """Read every partition from the start until every ``owed`` value is seen; True if they all were."""
        process = self.run.process()
        consumer = self._assigned(process)
        end = time.monotonic() + timeout
        while owed and time.monotonic() < end:
            for pairs in self._poll(process, consumer, 1.0).values():
                owed.difference_update(value for _, value in pairs)
        # read on until the partitions' ends too: a value read twice shows as a duplicate only if its copy is read
        for _ in range(3):
            self._poll(process, consumer, 1.0)
        _quietly(consumer.close)
        return not owed


def _delivery(delivered: dict, value: int):
    def callback(err, message) -> None:
        delivered[value] = (None if err else message.offset(), err.str() if err else None)

    return callback


def _quietly(close, *args) -> None:
    """End a client whose last error its operations already recorded (a fatal producer raises again here)."""
    from confluent_kafka import KafkaException

    try:
        close(*args)
    except KafkaException:
        pass


def client_argv(role: str, slot: int, options: dict) -> list[str] | None:
    """The command that takes a client process's place for a role that runs outside Python (the Java slots), or
    None (client.py runs the role itself)."""
    if slot not in KAFKA_JAVA_SLOTS.get(role, ()):
        return None
    from wirecheck.targets.safety import kafka_java

    return kafka_java.argv(role, options)


def check_clients() -> None:
    """Before any client starts: every client the slots name is there (HarnessError if not)."""
    from wirecheck.targets.safety import kafka_java

    if any(KAFKA_JAVA_SLOTS.values()):
        kafka_java.check()


# what the shared runner asks of a protocol's workload module (ProtocolSpec.safety)
Workload = KafkaWorkload
address_rewriter = KafkaAddressRewriter
