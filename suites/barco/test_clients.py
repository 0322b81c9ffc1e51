"""Real HTTP clients against the target's Barco endpoints: one case per client and scenario
(``barco.clients.<client>.<scenario>``).

A scenario is a list of HTTP steps (suites/barco/clients/steps.py) that each client sends its own way: curl one
process per request (``--http1.1``, or ``--http2-prior-knowledge`` to the consumer API), decompressing the polled
payloads with the ``zstd`` tool; httpx in a driver process (suites/barco/clients/httpx_driver.py) holding one
HTTP/2 connection to the consumer API, decompressing with ``zstandard``. Every process is bounded by a time limit
(a client that hangs is FAILED with its last log lines and what it waited for); the answers are judged here,
under the client's clause. The endpoints are the target's (discovery tells them); topics, groups and consumers
are uniquely named. A client this machine does not have is NOT-RUN with the line that installs it. Barco
advertises no optional features, so no scenario is UNIMPLEMENTED.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import shutil
import struct
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from wirecheck.protocols.barco import SPEC, wire
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.barco.client import resolve
from wirecheck.suites.barco.clients.steps import Answer, run_steps
from wirecheck.targets.clients import ClientRun, clients_case, not_installed, run_client

C = SPEC.catalogue
STEPS_SECONDS = 20.0  # the polls of one scenario: well under a second against the reference broker
TIME_LIMIT = 40.0  # the httpx driver's process (it gives up polling after STEPS_SECONDS and says so)
CLOCK_SKEW_US = 60 * 10**6  # between this machine's clock and a remote target's
REQUEST_LIMIT = 10.0  # one curl process (one request), or one zstd
CURL_FLAGS = {"curl-http1": "--http1.1", "curl-h2c": "--http2-prior-knowledge"}
INSTALL = {"curl-http1": "apt-get install curl zstd", "curl-h2c": "apt-get install curl zstd",
           "httpx": "pip install 'httpx[http2]==0.28.1' (the interop extra)"}
FRAMES, NDJSON = "application/vnd.polar.producer.frames", "application/x-ndjson"


# -- the clients -----------------------------------------------------------------------------------------------


def ready(target, client: str) -> None:
    """The client is here (NOT-RUN otherwise) and its version recorded; the endpoints' addresses are known."""
    if client == "httpx":
        if importlib.util.find_spec("httpx") is None or importlib.util.find_spec("h2") is None:
            not_installed(client, INSTALL[client])
        target.fact("client_version", f"httpx {metadata.version('httpx')} (h2 {metadata.version('h2')}, "
                                      f"zstandard {metadata.version('zstandard')})")
    else:
        if shutil.which("curl") is None or shutil.which("zstd") is None:
            not_installed(client, INSTALL[client])
        # curl's first --version line names its libcurl and nghttp2; zstd's ends with its version
        zstd = first_line(["zstd", "--version"]).rstrip("* ,").split(",")[0].split()[-1]
        target.fact("client_version", f"{first_line(['curl', '--version'])} (zstd {zstd})")
    with target.precondition("the producer and consumer endpoints known (GET /v1/brokers)"):
        resolve(target, "producer-http")
        resolve(target, "consumer")


def first_line(argv: list[str]) -> str:
    shown = run_client(argv, timeout=REQUEST_LIMIT).stdout.strip()
    return shown.splitlines()[0] if shown else "unknown"


def base_url(target, endpoint: str) -> str:
    host, port = target.endpoint_address(endpoint)
    return f"http://{host}:{port}"


def run_scenario(target, client: str, steps: list[dict]) -> ClientRun:
    """Send ``steps`` with ``client``; the job and what came back are noted in the transcript."""
    urls = {"producer": base_url(target, "producer-http"), "consumer": base_url(target, "consumer")}
    target.transcript.note(f"client {client}: steps {json.dumps(steps)[:1500]}")
    if client == "httpx":
        argv = [sys.executable, "-m", "wirecheck.suites.barco.clients.httpx_driver"]
        run = run_client(argv, json.dumps({**urls, "steps": steps, "seconds": STEPS_SECONDS}), TIME_LIMIT)
    else:
        run = curl_steps(target, client, urls, steps)
    target.transcript.note(f"client {client}: {run.summary()[:2000]}; result {json.dumps(run.output)[:3000]}")
    return run


