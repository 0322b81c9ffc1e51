"""Real Kafka clients against the target: one case per client and scenario (``kafka.clients.<client>.<scenario>``).

Each client runs in its own process (targets/clients.py) with its own defaults, bounded by a time limit; what it
produced and consumed comes back as JSON and is judged here, under the client's own clause. A client that hangs or
fails is FAILED with the last lines of its log. Topics are created by the suite (a precondition; in the admin
scenario the client creates its own); topics, groups and transactional ids are uniquely named. A client this
machine does not have is NOT-RUN with the line that installs it. The client's traffic goes straight to the target:
the transcript holds the job and the client's result, and the scenario's capture (targets/client_capture.py) the
client's own connections, which its runs name by the scenario's client id (``job["client_id"]``, kcat's client.id).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import pytest

from wirecheck.protocols.kafka import SPEC
from wirecheck.protocols.kafka import records as batches
from wirecheck.protocols.kafka.clients import CLIENT_APIS, CLIENT_SCENARIO_APIS, SCENARIO_APIS
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import DataPath, RECORD_TIME_MS
from wirecheck.suites.kafka.clients import go_drivers, java_driver
from wirecheck.suites.kafka.login import SCRAM, credentials, handshake, sasl_client
from wirecheck.targets.clients import ClientRun, client_id, clients_case, run_client
from wirecheck.targets.clients import drive as drive_client
from wirecheck.targets.runner.verdicts import NOT_RUN

C = SPEC.catalogue
TIME_LIMIT = 60.0  # per client run: a driver gives up on consuming after 20 s and says what it waited for
CONSUME_LIMIT = 10.0  # kcat reading a topic to its end, or producing ten lines (each well under a second)
KAFKAJS = Path(__file__).resolve().parent / "clients" / "kafkajs"
# @platformatic/kafka needs Node.js >= 22.22: its driver folder pins that Node (the npm package "node") beside it
PLATFORMATIC = Path(__file__).resolve().parent / "clients" / "platformatic"
PLATFORMATIC_NODE = PLATFORMATIC / "node_modules" / ".bin" / "node"
TIMESTAMP = RECORD_TIME_MS  # CreateTime of the first record (ms), the others follow (client.RECORD_TIME_MS: why)
PYTHON_MODULES = {"kafka-python": "kafka", "confluent-kafka": "confluent_kafka", "aiokafka": "aiokafka"}
INSTALL = {"kafka-python": "pip install kafka-python", "confluent-kafka": "pip install confluent-kafka",
           "aiokafka": "pip install aiokafka", "kafkajs": f"npm ci --prefix {KAFKAJS}",
           "platformatic-kafka": f"npm ci --prefix {PLATFORMATIC}",
           "kcat": "apt-get install kcat", "java": java_driver.INSTALL,
           **{client: go_drivers.install_line(client) for client in go_drivers.FOLDERS}}


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
               "platformatic-kafka": lambda: not PLATFORMATIC_NODE.exists()
               or not (PLATFORMATIC / "node_modules" / "@platformatic" / "kafka").is_dir(),
               "kcat": lambda: _kcat() is None,
               "java": java_driver.missing,  # no java on PATH, or the jar not built
               # a Go driver: no go, or no binary
               **{go: (lambda go=go: go_drivers.missing(go)) for go in go_drivers.FOLDERS},
               }.get(client, lambda: importlib.util.find_spec(PYTHON_MODULES[client]) is None)
    if missing():
        pytest.skip(f"{NOT_RUN}: the {client} client is not installed here ({INSTALL[client]})")


def _kcat() -> str | None:
    return shutil.which("kcat") or shutil.which("kafkacat")


def client_version(client: str) -> str:
    """The installed client's exact version, as the run records it."""
    if client == "kcat":
        return kcat_version()
    if client in go_drivers.FOLDERS:
        return go_drivers.version(client)
    if client == "java":
        return java_driver.version()
    if client == "kafkajs":
        return json.loads((KAFKAJS / "node_modules" / "kafkajs" / "package.json").read_text())["version"]
    if client == "platformatic-kafka":
        package = PLATFORMATIC / "node_modules" / "@platformatic" / "kafka" / "package.json"
        node = run_client([str(PLATFORMATIC_NODE), "--version"], timeout=10).stdout.strip()
        return f"{json.loads(package.read_text())['version']} (Node.js {node})"
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
    job = {"bootstrap": "%s:%d" % target.address, **run_login(target), **job}
    if client == "kafkajs":
        argv, cwd = ["node", "driver.js"], str(KAFKAJS)
    elif client == "platformatic-kafka":
        argv, cwd = [str(PLATFORMATIC_NODE), "driver.js"], str(PLATFORMATIC)
    elif client in go_drivers.FOLDERS:
        argv, cwd = go_drivers.argv(client), None
    elif client == "java":
        argv, cwd = java_driver.argv(), None
    else:
        argv, cwd = [sys.executable, "-m", "wirecheck.suites.kafka.clients.python_driver", client], None
    return drive_client(target, client, argv, job, TIME_LIMIT, cwd=cwd)


