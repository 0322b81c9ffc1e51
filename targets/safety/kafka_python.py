"""kafka-python's clients in the Kafka safety workload (kafka.py runs them in the slots KAFKA_PYTHON_SLOTS names),
beside confluent-kafka's, with the same safe settings: idempotent producers with acks=all (kafka-python 3.0.12
has KIP-98 idempotence and transactions), transactional producers that commit or abort, read_committed consumers
that assign partitions (no group: nothing to commit, nothing auto-committed). The operations are recorded exactly
as confluent-kafka's are (kafka.py), so the checker cannot tell the clients apart.

kafka-python raises where librdkafka calls back: a send's future fails with the error, flush() raises
KafkaTimeoutError when delivery outlasts it, and a transaction's calls raise. Decision: a failure before the
commit was requested is aborted on purpose (``fail`` only if the abort succeeded); a failure of
commit_transaction() itself is ``info`` (the commit may have taken effect) and the producer is replaced.
"""

from __future__ import annotations

from wirecheck.targets.safety.kafka import ABORT_CHANCE, OP_TIMEOUT_S, PARTITIONS
from wirecheck.targets.safety.run import Run

REQUEST_TIMEOUT_MS = 5000
COMMON = {"request_timeout_ms": REQUEST_TIMEOUT_MS, "reconnect_backoff_ms": 50, "reconnect_backoff_max_ms": 1000,
          "retry_backoff_ms": 100, "metadata_max_age_ms": 5000, "client_id": "wirecheck-safety"}
PRODUCER = {**COMMON, "acks": "all", "enable_idempotence": True, "linger_ms": 2, "delivery_timeout_ms": 10000,
            "max_block_ms": 15000}
CONSUMER = {**COMMON, "group_id": None, "enable_auto_commit": False, "isolation_level": "read_committed",
            "auto_offset_reset": "earliest", "fetch_max_wait_ms": 200}


