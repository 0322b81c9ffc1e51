"""The real Fluvio client against the target: one case per scenario (``fluvio.clients.fluvio-python.<scenario>``).

The client (``fluvio`` on PyPI, the Python binding of the Rust client) runs in its own process
(suites/fluvio/clients/fluvio_driver.py), bounded by a time limit: it holds the GIL while it waits on the server,
so only a process can be stopped. It connects to the SC (the spec's "sc" endpoint: the reference broker's, or
``--target-option fluvio.sc=HOST:PORT``), which names the SPU of each partition. What it produced, consumed and
was told comes back as JSON and is judged here. A client that hangs or fails is FAILED with the last lines of its
log and what it waited for. Topics are uniquely named; those the client writes to are created by the suite
through the SC first (a precondition). The client's traffic goes straight to the target, so the transcript holds
the job and the client's result, not bytes.
"""

from __future__ import annotations

import base64
import importlib.util
import sys
import tempfile
from importlib import metadata


from wirecheck.protocols.fluvio import SPEC
from wirecheck.protocols.fluvio.clients import SCENARIO_SC_APIS, SCENARIO_SPU_APIS
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.fluvio.client import Fluvio, new_topic
from wirecheck.suites.fluvio.sc_client import ScClient
from wirecheck.targets.clients import ClientRun, clients_case, not_installed
from wirecheck.targets.clients import drive as drive_client
from wirecheck.targets.clients import finished as client_finished

C = SPEC.catalogue
TIME_LIMIT = 60.0  # per client run; each step takes well under a second against the reference broker
INSTALL = "pip install fluvio==0.21.0"  # the version of the interop extra (pyproject.toml)


# -- running the client ----------------------------------------------------------------------------------------


def ready(target, scenario: str) -> None:
    """The client is here, the SC's address is known, and the target advertises every API the scenario needs
    (UNIMPLEMENTED otherwise: a missing feature, not a failure)."""
    if importlib.util.find_spec("fluvio") is None:
        not_installed("fluvio", INSTALL)
    target.fact("client_version", metadata.version("fluvio"))
    if not target.knows_endpoint("sc"):
        raise Unimplemented("the client starts at the SC: give its address with --target-option fluvio.sc=HOST:PORT")
    for peer, needed in ((ScClient(target), SCENARIO_SC_APIS[scenario]),
                         (Fluvio(target), SCENARIO_SPU_APIS[scenario])):
        try:
            missing = sorted(needed - set(peer.advertised()))
        finally:
            peer.close()
        if missing:
            where = "SC" if isinstance(peer, ScClient) else "SPU"
            raise Unimplemented(f"the client's {scenario} needs the {where}'s " + ", ".join(
                f"{peer.api_name(key)} ({key})" for key in missing) + ", which the target does not advertise")


def drive(target, job: dict) -> ClientRun:
    """Run the client on ``job``; the run is noted in the transcript. HOME is a fresh directory, so the client
    never reads or writes the user's profiles."""
    host, port = target.endpoint_address("sc")
    job = {"sc": f"{host}:{port}", **job}
    argv = [sys.executable, "-m", "wirecheck.suites.fluvio.clients.fluvio_driver"]
    with tempfile.TemporaryDirectory(prefix="wirecheck-fluvio-home-") as home:
        run = drive_client(target, "fluvio-python", argv, job, TIME_LIMIT, env={"HOME": home})
    return run


def finished(clause_id: str, run: ClientRun, expected: str) -> dict:
    return client_finished(C[clause_id], run, expected)


def client_topic(target) -> str:
    """A fresh topic for the client, made through the SC by the suite (never a shared named topic: the case
    reads it from its beginning)."""
    client, topic = new_topic(target, stem="client", own=True)
    client.close()
    return topic


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def records(count: int = 10) -> list[dict]:
    """Keys and values with every byte value (an empty key and an empty value among them)."""
    made = []
    for i in range(count):
        key = b"" if i == 2 else f"key-{i}-".encode() + bytes([0, 255, i])
        value = b"" if i == 5 else bytes(range(256))[i::count] + b"\x00\n" + bytes([i]) * i
        made.append({"key": _b64(key), "value": _b64(value)})
    return made


