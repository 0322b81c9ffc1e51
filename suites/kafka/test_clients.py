"""Real Kafka clients against the target: one case per client and scenario (``kafka.clients.<client>.<scenario>``).

Each client runs in its own process (targets/clients.py) with its own defaults, bounded by a time limit; what it
produced and consumed comes back as JSON and is judged here, under the client's own clause. A client that hangs or
fails is FAILED with the last lines of its log. Topics are created by the suite (a precondition; in the admin
scenario the client creates its own); topics, groups and transactional ids are uniquely named. A client this
machine does not have is NOT-RUN with the line that installs it. The client's traffic goes straight to the target,
so the transcript holds the job and the client's result, not bytes.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import shutil
import sys
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import pytest

from wirecheck.protocols.kafka import SPEC
from wirecheck.protocols.kafka import records as batches
from wirecheck.protocols.kafka.clients import CLIENT_APIS, CLIENT_SCENARIO_APIS, SCENARIO_APIS
from wirecheck.reports.model import Divergence, Unimplemented
from wirecheck.suites.kafka.client import DataPath
from wirecheck.targets.clients import ClientRun, clients_case, run_client
from wirecheck.targets.clients import drive as drive_client
from wirecheck.targets.runner.verdicts import NOT_RUN

C = SPEC.catalogue
TIME_LIMIT = 60.0  # per client run: a driver gives up on consuming after 20 s and says what it waited for
CONSUME_LIMIT = 10.0  # kcat reading a topic to its end, or producing ten lines (each well under a second)
KAFKAJS = Path(__file__).resolve().parent / "clients" / "kafkajs"
TIMESTAMP = 1_700_000_000_000  # CreateTime of the first record (ms), the others follow
PYTHON_MODULES = {"kafka-python": "kafka", "confluent-kafka": "confluent_kafka", "aiokafka": "aiokafka"}
INSTALL = {"kafka-python": "pip install kafka-python", "confluent-kafka": "pip install confluent-kafka",
           "aiokafka": "pip install aiokafka", "kafkajs": f"npm ci --prefix {KAFKAJS}",
           "kcat": "apt-get install kcat"}


def records(count: int = 10, text_only: bool = False) -> list[dict]:
    """Records for two partitions: keys (one null), values with every byte value, two headers each (one empty),
    consecutive CreateTimes. ``text_only`` (kcat reads lines and sets one header list per call): text keys and
    values, the same headers on every record."""
    made = []
    for i in range(count):
        value = f"value-{i}".encode() if text_only else bytes(range(256))[i::count] + b"\x00\n" + bytes([i])
        key = None if i == 3 and not text_only else f"key-{i % 3}".encode()
        made.append({"partition": i % 2, "key": _b64(key), "value": _b64(value), "timestamp": TIMESTAMP + i,
                     "headers": [["trace", _b64(b"t" if text_only else f"t{i}".encode())], ["empty", _b64(b"")]]})
    return made


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


# -- running a client ------------------------------------------------------------------------------------------


def installed(client: str) -> None:
    """NOT-RUN when the client is missing here (never a FAILED of the target)."""
    missing = {"kafkajs": lambda: shutil.which("node") is None or not (KAFKAJS / "node_modules" / "kafkajs").is_dir(),
               "kcat": lambda: _kcat() is None}.get(client, lambda: importlib.util.find_spec(PYTHON_MODULES[client])
                                                    is None)
    if missing():
        pytest.skip(f"{NOT_RUN}: the {client} client is not installed here ({INSTALL[client]})")


def _kcat() -> str | None:
    return shutil.which("kcat") or shutil.which("kafkacat")


def client_version(client: str) -> str:
    """The installed client's exact version, as the run records it."""
    if client == "kcat":
        return kcat_version()
    if client == "kafkajs":
        return json.loads((KAFKAJS / "node_modules" / "kafkajs" / "package.json").read_text())["version"]
    version = metadata.version(client)
    if client == "confluent-kafka":
        import confluent_kafka

        version += f" (librdkafka {confluent_kafka.libversion()[0]})"
    return version


def kcat_version() -> str:
    """kcat's version and its librdkafka's, from ``kcat -V`` ("Version 1.7.1 (JSON, ..., librdkafka 2.0.2 ...")."""
    shown = run_client([_kcat(), "-V"], timeout=10).stdout
    found = re.search(r"Version (\S+).*?librdkafka (\S+)", shown)
    return f"{found.group(1)} (librdkafka {found.group(2)})" if found else "unknown"