def run_login(target) -> dict:
    """The run's SASL login (--target-option kafka.sasl=USER:PASSWORD, kafka.sasl-mechanism) as a job's ``sasl``:
    a client logs in as the suite's own connections do (suites/kafka/login.py); nothing without one."""
    if not target.options.get("sasl"):
        return {}
    user, password = credentials(target)
    return {"sasl": {"mechanism": target.options.get("sasl-mechanism", "PLAIN"), "username": user,
                     "password": password}}


def kcat_produce_consume(target, job: dict) -> ClientRun:
    """kcat has no driver: it produces each partition's lines (key TAB value, the headers of the first record)
    and consumes the topic from the beginning as JSON lines. It cannot set a record's timestamp."""
    produced = kcat_produce(target, job, job["records"])
    if produced is not None:
        return produced
    return kcat_consume(target, job, ["-t", job["topic"], "-C", "-o", "beginning", "-e"])


def kcat_produce(target, job: dict, made: list[dict]) -> ClientRun | None:
    """``made`` produced to the job's topic, a kcat run per partition; None, or the run that failed."""
    kcat, bootstrap = _kcat(), "%s:%d" % target.address
    headers = [arg for name, value in made[0]["headers"]
               for arg in ("-H", f"{name}={base64.b64decode(value).decode()}")]
    for partition in sorted({r["partition"] for r in made}):
        lines = "".join(f"{base64.b64decode(r['key']).decode()}\t{base64.b64decode(r['value']).decode()}\n"
                        for r in made if r["partition"] == partition)
        idempotent = ["-X", "enable.idempotence=true"] if job.get("idempotent") else []
        produced = _kcat_run(target, [kcat, "-b", bootstrap, "-t", job["topic"], "-P", "-p", str(partition), "-K",
                                      "\t", "-z", job["codec"], *idempotent, *headers, *_kcat_sasl(target, job)], lines,
                             limit=CONSUME_LIMIT)
        if produced.returncode != 0:
            return produced
    return None


def kcat_consume(target, job: dict, how: list[str], limit: float = CONSUME_LIMIT) -> ClientRun:
    """kcat consuming as ``how`` says, printing JSON lines; its output is ``{"consumed": [...]}`` as a driver's."""
    consumed = _kcat_run(target, [_kcat(), "-b", "%s:%d" % target.address, "-J", "-q", *_kcat_sasl(target, job), *how],
                         limit=limit)
    lines = [json.loads(line) for line in consumed.stdout.splitlines() if line.startswith("{")]
    result = {"consumed": [{"partition": m["partition"], "offset": m["offset"], "key": _b64(_utf8(m.get("key"))),
                            "value": _b64(_utf8(m.get("payload"))), "timestamp": m.get("ts"),
                            "headers": [[name, _b64(_utf8(value))] for name, value in
                                        zip(m.get("headers", [])[::2], m.get("headers", [])[1::2])]}
                           for m in lines]}
    return replace(consumed, output=result if consumed.returncode == 0 else None)


def _kcat_sasl(target, job: dict) -> list[str]:
    login = job.get("sasl") or run_login(target).get("sasl")
    if not login:
        return []
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": login["mechanism"],
                "sasl.username": login["username"], "sasl.password": login["password"]}
    return [arg for name, value in settings.items() for arg in ("-X", f"{name}={value}")]