class ClientFailed(Exception):
    """A curl process that failed or hung: its summary is the step's error."""


def curl_steps(target, client: str, urls: dict, steps: list[dict]) -> ClientRun:
    """The steps as curl processes, one per request; the producer always over HTTP/1.1, its only protocol."""
    runs: list[ClientRun] = []
    with tempfile.TemporaryDirectory(prefix="wirecheck-curl-") as tmp:

        def send(endpoint: str, method: str, path: str, headers: dict, body: bytes | None) -> Answer:
            flag = CURL_FLAGS[client] if endpoint == "consumer" else "--http1.1"
            (Path(tmp) / "answer").unlink(missing_ok=True)
            run = run_client(curl_argv(flag, method, urls[endpoint] + path, headers, body, Path(tmp)),
                             timeout=REQUEST_LIMIT)
            runs.append(run)
            if run.returncode != 0:
                raise ClientFailed(f"curl {method} {path}: {run.summary()}")
            return curl_answer(run, Path(tmp))

        result = run_steps(steps, send, STEPS_SECONDS)
    return ClientRun(("curl", CURL_FLAGS[client]), 0, result, runs[-1].log_tail if runs else "",
                     sum(run.seconds for run in runs))


WRITE_OUT = "%{http_code} %{http_version} %{content_type}"


def curl_argv(flag: str, method: str, url: str, headers: dict, body: bytes | None, tmp: Path) -> list[str]:
    """One request (its answer's body into tmp/answer); a body goes through a file, bytes as they are."""
    argv = ["curl", "-sS", flag, "-X", method, "-o", str(tmp / "answer"), "-w", WRITE_OUT, "--max-time",
            str(int(REQUEST_LIMIT)), url]
    for name, value in headers.items():
        argv += ["-H", f"{name}: {value}"]
    if body is not None:
        (tmp / "body").write_bytes(body)
        argv += ["--data-binary", f"@{tmp / 'body'}"]
    return argv


def curl_answer(run: ClientRun, tmp: Path) -> Answer:
    """The answer of a curl command, from its --write-out line and output file."""
    status, version, *kind = run.stdout.strip().split(" ", 2)
    out = tmp / "answer"
    return Answer(int(status), version, kind[0] if kind else "", out.read_bytes() if out.exists() else b"")


# -- what the target answered ----------------------------------------------------------------------------------


def steps_of(clause_id: str, run: ClientRun, expected: str) -> list[dict]:
    """The steps' answers, or FAILED with how the client ended (hung, failed, what it waited for)."""
    out = run.output
    if run.returncode != 0 or out is None or "steps" not in out:
        raise Divergence(C[clause_id], expected, f"the client {run.summary()}")
    for step in out["steps"]:
        for answer in step["answers"]:
            if "error" in answer:
                raise Divergence(C[clause_id], expected, f"{step['op']}: the client got no answer: "
                                 f"{answer['error'][-1500:]}")
    if "waiting_for" in out:
        raise Divergence(C[clause_id], expected, f"the client gave up waiting for {out['waiting_for']}")
    return out["steps"]


def answers(step: dict) -> list[Answer]:
    return [Answer(a["status"], a["http_version"], a["content_type"], base64.b64decode(a["body"]))
            for a in step["answers"]]


def judge_status(clause_id: str, client: str, step: dict, wanted: tuple[int, ...], what: str) -> None:
    """Each answer of the step with one of the ``wanted`` statuses, over the HTTP version the client spoke."""
    speaks = "2" if client != "curl-http1" and step["op"] != "produce" else "1.1"  # the producer: HTTP/1.1 only
    for answer in answers(step):
        if answer.status not in wanted:
            raise Divergence(C[clause_id], f"{what}: status {' or '.join(map(str, wanted))}",
                             f"{answer.status} {answer.body[:200]!r}")
        if answer.http_version != speaks:
            raise Divergence(C[clause_id], f"{what} answered over HTTP/{speaks}", f"HTTP/{answer.http_version}")