def drive(target, client: str, job: dict) -> ClientRun:
    """Run ``client`` on ``job``; the run is noted in the transcript."""
    job = {"bootstrap": "%s:%d" % target.address, **job}
    if client == "kafkajs":
        argv, cwd = ["node", "driver.js"], str(KAFKAJS)
    else:
        argv, cwd = [sys.executable, "-m", "wirecheck.suites.kafka.clients.python_driver", client], None
    return drive_client(target, client, argv, job, TIME_LIMIT, cwd=cwd)


def kcat_produce_consume(target, job: dict) -> ClientRun:
    """kcat has no driver: it produces each partition's lines (key TAB value, the headers of the first record)
    and consumes the topic from the beginning as JSON lines. It cannot set a record's timestamp."""
    kcat, bootstrap = _kcat(), "%s:%d" % target.address
    headers = [arg for name, value in job["records"][0]["headers"]
               for arg in ("-H", f"{name}={base64.b64decode(value).decode()}")]
    for partition in sorted({r["partition"] for r in job["records"]}):
        lines = "".join(f"{base64.b64decode(r['key']).decode()}\t{base64.b64decode(r['value']).decode()}\n"
                        for r in job["records"] if r["partition"] == partition)
        idempotent = ["-X", "enable.idempotence=true"] if job.get("idempotent") else []
        produced = _kcat_run(target, [kcat, "-b", bootstrap, "-t", job["topic"], "-P", "-p", str(partition), "-K",
                                      "\t", "-z", job["codec"], *idempotent, *headers], lines, limit=CONSUME_LIMIT)
        if produced.returncode != 0:
            return produced
    consumed = _kcat_run(target, [kcat, "-b", bootstrap, "-t", job["topic"], "-C", "-o", "beginning", "-e", "-J",
                                  "-q"], limit=CONSUME_LIMIT)
    lines = [json.loads(line) for line in consumed.stdout.splitlines() if line.startswith("{")]
    result = {"consumed": [{"partition": m["partition"], "offset": m["offset"], "key": _b64(_utf8(m.get("key"))),
                            "value": _b64(_utf8(m.get("payload"))), "timestamp": m.get("ts"),
                            "headers": [[name, _b64(_utf8(value))] for name, value in
                                        zip(m.get("headers", [])[::2], m.get("headers", [])[1::2])]}
                           for m in lines]}
    return replace(consumed, output=result if consumed.returncode == 0 else None)


def _kcat_run(target, argv: list[str], stdin: str = "", limit: float = TIME_LIMIT) -> ClientRun:
    target.transcript.note(f"client kcat: {' '.join(argv)}")
    run = run_client(argv, stdin, limit)
    target.transcript.note(f"client kcat: {run.summary()[:3000]}")
    return run