def _kcat_run(target, argv: list[str], stdin: str = "", limit: float = TIME_LIMIT) -> ClientRun:
    if client_id():  # the scenario's client id: its capture keeps the connections that carry it
        argv = [argv[0], "-X", f"client.id={client_id()}", *argv[1:]]
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
    login = run_login(target).get("sasl")
    # (the sasl scenario logs in with each mechanism itself) the client's bug, not the target's
    if login and scenario != "sasl" and login["mechanism"] not in client_mechanisms(client):
        pytest.skip(f"{NOT_RUN}: this {client} cannot log in with the run's {login['mechanism']}")
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
    too_low = go_drivers.versions_lacking(client, scenario, advertised)
    if too_low:
        raise Unimplemented(f"{client}'s {scenario} needs {', '.join(too_low)}, which the target does not advertise")


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
    group_scenario(target, client, "group-rebalance", GROUP_RECORDS, 4, "group")


def group_scenario(target, client: str, scenario: str, records: int, partitions: int, stem: str,
                   members: str = "two", **job) -> None:
    """Drive a group scenario over ``records`` records on a new topic and judge it with judge_group."""
    values = [_b64(f"record-{i}".encode()) for i in range(records)]
    job = {"action": scenario, "topic": client_topic(target, client, partitions, stem),
           "group": target.unique("group"), "partitions": partitions, "values": values, **job}
    judge_group(f"kafka.clients.{client}.{scenario}", values, drive(target, client, job), members)


def judge_group(clause_id: str, values: list[str], run: ClientRun, members: str = "two") -> None:
    """Each value consumed exactly once across the group's members, but for the redelivery the protocol permits: a
    commit that races a rebalance is refused (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or REBALANCE_IN_PROGRESS; Apache
    Kafka's CommitFailedException javadoc: the partitions may already be another member's, the commit cannot be
    retried), so the partition's next owner reads that record again from the last commit the group accepted. Each
    commit the driver reports refused, or not made because the partition was revoked first (``refused_commits``:
    [member, partition, offset]), excuses one more consumption of its record; every other record consumed twice
    means a member started before the offset committed."""
    expected = f"each of the {len(values)} records consumed once across the {members} members"
    if run.returncode != 0 or run.output is None or "consumed" not in run.output:
        raise Divergence(C[clause_id], expected, f"the client {run.summary()}")
    consumed = run.output["consumed"]
    redelivery = Counter((p, o) for _, p, o in run.output.get("refused_commits") or [])
    seen, got, excused = set(), [], 0
    for _, p, o, value in consumed:
        if (p, o) in seen and redelivery[(p, o)] > 0:
            redelivery[(p, o)] -= 1
            excused += 1
            continue
        seen.add((p, o))
        got.append(value)
    got.sort()
    if got != sorted(values):
        twice = sorted({(p, o) for _, p, o, v in consumed if got.count(v) > 1})
        missing = [base64.b64decode(v).decode() for v in values if v not in got]
        note = f" (besides {excused} read again after a refused commit)" if excused else ""
        raise Divergence(C[clause_id], expected, f"{len(consumed)} consumed{note}; consumed more than once at "
                         f"(partition, offset) {_shown(twice)}; never consumed {_shown(missing)}")


#: mixed-group: the library of the other member (it leaves mid-way), so that each library both resumes from the
#: offsets another committed (its own case) and commits the offsets another resumes from (the case of the client
#: whose partner it is)
PARTNERS = {"kafka-python": "confluent-kafka", "confluent-kafka": "aiokafka", "aiokafka": "kafka-python"}


@clients_case(SPEC, "mixed-group")
def test_mixed_group(target, client):
    partner = PARTNERS[client]
    installed(partner)
    ready(target, client, "mixed-group")
    target.fact("partner_version", f"{partner} {client_version(partner)}")
    group_scenario(target, client, "mixed-group", GROUP_RECORDS, 4, "mixed", partner=partner)


KIP848_RECORDS = 24  # over six partitions: a third before the late member joins, a third before one leaves


@clients_case(SPEC, "consumer-group-protocol")
def test_consumer_group_protocol(target, client):
    ready(target, client, "consumer-group-protocol")
    group_scenario(target, client, "consumer-group-protocol", KIP848_RECORDS, 6, "kip848", members="three")


SHARE_RECORDS = 12  # on one partition both members of the share group are assigned (KIP-932 simple assignor)