class KafkaPythonClients:
    """One role's client loop with kafka-python, for a KafkaWorkload (its topic, run, rng, pacing and keys)."""

    def __init__(self, workload):
        self.workload = workload
        self.run: Run = workload.run
        self.config = {"bootstrap_servers": workload.bootstrap}

    def role(self, name: str) -> None:
        {"send": self._producer_loop, "txn": self._transactional_loop, "poll": self._consumer_loop}[name]()

    # ------------------------------------------------------------------------------------------ sends

    def _producer_loop(self) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        w = self.workload
        while not self.run.stop.is_set():
            process = self.run.process()
            try:
                producer = KafkaProducer(**self.config, **PRODUCER)
            except KafkaError as exc:  # no broker reachable yet (a restart): try again
                w.log.info("process %s: KafkaProducer: %s", process, exc)
                self.run.stop.wait(0.5)
                continue
            for _ in range(w._life()):
                if not w._pace() or not self._send(process, producer):
                    break
            _close(producer.close, 5)

    def _send(self, process: int, producer) -> bool:
        """One send operation; False when the producer must be replaced."""
        from kafka.errors import KafkaError

        w = self.workload
        partition = w.rng.randrange(PARTITIONS)
        key, values = w.key_of(partition), self.run.values(w.rng.randint(1, 3))
        self.run.record("invoke", process, "send", [["send", key, v] for v in values])
        futures = {}
        try:
            for value in values:
                futures[value] = producer.send(w.topic, value=str(value).encode(), partition=partition)
            producer.flush(OP_TIMEOUT_S)
        except KafkaError as exc:
            w._indeterminate(process, "send", key, values, _delivered(futures), f"{type(exc).__name__}: {exc}")
            return False
        delivered = _delivered(futures)
        errors = [error for _, error in delivered.values() if error]
        if len(delivered) == len(values) and not errors:
            self.run.record("ok", process, "send", [["send", key, [delivered[v][0], v]] for v in values])
            return True
        w._indeterminate(process, "send", key, values, delivered, "; ".join(errors) or "not delivered in time")
        return False

    # ------------------------------------------------------------------------------------------ transactions

    def _transactional_loop(self) -> None:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        w = self.workload
        while not self.run.stop.is_set():
            process = self.run.process()
            try:
                producer = KafkaProducer(**self.config, **PRODUCER, transactional_id=f"wirecheck-safety-{w.slot}",
                                         transaction_timeout_ms=10000)
                producer.init_transactions()
            except KafkaError as exc:
                w.log.warning("process %s: init_transactions: %s", process, exc)
                self.run.stop.wait(0.5)
                continue
            for _ in range(w._life()):
                if not w._pace() or self._transaction(process, producer) != "continue":
                    break
            _close(producer.close, 5)

    def _transaction(self, process: int, producer) -> str:
        """One txn operation: 'continue', or 'replace' (the producer is unusable)."""
        from kafka.errors import KafkaError

        w = self.workload
        partitions = w.rng.sample(range(PARTITIONS), w.rng.randint(1, 2))
        plan = [(w.key_of(p), p, v) for p in partitions for v in self.run.values(w.rng.randint(1, 2))]
        self.run.record("invoke", process, "txn", [["send", key, v] for key, _, v in plan])
        futures: dict[int, object] = {}
        commit_time: float | None = None

        def record(type_: str, **extra) -> None:
            delivered = _delivered(futures)
            value = [["send", key, [delivered.get(v, (None, None))[0], v]] for key, _, v in plan]
            if commit_time is not None:
                extra["commit_time"] = commit_time
            self.run.record(type_, process, "txn", value, **{k: v for k, v in extra.items() if v is not None})

        try:
            producer.begin_transaction()
            for _key, partition, value in plan:
                futures[value] = producer.send(w.topic, value=str(value).encode(), partition=partition)
            producer.flush(OP_TIMEOUT_S)
            errors = [error for _, error in _delivered(futures).values() if error]
            if w.rng.random() < ABORT_CHANCE or errors or len(_delivered(futures)) != len(plan):
                producer.abort_transaction()
                record("fail", abort=True, error="; ".join(errors) or None)
                return "continue"
        except KafkaError as exc:  # before any commit request: abort, and the transaction certainly failed
            error = f"{type(exc).__name__}: {exc}"
            try:
                producer.abort_transaction()
                record("fail", abort=True, error=error)
                return "continue"
            except KafkaError as again:
                record("info", error=f"{error}; abort: {type(again).__name__}: {again}")
                return "replace"
        commit_time = self.run.clock()
        try:
            producer.commit_transaction()
        except KafkaError as exc:  # the commit may or may not have taken effect
            record("info", error=f"{type(exc).__name__}: {exc}")
            return "replace"
        record("ok")
        return "continue"

    # ------------------------------------------------------------------------------------------ polls

    def _consumer_loop(self) -> None:
        from kafka.errors import KafkaError

        w = self.workload
        while not self.run.stop.is_set():
            process = self.run.process()
            try:
                consumer = self._assigned(process)
            except KafkaError as exc:
                self.run.record("info", process, "assign", [w.key_of(p) for p in range(PARTITIONS)],
                                error=f"{type(exc).__name__}: {exc}")
                self.run.stop.wait(0.5)
                continue
            for _ in range(w._life()):
                if not w._pace() or self._poll(process, consumer) is None:
                    break
            _close(consumer.close)

    def _assigned(self, process: int):
        from kafka import KafkaConsumer
        from kafka.structs import TopicPartition

        w = self.workload
        keys = [w.key_of(p) for p in range(PARTITIONS)]
        self.run.record("invoke", process, "assign", keys)
        consumer = KafkaConsumer(**self.config, **CONSUMER)
        partitions = [TopicPartition(w.topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        self.run.record("ok", process, "assign", keys)
        return consumer

    def _poll(self, process: int, consumer, timeout: float = 0.5) -> dict[str, list] | None:
        """One poll operation; None (recorded ``info``) when the consumer raised: it is replaced, since its
        position may have moved past records it never returned."""
        from kafka.errors import KafkaError

        w = self.workload
        self.run.record("invoke", process, "poll", [["poll"]])
        try:
            batches = consumer.poll(timeout_ms=int(timeout * 1000), max_records=500)
        except KafkaError as exc:
            self.run.record("info", process, "poll", [["poll"]], error=f"{type(exc).__name__}: {exc}")
            return None
        reads: dict[str, list] = {}
        for partition, records in batches.items():
            pairs = reads.setdefault(w.key_of(partition.partition), [])
            for record in records:
                raw = record.value or b""
                try:
                    value: int | str = int(raw)
                except ValueError:
                    value = raw.decode(errors="replace")  # not a value we wrote: the checker finds no writer
                pairs.append([record.offset, value])
        self.run.record("ok", process, "poll", [["poll", reads]])
        return reads


def _delivered(futures: dict) -> dict[int, tuple[int | None, str | None]]:
    """value -> (offset, error) of every send whose future is done, as kafka.py's delivery callbacks record it."""
    out: dict[int, tuple[int | None, str | None]] = {}
    for value, future in futures.items():
        if not future.is_done:
            continue
        if future.succeeded():
            out[value] = (future.value.offset, None)
        else:
            out[value] = (None, f"{type(future.exception).__name__}: {future.exception}")
    return out


def _close(close, *args) -> None:
    """End a client whose last error its operations already recorded; a close that times out or raises changes
    nothing recorded."""
    from kafka.errors import KafkaError

    try:
        close(*args)
    except (KafkaError, OSError):
        pass
