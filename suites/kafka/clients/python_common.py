"""What the Python client drivers share (python_driver.py runs them): records in JSON, the job's SASL settings,
the group-rebalance and consumer-group-protocol scenarios over any library's member, the transactions and admin
scenarios' reading back."""

from __future__ import annotations

import asyncio
import base64
import threading
import time


CONSUME_SECONDS = 20  # the case's own limit is longer: a driver that gives up says what it waited for


PRODUCE_SECONDS = 10  # for the delivery reports of a few records (each takes milliseconds)


CODECS = ("gzip", "snappy", "lz4", "zstd")


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def consumed_record(partition: int, offset: int, key, value, headers, timestamp: int) -> dict:
    return {"partition": partition, "offset": offset, "key": b64(key), "value": b64(value),
            "headers": [[name, b64(data)] for name, data in headers or []], "timestamp": timestamp}


def rounds(job: dict) -> list[list[dict]]:
    """The job's records split into its rounds, in order."""
    count, records = job.get("rounds", 1), job["records"]
    size = -(-len(records) // count)
    return [records[i:i + size] for i in range(0, len(records), size)]


class Waiting(Exception):
    """The driver's own limit passed: says what it was waiting for."""


def sasl_options(job: dict, names: tuple[str, str, str, str]) -> dict:
    """The client's settings for the job's SASL login (none without one); ``names`` are the client's names for
    the security protocol, the mechanism, the user name and the password."""
    login = job.get("sasl")
    if not login:
        return {}
    return dict(zip(names, ("SASL_PLAINTEXT", login["mechanism"], login["username"], login["password"])))


KAFKA_PYTHON_SASL = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password")


CONFLUENT_SASL = ("security.protocol", "sasl.mechanism", "sasl.username", "sasl.password")


def to_server(job: dict) -> dict:
    """kafka-python's and aiokafka's settings (the same names) for reaching the server: where, how to log in, and
    the job's client id (the suite keeps the connections that carry it in the scenario's capture)."""
    named = {"client_id": job["client_id"]} if job.get("client_id") else {}
    return {"bootstrap_servers": job["bootstrap"], **named, **sasl_options(job, KAFKA_PYTHON_SASL)}


HEARTBEAT_MS = 300


class Group:
    """The records consumed by a group's members ([member, partition, offset, value]), shared by their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.consumed: list[list] = []
        self.assigned: dict[str, set] = {}
        self.errors: list[str] = []
        self.refused: list[list] = []  # [member, partition, offset] of each record whose commit the group refused

    def count(self) -> int:
        with self.lock:
            return len(self.consumed)

    def distinct(self) -> int:
        """The records consumed at least once (a record whose commit was refused comes again)."""
        with self.lock:
            return len({value for *_, value in self.consumed})


def member_thread(group: Group, name: str, make_member, stop: threading.Event) -> threading.Thread:
    """Run one member: poll, note and commit each record, until ``stop``; then close (leaving the group)."""
    def run():
        try:
            member = make_member()
            try:
                while not stop.is_set():
                    for partition, offset, value in member.poll():
                        with group.lock:
                            group.consumed.append([name, partition, offset, b64(value)])
                        if member.commit(partition, offset + 1) is False:
                            with group.lock:
                                group.refused.append([name, partition, offset])
                    with group.lock:
                        group.assigned[name] = member.assignment()
            finally:
                member.close()
        except Exception as exc:  # noqa: BLE001 - any failure of a member is reported for the case to judge
            group.errors.append(f"{name}: {type(exc).__name__}: {exc}")
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def wait_until(condition, what: str, seconds: float = CONSUME_SECONDS, group: Group | None = None) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if group is not None and group.errors:
            raise RuntimeError("; ".join(group.errors))
        if time.monotonic() > end:
            raise Waiting(what)
        time.sleep(0.05)


def group_rebalance(job: dict, produce, make_member, make_leaver=None) -> dict:
    """Both members join; the first half of the records is consumed across them; one member (``make_leaver``'s,
    by default another of ``make_member``'s) leaves; the second half is produced and the remaining member consumes
    it (and whatever the leaver had not)."""
    values, partitions = [raw(v) for v in job["values"]], job["partitions"]
    half = len(values) // 2
    group, stops = Group(), {"a": threading.Event(), "b": threading.Event()}
    produce([(i % partitions, v) for i, v in enumerate(values[:half])])
    makers = {"a": make_member, "b": make_leaver or make_member}
    threads = {name: member_thread(group, name, makers[name], stop) for name, stop in stops.items()}
    wait_until(lambda: group.count() >= half and all(group.assigned.get(n) for n in stops),
               f"both members assigned and {half} records consumed", group=group)
    stops["b"].set()
    threads["b"].join(CONSUME_SECONDS)
    produce([(i % partitions, v) for i, v in enumerate(values[half:], half)])
    wait_until(lambda: group.distinct() >= len(values), f"all {len(values)} records consumed", group=group)
    time.sleep(0.5)  # a record consumed twice may still come
    stops["a"].set()
    threads["a"].join(CONSUME_SECONDS)
    if group.errors:
        raise RuntimeError("; ".join(group.errors))
    with group.lock:
        return {"consumed": list(group.consumed), "refused_commits": list(group.refused)}


def consumer_group_protocol(job: dict, produce, make_member) -> dict:
    """Three members of a KIP-848 group: one joins late and one leaves, each between thirds of the records."""
    values, partitions = [raw(v) for v in job["values"]], job["partitions"]
    thirds = [len(values) // 3, 2 * len(values) // 3, len(values)]
    group, stops = Group(), {name: threading.Event() for name in ("a", "b", "c")}
    threads = {}

    def stage(start: int, end: int, members: tuple[str, ...]) -> None:
        produce([(i % partitions, v) for i, v in enumerate(values[start:end], start)])
        wait_until(lambda: group.count() >= end and all(group.assigned.get(n) for n in members),
                   f"members {', '.join(members)} assigned and {end} records consumed", group=group)

    threads.update({name: member_thread(group, name, make_member, stops[name]) for name in ("a", "b")})
    stage(0, thirds[0], ("a", "b"))
    threads["c"] = member_thread(group, "c", make_member, stops["c"])  # joins late: the group rebalances
    # the late member's partitions come from the others, which revoke them first (KIP-848 reconciliation)
    wait_until(lambda: group.assigned.get("c"), "the late member assigned partitions", group=group)
    stage(thirds[0], thirds[1], ("a", "b", "c"))
    stops["b"].set()  # leaves: its partitions go to the others, which resume at the offsets it committed
    threads["b"].join(CONSUME_SECONDS)
    stage(thirds[1], thirds[2], ("a", "c"))
    time.sleep(0.5)  # a record consumed twice may still come
    for name in ("a", "c"):
        stops[name].set()
        threads[name].join(CONSUME_SECONDS)
    if group.errors:
        raise RuntimeError("; ".join(group.errors))
    with group.lock:
        return {"consumed": list(group.consumed)}


TRANSFORM = b"t:"


def read_destination(job: dict, read_batch, close) -> list:
    """The destination's values as a read_committed reader sees them: until as many as the source has, then a
    little longer (a record of the aborted transaction must not come)."""
    seen, end = [], time.monotonic() + CONSUME_SECONDS
    try:
        while len(seen) < len(job["values"]):
            if time.monotonic() > end:
                raise Waiting(f"committed records ({len(seen)} of {len(job['values'])} read)")
            seen += read_batch()
        settle = time.monotonic() + 0.5
        while time.monotonic() < settle:
            seen += read_batch()
    finally:
        close()
    return [b64(v) for v in seen]


ALTERED = ("retention.ms", "3600000")


SETTLE_SECONDS = 15


def settled(ask, done):
    """``ask()`` until ``done(answer)`` or SETTLE_SECONDS passed; the last answer."""
    end = time.monotonic() + SETTLE_SECONDS
    while True:
        answer = ask()
        if done(answer) or time.monotonic() > end:
            return answer
        time.sleep(0.2)


async def settled_async(ask, done):
    end = time.monotonic() + SETTLE_SECONDS
    while True:
        answer = await ask()
        if done(answer) or time.monotonic() > end:
            return answer
        await asyncio.sleep(0.2)


def known_offset(offset: int | None) -> int | None:
    return None if offset is None or offset < 0 else offset  # -1: nothing committed