@clients_case(SPEC, "share-group")
def test_share_group(target, client):
    ready(target, client, "share-group")
    clause_id = f"kafka.clients.{client}.share-group"
    values = [_b64(f"record-{i}".encode()) for i in range(SHARE_RECORDS)]
    job = {"action": "share-group", "topic": client_topic(target, client, 1, "share"),
           "group": target.unique("share"), "partitions": 1, "values": values}
    run = drive(target, client, job)
    judge_group(clause_id, values, run)
    refused = run.output.get("ack_errors")
    if refused:  # each record's ACCEPT acknowledged without an error: accepted exactly once
        raise Divergence(C[clause_id], f"each of the {SHARE_RECORDS} records accepted (commit_sync with no error)",
                         f"acknowledgements refused: {_shown(refused)}")


#: telemetry: how long the client keeps running, once its records are consumed, for each of its producer and consumer
#: to have a push accepted; a target whose PushIntervalMs is longer than LONGEST_PUSH_INTERVAL_MS cannot be judged
TELEMETRY_WAIT = 15
LONGEST_PUSH_INTERVAL_MS = 5000
TELEMETRY_RECORDS = 4


@clients_case(SPEC, "telemetry")
def test_telemetry(target, client):
    ready(target, client, "telemetry")
    clause_id = f"kafka.clients.{client}.telemetry"
    job = {"action": "telemetry", "topic": client_topic(target, client, stem="telemetry"),
           "group": target.unique("group"), "codec": "none", "records": records(TELEMETRY_RECORDS),
           "wait": TELEMETRY_WAIT}
    run = drive(target, client, job)
    judge_round_trip(clause_id, job, run)
    judge_telemetry(clause_id, run.output.get("telemetry") or {})


def judge_telemetry(clause_id: str, seen: dict) -> None:
    """From the client's own telemetry log: no error, a subscription fetched, a push accepted (by producer and
    consumer alike). A subscription that asks for no metrics, or pushes less often than the case waits, leaves
    nothing to judge (UNIMPLEMENTED)."""
    if set(seen) != {"producer", "consumer"}:
        raise Divergence(C[clause_id], "the client's telemetry log of its producer and consumer", f"{seen!r}"[:600])
    for role, log in seen.items():
        if log["failures"]:
            raise Divergence(C[clause_id], "no telemetry error in the client's log",
                             f"the {role}: {_shown(log['failures'])}")
        if not log["subscriptions"]:
            raise Divergence(C[clause_id], "the client's telemetry subscription fetched (GetTelemetrySubscriptions "
                             "is advertised)", f"the {role} parsed no subscription")
        if log["requested_metrics"] == 0:
            raise Unimplemented(f"the target's telemetry subscription for the {role} requests no metrics: "
                                "nothing is pushed")
        if (log["push_interval_ms"] or 0) > LONGEST_PUSH_INTERVAL_MS:
            raise Unimplemented(f"the target's PushIntervalMs {log['push_interval_ms']} is longer than the case "
                                f"waits for a push ({LONGEST_PUSH_INTERVAL_MS} ms)")
        if not log["pushes_accepted"]:
            raise Divergence(C[clause_id], f"a push of the {role} accepted within {TELEMETRY_WAIT} s (PushIntervalMs "
                             f"{log['push_interval_ms']})", "none")


@clients_case(SPEC, "group-consume")
def test_group_consume(target, client):
    """The group's only member twice (kcat's balanced consumer -G; a driver's group-consume job, which produces its
    half first): each run reads the half produced before it, committing as it exits."""
    ready(target, client, "group-consume")
    clause_id = f"kafka.clients.{client}.group-consume"
    job = {"topic": client_topic(target, client, stem="group"), "group": target.unique("group"), "codec": "none",
           "records": records(text_only=client == "kcat")}
    half = len(job["records"]) // 2
    consumed = []
    for made in (job["records"][:half], job["records"][half:]):
        if client != "kcat":
            run = drive(target, client, {**job, "action": "group-consume", "records": made})
        else:
            run = kcat_produce(target, job, made) or kcat_consume(target, job, [
                "-G", job["group"], "-c", str(len(made)), "-e", "-X", "auto.offset.reset=earliest", job["topic"]],
                limit=TIME_LIMIT)  # joining the group takes librdkafka a few seconds of the run
        if run.output is None or "consumed" not in run.output:  # a produce or a consumer run that failed: its verdict
            judge_round_trip(clause_id, job, run)
        consumed += run.output["consumed"]
    judge_round_trip(clause_id, job, replace(run, output={"consumed": consumed}), compare_timestamps=client != "kcat")