def polled(clause_id: str, client: str, step: dict, since_us: int | None = None) -> list[bytes]:
    """The record bodies of a poll step's binary answers, decompressed by the client's own decompressor; with
    ``since_us``, each record's timestamp must be its produce time (the server's clock: records produced over
    HTTP carry none), between ``since_us`` and now, give or take CLOCK_SKEW."""
    bodies = []
    now_us = time.time_ns() // 1000
    for answer in answers(step):
        if answer.status != 200:
            continue
        kind = answer.content_type.split(";")[0].strip()
        if kind != wire.POLL_MIME:
            raise Divergence(C[clause_id], f"poll answers of Content-Type {wire.POLL_MIME}", kind or "none")
        try:
            items = wire.parse_poll_response(answer.body)
        except wire.WireError as exc:
            raise Divergence(C[clause_id], "the binary poll layout", str(exc)) from None
        for item in items:
            for stamp, body in decoded_records(clause_id, client, item):
                if since_us is not None and not since_us - CLOCK_SKEW_US <= stamp <= now_us + CLOCK_SKEW_US:
                    raise Divergence(C[clause_id], f"record timestamps the produce time (µs since the epoch, "
                                     f"{since_us} to {now_us} here, give or take {CLOCK_SKEW_US // 10**6} s)",
                                     f"{stamp} for {body[:40]!r}")
                bodies.append(body)
    return bodies


def decoded_records(clause_id: str, client: str, item: wire.PollItem) -> list[tuple[int, bytes]]:
    """httpx's users decompress with zstandard (wire's decoder); curl's with the zstd tool, which checks the
    frame's content checksum."""
    try:
        if client == "httpx":
            return item.records()
        return wire.parse_records(zstd_tool(item.payload))
    except (wire.WireError, ValueError) as exc:
        raise Divergence(C[clause_id], "each item's payload one zstd frame of records", str(exc)[:500]) from None


def zstd_tool(payload: bytes) -> bytes:
    with tempfile.TemporaryDirectory(prefix="wirecheck-zstd-") as tmp:
        frame, out = Path(tmp) / "payload.zst", Path(tmp) / "payload"
        frame.write_bytes(payload)
        run = run_client(["zstd", "-d", "-q", "-f", str(frame), "-o", str(out)], timeout=REQUEST_LIMIT)
        if run.returncode != 0:
            raise ValueError(f"zstd -d: {run.summary()}")
        return out.read_bytes()


def expect_records(clause_id: str, got: list[bytes], want: list[bytes], what: str) -> None:
    if got != want:
        shown = got if sum(map(len, got)) <= 300 else f"records of {[len(b) for b in got]} bytes"
        wanted = want if sum(map(len, want)) <= 300 else f"records of {[len(b) for b in want]} bytes"
        raise Divergence(C[clause_id], f"{what}: {wanted}", f"{shown}")


# -- scenarios -------------------------------------------------------------------------------------------------