def _utf8(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


# -- judging ---------------------------------------------------------------------------------------------------


def judge_round_trip(clause_id: str, job: dict, run: ClientRun, compare_timestamps: bool = True) -> None:
    """Every produced record consumed back once, byte-identical, in offset order per partition, at the offset
    the producer was told."""
    expected = f"{len(job['records'])} records produced and consumed back byte-identical"
    if run.returncode != 0 or run.output is None or "consumed" not in run.output:
        raise Divergence(C[clause_id], expected, f"the client {run.summary()}")
    produced, consumed = run.output.get("produced"), run.output["consumed"]

    def content(record: dict) -> tuple:
        headers = tuple(map(tuple, record["headers"]))
        return (record["partition"], record["key"], record["value"], headers,
                record["timestamp"] if compare_timestamps else None)

    wanted = sorted((content(r) for r in job["records"]), key=repr)
    got = sorted((content(r) for r in consumed), key=repr)
    if got != wanted:
        missing, extra = [r for r in wanted if r not in got], [r for r in got if r not in wanted]
        raise Divergence(C[clause_id], expected, f"{len(consumed)} consumed; not as produced: missing "
                         f"{_shown(missing)}, unexpected {_shown(extra)}")
    for partition in {r["partition"] for r in consumed}:
        offsets = [r["offset"] for r in consumed if r["partition"] == partition]
        if offsets != sorted(set(offsets)):
            raise Divergence(C[clause_id], "offsets increasing within a partition",
                             f"partition {partition} consumed at offsets {offsets}")
        if produced is not None:
            told = sorted(o for p, o in produced if p == partition)
            if told != offsets:
                raise Divergence(C[clause_id], f"partition {partition}: consumed at the offsets produced {told}",
                                 f"consumed at {offsets}")


def _shown(items: list) -> str:
    return repr(items[:3])[:600] + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def client_topic(target, client: str, partitions: int = 2, stem: str = "client") -> str:
    path = DataPath(target)
    name = target.unique(f"{stem}-{client}")
    with target.precondition(f"a {partitions}-partition topic for the client created"):
        path.create_topic(name, partitions)
    return name


def produce_consume(target, client: str, codec: str) -> None:
    clause_id = f"kafka.clients.{client}.{'produce-consume' if codec == 'none' else 'compression'}"
    topic = client_topic(target, client)
    job = {"action": "produce-consume", "topic": topic, "group": target.unique("group"), "codec": codec,
           "records": records(text_only=client == "kcat"), "rounds": 2}
    run = kcat_produce_consume(target, job) if client == "kcat" else drive(target, client, job)
    judge_round_trip(clause_id, job, run, compare_timestamps=client != "kcat")


# -- the cases -------------------------------------------------------------------------------------------------


def ready(target, client: str, scenario: str) -> None:
    """The client is here, and the target advertises every API the scenario needs with the client's defaults
    (UNIMPLEMENTED otherwise: a missing feature, not a failure)."""
    installed(client)
    target.fact("client_version", client_version(client))
    advertised = DataPath(target).advertised()
    needed = SCENARIO_APIS[scenario]
    if 0 in needed:  # the client's producer defaults matter where the scenario produces
        needed |= CLIENT_APIS.get(client, frozenset())
    alternatives = CLIENT_SCENARIO_APIS.get((client, scenario), (frozenset(),))
    # the first alternative the target advertises whole, else the first one (its missing keys are named)
    needed |= next((a for a in alternatives if a <= set(advertised)), alternatives[0])
    missing = sorted(needed - set(advertised))
    if missing:
        raise Unimplemented(f"{client}'s {scenario} needs " + ", ".join(
            f"{DataPath.api_name(key)} ({key})" for key in missing) + ", which the target does not advertise")


@clients_case(SPEC, "produce-consume")
def test_produce_consume(target, client):
    ready(target, client, "produce-consume")
    produce_consume(target, client, "none")


@clients_case(SPEC, "compression")
def test_compression(target, client):
    ready(target, client, "compression")
    for codec in offered_codecs(target, client):
        produce_consume(target, client, codec)


def offered_codecs(target, client: str) -> list[str]:
    if client == "kcat":
        return ["gzip", "snappy", "lz4", "zstd"]  # librdkafka builds them all in
    run = drive(target, client, {"action": "describe"})
    if run.output is None:
        raise Divergence(C[f"kafka.clients.{client}.compression"], "the client's codecs", run.summary())
    return run.output["codecs"]



@clients_case(SPEC, "idempotent")
def test_idempotent(target, client):
    ready(target, client, "idempotent")
    clause_id = f"kafka.clients.{client}.idempotent"
    topic = client_topic(target, client)
    job = {"action": "produce-consume", "topic": topic, "group": target.unique("group"), "codec": "none",
           "idempotent": True, "records": records(text_only=client == "kcat"), "rounds": 2}
    run = kcat_produce_consume(target, job) if client == "kcat" else drive(target, client, job)
    judge_round_trip(clause_id, job, run, compare_timestamps=client != "kcat")
    judge_producer_ids(target, clause_id, topic, job["records"])


def judge_producer_ids(target, clause_id: str, topic: str, produced: list[dict]) -> None:
    """Read back with the suite's own Fetch: each partition holds its records once, in batches carrying a
    producer id (an idempotent producer's batches are stamped with the id InitProducerId gave it)."""
    path = DataPath(target)
    for partition in sorted({r["partition"] for r in produced}):
        answer = path.fetch(topic, 0, partition)
        stored = batches.decode_batches(answer["Records"] or b"", allow_partial_tail=True)
        wanted = sum(r["partition"] == partition for r in produced)
        count = sum(len(b.records) for b in stored)
        if count != wanted:
            raise Divergence(C[clause_id], f"{wanted} records stored in {topic}-{partition}", f"{count} stored")
        ids = sorted({b.producer_id for b in stored})
        if any(i < 0 for i in ids):
            raise Divergence(C[clause_id], "every batch of the idempotent producer with a producer id >= 0",
                             f"{topic}-{partition}: batches with producer ids {ids}")


GROUP_RECORDS = 16  # over four partitions: half before the second member leaves, half after


@clients_case(SPEC, "group-rebalance")
def test_group_rebalance(target, client):
    ready(target, client, "group-rebalance")
    clause_id = f"kafka.clients.{client}.group-rebalance"
    values = [_b64(f"record-{i}".encode()) for i in range(GROUP_RECORDS)]
    job = {"action": "group-rebalance", "topic": client_topic(target, client, 4, "group"),
           "group": target.unique("group"), "partitions": 4, "values": values}
    run = drive(target, client, job)
    expected = f"each of the {len(values)} records consumed once across the two members"
    if run.returncode != 0 or run.output is None or "consumed" not in run.output:
        raise Divergence(C[clause_id], expected, f"the client {run.summary()}")
    consumed = run.output["consumed"]
    got = sorted(value for _, _, _, value in consumed)
    if got != sorted(values):
        twice = sorted({(p, o) for _, p, o, v in consumed if got.count(v) > 1})
        missing = [base64.b64decode(v).decode() for v in values if v not in got]
        raise Divergence(C[clause_id], expected, f"{len(consumed)} consumed; consumed more than once at "
                         f"(partition, offset) {_shown(twice)}; never consumed {_shown(missing)}")


TXN_RECORDS = 5


@clients_case(SPEC, "transactions")
def test_transactions(target, client):
    ready(target, client, "transactions")
    clause_id = f"kafka.clients.{client}.transactions"
    values = [_b64(f"source-{i}".encode()) for i in range(TXN_RECORDS)]
    job = {"action": "transactions", "source": client_topic(target, client, 1, "txn-source"),
           "dest": client_topic(target, client, 1, "txn-dest"), "group": target.unique("group"),
           "transactional_id": target.unique(f"txn-{client}"), "values": values}
    run = drive(target, client, job)
    if run.returncode != 0 or run.output is None or "dest" not in run.output:
        raise Divergence(C[clause_id], "the transactions run, then the committed records read", f"the client "
                         f"{run.summary()}")
    wanted = [_b64(b"t:" + base64.b64decode(v)) for v in values]  # the driver's transform
    if run.output["dest"] != wanted:
        shown = [base64.b64decode(v).decode(errors="replace") for v in run.output["dest"]]
        raise Divergence(C[clause_id], f"read_committed: the {len(wanted)} records of the committed transaction "
                         "only, in order", f"{shown[:12]}")
    if run.output["committed"] != len(values):
        raise Divergence(C[clause_id], f"the group's committed source offset {len(values)} (the committed "
                         "transaction's)", f"{run.output['committed']}")


@clients_case(SPEC, "admin")
def test_admin(target, client):
    ready(target, client, "admin")
    clause_id = f"kafka.clients.{client}.admin"
    # the principal the suite runs as may create topics at all (a cluster whose ACLs deny it makes the case
    # BLOCKED, as every case that needs a topic of its own): the suite's own CreateTopics shows it first
    client_topic(target, client)
    run = drive(target, client, {"action": "admin", "topic": target.unique(f"admin-{client}")})
    if run.returncode != 0 or run.output is None or "listed_after_delete" not in run.output:
        raise Divergence(C[clause_id], "the topic created, described, altered and deleted", f"the client "
                         f"{run.summary()}")
    seen = run.output
    if seen["partitions"] != 2:
        raise Divergence(C[clause_id], "the created topic described with its 2 partitions",
                         f"{seen['partitions']} partitions")
    if seen["after"] != "3600000":
        raise Divergence(C[clause_id], "retention.ms described as 3600000 after altering it",
                         f"{seen['after']!r} (before altering: {seen['before']!r})")
    if seen["listed_after_delete"]:
        raise Divergence(C[clause_id], "the deleted topic no longer listed", "still listed")