GROWN_TO = 3  # cluster-admin: the partitions a one-partition topic is grown to
DELETED_BELOW = 3  # cluster-admin: partition 0's records below this offset deleted (of five produced)


@clients_case(SPEC, "cluster-admin")
def test_cluster_admin(target, client):
    ready(target, client, "cluster-admin")
    clause_id = f"kafka.clients.{client}.cluster-admin"
    topic = client_topic(target, client, 1, "cluster")
    job = {"action": "cluster-admin", "topic": topic, "grow_to": GROWN_TO, "delete_below": DELETED_BELOW,
           "values": [_b64(f"record-{i}".encode()) for i in range(5)]}
    run = drive(target, client, job)
    if run.returncode != 0 or run.output is None or "brokers" not in run.output:
        raise Divergence(C[clause_id], "partitions added, records deleted and the cluster described",
                         f"the client {run.summary()}")
    seen, path = run.output, DataPath(target)
    if seen["partitions"] != GROWN_TO:
        raise Divergence(C[clause_id], f"the topic described with the {GROWN_TO} partitions it was grown to",
                         f"{seen['partitions']} partitions")
    with target.precondition("the log start and the brokers read with the suite's own ListOffsets and Metadata"):
        start = path.list_offset(topic, -2)["Offset"]  # EARLIEST
        brokers = path.call(3, 1, {"Topics": []}, clause_id)["Brokers"]
    if start != DELETED_BELOW:
        raise Divergence(C[clause_id], f"the log start at {DELETED_BELOW} once the records below it were deleted",
                         f"{start}")
    listed = sorted([b["NodeId"], b["Host"], b["Port"]] for b in brokers)
    if sorted(seen["brokers"]) != listed:
        raise Divergence(C[clause_id], f"the cluster described with the brokers Metadata lists {listed}",
                         f"{sorted(seen['brokers'])}")


COMMITTED = 4  # group-admin: the offset committed for partition 0


@clients_case(SPEC, "group-admin")
def test_group_admin(target, client):
    ready(target, client, "group-admin")
    clause_id = f"kafka.clients.{client}.group-admin"
    job = {"action": "group-admin", "topic": client_topic(target, client, 1, "group-admin"),
           "group": target.unique("group"), "offset": COMMITTED}
    run = drive(target, client, job)
    if run.returncode != 0 or run.output is None or "listed_after_delete" not in run.output:
        raise Divergence(C[clause_id], "an offset committed, the group listed and read back, the group deleted",
                         f"the client {run.summary()}")
    seen = run.output
    if not seen["listed"]:
        raise Divergence(C[clause_id], "the group listed once it has a committed offset", "not listed")
    if seen["offset"] != COMMITTED:
        raise Divergence(C[clause_id], f"the group's committed offset {COMMITTED} read back", f"{seen['offset']}")
    if seen["listed_after_delete"]:  # None: the client cannot delete groups
        raise Divergence(C[clause_id], "the deleted group no longer listed", "still listed")


TXN_RECORDS = 5


@clients_case(SPEC, "transactions")
def test_transactions(target, client):
    ready(target, client, "transactions")
    transactions(target, client, "transactions")