def messages(client: str, batch: str = "first") -> list[bytes]:
    """curl's users post lines (x-ndjson, one record per line, UTF-8 among them); httpx's post u32-framed messages:
    an empty one, every byte value, one above 64 KiB. ``batch`` is in each non-empty one."""
    tag = batch.encode()
    if client == "httpx":
        return [b"", bytes(range(256)) + tag, tag * (70_000 // len(tag) + 1), b"last " + tag]
    return [b'{"n":%d,"batch":"%s"}' % (i, tag) for i in range(3)] + ["\u00e9 \u2713 ".encode() + tag]


def produce(client: str, topic: str, records: list[bytes]) -> dict:
    """One POST of ``records``, all with one partition key (one reader: their order is kept)."""
    if client == "httpx":
        body, kind = b"".join(struct.pack(">I", len(m)) + m for m in records), FRAMES
    else:
        body, kind = b"\n".join(records) + b"\n", NDJSON
    return {"op": "produce", "topic": topic, "body": base64.b64encode(body).decode(), "content_type": kind,
            "key": "k"}


def consumer_steps(consumer: str, group: str, topic: str, want: int) -> list[dict]:
    return [{"op": "register", "consumer": consumer, "group": group, "topic": topic},
            {"op": "poll", "consumer": consumer, "until": want}]


@clients_case(SPEC, "produce-consume")
def test_produce_consume(target, client):
    clause_id = f"barco.clients.{client}.produce-consume"
    ready(target, client)
    topic, consumer, sent = target.unique("client"), target.unique("c"), messages(client)
    steps = [produce(client, topic, sent), *consumer_steps(consumer, target.unique("g"), topic, len(sent)),
             {"op": "commit", "consumer": consumer}, {"op": "goodbye", "consumer": consumer},
             {"op": "poll", "consumer": consumer}]
    since_us = time.time_ns() // 1000
    done = steps_of(clause_id, run_scenario(target, client, steps), f"{len(sent)} records produced and polled back")
    produced, registered, polls, commit, goodbye, after = done
    judge_status(clause_id, client, produced, (200,), "the POST of the records")
    judge_status(clause_id, client, registered, (200,), "the registration")
    judge_status(clause_id, client, polls, (200, 204), "each poll")
    expect_records(clause_id, polled(clause_id, client, polls, since_us), sent, "the records polled")
    judge_status(clause_id, client, commit, (204,), "the commit")
    judge_status(clause_id, client, goodbye, (200,), "the goodbye")
    judge_status(clause_id, client, after, (409,), "a poll after goodbye (the consumer is gone)")


@clients_case(SPEC, "group-resume")
def test_group_resume(target, client):
    clause_id = f"barco.clients.{client}.group-resume"
    ready(target, client)
    topic, group = target.unique("client"), target.unique("g")
    first, second = target.unique("c"), target.unique("c")
    before, after = messages(client), messages(client, "after-commit")
    steps = [produce(client, topic, before), *consumer_steps(first, group, topic, len(before)),
             {"op": "commit", "consumer": first}, {"op": "goodbye", "consumer": first},
             produce(client, topic, after), *consumer_steps(second, group, topic, len(after)),
             {"op": "goodbye", "consumer": second}]
    done = steps_of(clause_id, run_scenario(target, client, steps), "both consumers' polls answered")
    for step, wanted, what in zip(done, [(200,), (200,), (200, 204), (204,), (200,), (200,), (200,), (200, 204),
                                         (200,)],
                                  ["the first POST", "the first registration", "the first consumer's polls",
                                   "the commit", "the goodbye", "the second POST", "the second registration",
                                   "the second consumer's polls", "the second goodbye"]):
        judge_status(clause_id, client, step, wanted, what)
    expect_records(clause_id, polled(clause_id, client, done[2]), before, "the first consumer's records")
    expect_records(clause_id, polled(clause_id, client, done[7]), after,
                   "the second consumer of the group: only the records produced after the commit")


@clients_case(SPEC, "json-poll")
def test_json_poll(target, client):
    clause_id = f"barco.clients.{client}.json-poll"
    ready(target, client)
    topic, consumer = target.unique("client"), target.unique("c")
    docs = [{"n": i, "text": "\u00e9 \u2713", "list": [i, None, True]} for i in range(4)]
    sent = [json.dumps(doc, separators=(",", ":")).encode() for doc in docs]
    steps = [produce(client, topic, sent), *consumer_steps(consumer, target.unique("g"), topic, len(sent)),
             {"op": "goodbye", "consumer": consumer}]
    steps[2]["accept"] = "application/json"
    done = steps_of(clause_id, run_scenario(target, client, steps), f"{len(sent)} JSON records polled back")
    for step, wanted, what in zip(done, [(200,), (200,), (200, 204), (200,)],
                                  ["the POST", "the registration", "each JSON poll", "the goodbye"]):
        judge_status(clause_id, client, step, wanted, what)
    items = []
    for answer in answers(done[2]):
        if answer.status == 200:
            try:
                items += wire.parse_poll_json(answer.body)
            except wire.WireError as exc:
                raise Divergence(C[clause_id], "a JSON array of items with topic, token, rangeIndex, version, "
                                 "startOffset and values", f"{exc}: {answer.body[:300]!r}") from None
    values = [json.loads(v) for item in items for v in item.values]
    if values != docs:
        raise Divergence(C[clause_id], f"the values {docs}", f"{values}")
    if any(item.topic != topic.encode() for item in items):
        raise Divergence(C[clause_id], f"items of topic {topic}", f"{sorted({i.topic for i in items})}")
    offsets = [item.offset for item in items]
    expected = [sum(len(i.values) for i in items[:n]) for n in range(len(items))]
    if offsets != expected:
        raise Divergence(C[clause_id], f"a new group from the start: start offsets {expected}", f"{offsets}")