def _shown(items: list) -> str:
    return repr(items[:3])[:600] + (f" and {len(items) - 3} more" if len(items) > 3 else "")


# -- the cases -------------------------------------------------------------------------------------------------


@clients_case(SPEC, "produce-consume")
def test_produce_consume(target, client):
    clause_id = f"fluvio.clients.{client}.produce-consume"
    ready(target, "produce-consume")
    sent = records()
    job = {"action": "produce-consume", "topic": client_topic(target), "records": sent, "from_offset": 4,
           "from_end": 3}
    result = finished(clause_id, drive(target, job), f"{len(sent)} records produced and consumed back")
    wanted = [(offset, r["key"], r["value"]) for offset, r in enumerate(sent)]  # a new topic starts at offset 0
    told = [tuple(entry) for entry in result["produced"]]
    if told != [(0, offset) for offset in range(len(sent))]:
        raise Divergence(C[clause_id], f"the producer told partition 0, offsets 0..{len(sent) - 1} in order",
                         f"told (partition, offset) {told}")
    for read, expected in (("from_beginning", wanted), ("from_offset", wanted[job["from_offset"]:]),
                           ("from_end", wanted[-job["from_end"]:])):
        got = [(r["offset"], r["key"], r["value"]) for r in result[read]]
        if got != expected:
            missing, extra = [r for r in expected if r not in got], [r for r in got if r not in expected]
            raise Divergence(C[clause_id], f"streamed {read.replace('_', ' ')}: {len(expected)} records as produced, "
                             "in offset order", f"(offset, key, value) {_shown(got)}; missing {_shown(missing)}, "
                             f"unexpected {_shown(extra)}")


@clients_case(SPEC, "consumer-offsets")
def test_consumer_offsets(target, client):
    clause_id = f"fluvio.clients.{client}.consumer-offsets"
    ready(target, "consumer-offsets")
    topic, consumer = client_topic(target), target.unique("reader")
    values = ["c0", "wörld ✓", "c2", "x" * 10_000, "c4"]  # text records, sent and read back as strings
    job = {"action": "consumer-offsets", "topic": topic, "values": values, "consumer": consumer}
    result = finished(clause_id, drive(target, job), "the consumer's offset committed, resumed from and deleted")
    steps = (("first", "the first consumer reads two records from the beginning", [[0, values[0]], [1, values[1]]]),
             ("stored", "the committed offset listed: the last record consumed", [[consumer, topic, 0, 1]]),
             ("resumed", "a consumer of the same id resumes after it", [[2, values[2]], [3, values[3]]]),
             ("after_delete", "the offset no longer listed once deleted", []))
    for key, what, expected in steps:
        if result[key] != expected:
            raise Divergence(C[clause_id], f"{what}: {expected}"[:2000], f"{result[key]}"[:2000])


@clients_case(SPEC, "topic-admin")
def test_topic_admin(target, client):
    clause_id = f"fluvio.clients.{client}.topic-admin"
    ready(target, "topic-admin")
    topic, missing = target.unique("admin"), target.unique("never-created")
    result = finished(clause_id, drive(target, {"action": "topic-admin", "topic": topic, "missing": missing}),
                      "a topic created, listed and deleted")
    checks = (("created", result["created"] is None, f"{topic} created"),
              ("all_topics", topic in result["all_topics"], f"{topic} among all topics"),
              ("listed", result["listed"] == [topic], f"only {topic} listed when named"),
              ("partitions", f"{topic}-0" in result["partitions"], f"its partition {topic}-0 listed"),
              ("created_again", "exist" in (result["created_again"] or "").lower(),
               "its second creation refused: the topic exists"),
              ("deleted_missing", "not found" in (result["deleted_missing"] or "").lower(),
               f"the deletion of {missing} refused: not found"),
              ("deleted", result["deleted"] is None, f"{topic} deleted"),
              ("all_topics_after", topic not in result["all_topics_after"], f"{topic} no longer listed"))
    for key, ok, what in checks:
        if not ok:
            raise Divergence(C[clause_id], what, f"{key}: {result[key]!r}"[:2000])