def transactions(target, client: str, scenario: str) -> ClientRun:
    """Consume-transform-produce, one transaction aborted and one committed: what read_committed reads of the
    destination and the group's committed source offset judged; the run, for a scenario that judges more."""
    clause_id = f"kafka.clients.{client}.{scenario}"
    values = [_b64(f"source-{i}".encode()) for i in range(TXN_RECORDS)]
    job = {"action": scenario, "source": client_topic(target, client, 1, "txn-source"),
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
    return run


#: transactions-v2: the first version of each request with KIP-890's TV2 semantics (ProduceRequest.json v12,
#: TxnOffsetCommitRequest.json v5, EndTxnRequest.json v5), and the requests TV2 does without
TV2_VERSIONS = {"PRODUCE": 12, "TXN_OFFSET_COMMIT": 5, "END_TXN": 5}
TV1_ONLY = ("ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN")


@clients_case(SPEC, "transactions-v2")
def test_transactions_v2(target, client):
    """KIP-890 part 2: a Kafka 4 client takes TV2 when the broker finalizes transaction.version >= 2 in its
    ApiVersions answer (FinalizedFeatures, ApiVersionsResponse.json v3+); the versions its transactional producer
    sent come from the client's own request log (the driver's ``requests``: API name -> versions)."""
    ready(target, client, "transactions-v2")
    clause_id = f"kafka.clients.{client}.transactions-v2"
    level = finalized_features(target).get("transaction.version", 0)
    if level < 2:
        raise Unimplemented(f"the target finalizes transaction.version at {level} (ApiVersions v3 "
                            "FinalizedFeatures): no transaction protocol version 2 to take")
    sent = transactions(target, client, "transactions-v2").output.get("requests")
    if not sent:
        raise Divergence(C[clause_id], "the transactional producer's request versions, from its log", f"{sent!r}")
    for api, first in TV2_VERSIONS.items():
        if not sent.get(api) or min(sent[api]) < first:
            raise Divergence(C[clause_id], f"{api} sent at v{first}+ (transaction.version 2 finalized)",
                             f"{api} versions sent: {sent.get(api)}; every request: {sent}")
    if any(sent.get(api) for api in TV1_ONLY):
        raise Divergence(C[clause_id], f"none of {', '.join(TV1_ONLY)} sent under transaction.version 2",
                         f"requests sent: {sent}")


def finalized_features(target) -> dict[str, int]:
    """Feature name -> the finalized MaxVersionLevel the target's ApiVersions v3 answer names."""
    with target.precondition("the target's finalized features read (ApiVersions v3)"):
        path = DataPath(target)
        path.require(18, 3)
        body = path.call(18, 3, {"ClientSoftwareName": "wirecheck", "ClientSoftwareVersion": "1"},
                         "kafka.api-versions.advertised")
    return {f["Name"]: f["MaxVersionLevel"] for f in body.get("FinalizedFeatures") or []}


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


# The SASL login runs against the target's SASL listener, named as the SASL cases (test_sasl.py) name it: by its
# credentials (--target-option kafka.sasl=USER:PASSWORD; UNIMPLEMENTED without them). Each mechanism both the client
# and the listener offer is one produce-and-consume run.
SASL_MECHANISMS = ("PLAIN", *SCRAM)
#: librdkafka before 2.6.1 repeats the client nonce in its SCRAM client-final message (confluentinc/librdkafka#4895),
#: which Apache Kafka 4 refuses (RFC 5802 section 5.1): such a kcat is judged on PLAIN only
FIXED_SCRAM_LIBRDKAFKA = (2, 6, 1)
SASL_RECORDS = 4


def client_mechanisms(client: str) -> tuple[str, ...]:
    if client == "kcat":
        found = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", kcat_version())
        if found is None or tuple(map(int, found.groups())) < FIXED_SCRAM_LIBRDKAFKA:
            return ("PLAIN",)
    return SASL_MECHANISMS


def listener_mechanisms(target) -> list[str]:
    """The mechanisms the SASL listener enables, as its SaslHandshake answer lists them."""
    with target.precondition("the SASL listener's mechanisms read (SaslHandshake)"):
        return handshake(sasl_client(target), "PLAIN", "kafka.sasl.handshake-mechanisms")["Mechanisms"]


@clients_case(SPEC, "sasl")
def test_sasl(target, client):
    user, password = credentials(target)  # first: without them the target has no SASL listener to us
    ready(target, client, "sasl")
    clause_id = f"kafka.clients.{client}.sasl"
    enabled = listener_mechanisms(target)
    mechanisms = [m for m in client_mechanisms(client) if m in enabled]
    if not mechanisms:
        raise Unimplemented(f"the listener enables {enabled}, {client} offers {list(client_mechanisms(client))}: "
                            "no mechanism in common")
    for mechanism in mechanisms:
        job = {"action": "produce-consume", "topic": client_topic(target, client, stem="sasl"),
               "group": target.unique("group"), "codec": "none", "records": records(SASL_RECORDS, client == "kcat"),
               "sasl": {"mechanism": mechanism, "username": user, "password": password}}
        run = kcat_produce_consume(target, job) if client == "kcat" else drive(target, client, job)
        try:
            judge_round_trip(clause_id, job, run, compare_timestamps=client != "kcat")
        except Divergence as divergence:
            raise divergence.with_note(f"logged in with SASL {mechanism}") from None
