"""Strict Barco clients for the conformance cases: the binary producer (framed), and HTTP helpers for the
discovery, HTTP producer and consumer endpoints.

Endpoint addresses: the target's address is discovery's; the others come from the reference broker, from
``--target-option barco.producer=HOST:PORT`` (likewise ``producer-http``, ``consumer``), or from
``GET /v1/brokers`` on the target's host (learned once per run).
"""

from __future__ import annotations

import itertools
import json

from wirecheck.protocols.barco import wire
from wirecheck.protocols.barco.clauses import CATALOGUE
from wirecheck.protocols.verdicts import Divergence
from wirecheck.targets.client import StrictClient, short
from wirecheck.targets.transport.outcome import Outcome

C = CATALOGUE
DISCOVERED = {"producer": "producerBinaryPort", "producer-http": "producerPort", "consumer": "consumerPort"}
_sid = itertools.count(1)


def topic_for(target, stem: str = "t") -> str:
    """A topic for a case whose checks hold whatever the topic holds: the first of ``--target-option
    barco.topics=NAME,...`` (topics an operator provisioned) when given, else a fresh name (a Barco broker
    creates a topic on its first write)."""
    named = list(target.named_topics())
    return named[0] if named else target.unique(stem)


def next_sid() -> int:
    return next(_sid) % 0xFFFE + 1


def diverge(clause: str, expected: str, actual) -> Divergence:
    return Divergence(C[clause], expected, short(actual if isinstance(actual, str) else str(actual)))


def resolve(target, endpoint: str) -> None:
    """Make sure the target knows where ``endpoint`` listens (asking discovery when it does not)."""
    if target.knows_endpoint(endpoint):
        return
    reply = target.connect().request("GET", "/v1/brokers")
    if not reply.complete or reply.status != 200:
        raise diverge("barco.discovery.brokers", "200 with the broker ports", reply)
    try:
        doc = json.loads(reply.body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise diverge("barco.discovery.brokers", "a brokers document", f"not JSON: {exc}") from None
    for name, key in DISCOVERED.items():  # every port it does give (the discovery cases judge the document whole)
        port = wire.discovered_port(doc, key)
        if port is not None:
            target.learn_endpoint(name, (target.address[0], port))
    if not target.knows_endpoint(endpoint):
        raise diverge("barco.discovery.brokers", f"{DISCOVERED[endpoint]} in GET /v1/brokers (or give --target-option "
                                                 f"barco.{endpoint}=HOST:PORT)", short(reply.body))


def http(target, endpoint: str, deadline: float | None = None):
    """A session to an HTTP endpoint ("discovery", "producer-http", "consumer", "consumer-h2c")."""
    if endpoint != "discovery":
        resolve(target, "consumer" if endpoint == "consumer-h2c" else endpoint)
    return target.connect(deadline, endpoint=endpoint)


class Producer(StrictClient):
    """One binary producer connection, STARTUP already sent unless ``started=False``."""

    framing_clause = "barco.framing.response-frame"

    def __init__(self, target, started: bool = True):
        resolve(target, "producer")
        super().__init__(target, target.connect(endpoint="producer"))
        if started:
            self.startup()

    def error_codes_of(self, frame: bytes, context=None):
        """The code of an ERROR answer (None for another answer); an ERROR without a known code breaks the
        error-body clause, whichever clause the case compares the code for."""
        if wire.parse_header(frame).opcode != wire.ERROR:
            return None
        return {self.error_code(frame[wire.HEADER_SIZE :])}

    @staticmethod
    def error_code(body: bytes) -> int:
        try:
            return wire.parse_known_error(body)[0]
        except wire.WireError as exc:
            raise diverge("barco.producer.error-body", "a code byte 0, 1 or 2, then the message", str(exc)) from None

    def answer(self, sid: int, clause: str) -> wire.Header:
        """The next answer; its header must be well formed and carry ``sid``."""
        frame = self.frame(clause)
        head = wire.parse_header(frame)
        if head.version != 1 or head.flags != 0 or not head.crc_ok or head.body_length != len(frame) - 13:
            raise diverge("barco.framing.response-header", "version 1, flags 0, a valid head crc",
                          wire.describe(frame))
        if head.stream_id != sid:
            raise diverge("barco.framing.stream-id-echo", f"stream id {sid}", f"stream id {head.stream_id}")
        self.last_body = frame[wire.HEADER_SIZE :]
        return head

    def expect(self, sid: int, opcode: int, clause: str, what: str = "") -> wire.Header:
        head = self.answer(sid, clause)
        if head.opcode != opcode:
            raise diverge(clause, f"{wire.OPCODES[opcode]} {what}".strip(), wire.describe(self.session_frame(head)))
        if opcode in (wire.READY, wire.PRODUCE_RESPONSE) and self.last_body:  # notes §2.5: body length 0
            raise diverge("barco.producer.produce-ack" if opcode == wire.PRODUCE_RESPONSE else clause,
                          f"{wire.OPCODES[opcode]} with an empty body", wire.describe(self.session_frame(head)))
        if opcode == wire.ERROR:
            code = self.error_code(self.last_body)
            if code != wire.SERVER_ERROR:
                raise diverge(clause, "ERROR code 0 (serverError)", f"code {code}")
            if len(self.last_body) > wire.MAX_ERROR_BODY:
                raise diverge("barco.producer.error-size", "<= 512 bytes", f"{len(self.last_body)} bytes")
        return head

    def session_frame(self, head: wire.Header) -> bytes:
        return wire.header(head.opcode, head.body_length, head.stream_id, head.flags, head.version, head.crc) + \
            self.last_body

    def startup(self, sid: int = 0) -> None:
        self.send_frame(wire.frame(wire.STARTUP, b"", sid))
        self.expect(sid, wire.READY, "barco.producer.ready")

    def produce(self, topic: str | bytes, messages: list[bytes], key: bytes | str = b"", timestamp: int | None = None,
                clause: str = "barco.producer.produce-ack") -> None:
        sid = next_sid()
        self.send_frame(wire.produce(topic, messages, key, sid, timestamp))
        self.expect(sid, wire.PRODUCE_RESPONSE, clause)

    def refused(self, frame: bytes, sid: int, clause: str) -> None:
        """``frame`` must get ERROR(0) and the connection must still serve a HEARTBEAT."""
        self.send_frame(frame)
        self.expect(sid, wire.ERROR, clause, "code 0")
        self.heartbeat(clause)

    def heartbeat(self, clause: str = "barco.producer.heartbeat") -> None:
        """A HEARTBEAT must be answered: no answer (a close, silence) breaks ``clause`` (the connection was to stay
        usable), an answer other than READY breaks the heartbeat's own clause."""
        sid = next_sid()
        self.send_frame(wire.frame(wire.HEARTBEAT, b"", sid))
        head = self.answer(sid, clause)
        if head.opcode != wire.READY:
            raise diverge("barco.producer.heartbeat", "READY", wire.describe(self.session_frame(head)))


# -- consumer helpers -------------------------------------------------------------------------------------------


def register_query(consumer: str, topics: list[str], group: str | None = None, earliest: bool = True) -> str:
    from urllib.parse import urlencode

    params = [("consumerId", consumer)] + [("topic", t) for t in topics]
    if group:
        params.append(("group", group))
    params.append(("onNewGroup", "startFromEarliest" if earliest else "startFromLatest"))
    return "/v1/consumer/register?" + urlencode(params)


class Consumer:
    """A stateless consumer (consumerId in every query) on one HTTP/1.1 or h2c session; ``bound``: one bound to
    its connection instead (registered with a ConsumerInfo body, its requests name no consumerId)."""

    def __init__(self, target, topics: list[str], group: str | None = None, endpoint: str = "consumer",
                 earliest: bool = True, name: str | None = None, bound: bool = False):
        self.target = target
        self.id = name or target.unique("c")
        self.group = group or target.unique("g")
        self.topics = topics
        self.session = http(target, endpoint)
        self.earliest = earliest
        self.query = "" if bound else f"?consumerId={self.id}"

    def register(self, clause: str = "barco.consumer.register", status: int = 200):
        """Register; a refusal is BLOCKED in a case that checks another clause (registration is its setup)."""
        with self.target.precondition(f"consumer {self.id} registered for {self.topics}"):
            reply = self.session.request("PUT", register_query(self.id, self.topics, self.group, self.earliest))
            expect_status(reply, status, clause)
        return reply

    def register_bound(self, clause: str = "barco.consumer.register-connection"):
        """Register with a ConsumerInfo JSON body, binding the consumer to this connection."""
        info = {"id": self.id, "group": self.group, "topics": self.topics, "onNewGroup": int(self.earliest)}
        reply = self.session.request("PUT", "/v1/consumer/register", [("content-type", "application/json")],
                                     json.dumps(info).encode())
        expect_status(reply, 200, clause)
        return reply

    def poll(self, accept: str | None = None):
        headers = [("accept", accept)] if accept else []
        return self.session.request("POST", f"/v1/consumer/poll{self.query}", headers)

    def poll_items(self, clause: str = "barco.consumer.poll-binary") -> list[wire.PollItem]:
        """The items of one poll: [] on a 204, the decoded binary body on a 200."""
        reply = self.poll()
        if reply.complete and reply.status == 204:
            return []
        expect_status(reply, 200, clause)
        return decode_binary(reply, clause)

    def drain(self, want: int, clause: str, polls: int = 40, one_key: bool = False
              ) -> list[tuple[wire.PollItem, list[bytes]]]:
        """Poll until ``want`` records arrived (implicitly committing each poll); (item, record bodies) pairs.
        ``one_key``: everything was produced with one partition key, so each topic must come from one reader
        (barco.producer.partition-key, judged before the case reads order or offsets across readers)."""
        out, got = [], 0
        for _ in range(polls):
            items = self.poll_items(clause)
            for item in items:
                bodies = [body for _, body in records_of(item, clause)]
                out.append((item, bodies))
                got += len(bodies)
            if got >= want:
                break
        if one_key:
            readers = {(i.topic, i.token, i.range_index, i.version) for i, _ in out}
            if len(readers) > len({i.topic for i, _ in out}):
                raise diverge("barco.producer.partition-key", "one reader per topic for the messages of one key",
                              f"readers {sorted(readers)}")
        return out

    def commit(self):
        return self.session.request("POST", f"/v1/consumer/commit{self.query}")

    def goodbye(self, commit: bool = True):
        return self.session.request("POST", f"/v1/consumer/goodbye{self.query}"
                                    + ("" if commit else ("&" if self.query else "?") + "commit=false"))


def unregistered_refused(target, endpoint: str = "consumer") -> None:
    """A precondition: a poll naming no registered consumer gets 409 (``barco.consumer.unregistered``). Cases that
    judge another clause through the same answer (after goodbye, without consumerId) first make sure of it."""
    with target.precondition("a poll for an unregistered consumer is refused with 409"):
        reply = http(target, endpoint).request("POST", f"/v1/consumer/poll?consumerId={target.unique('nobody')}")
        expect_status(reply, 409, "barco.consumer.unregistered")


def expect_status(reply, status: int | tuple, clause: str, what: str = "") -> None:
    wanted = status if isinstance(status, tuple) else (status,)
    if not reply.complete or reply.status not in wanted:
        if refused_stream(reply):  # the server reset our HTTP/2 stream: it does not serve h2c as it must
            raise diverge("barco.consumer.h2c", "an answer on every stream of an HTTP/2 connection",
                          f"{reply} ({reply.detail})")
        raise diverge(clause, f"status {' or '.join(map(str, wanted))} {what}".strip(),
                      f"{reply}: {reply.body[:200]!r}" if reply.complete else reply)


def refused_stream(reply) -> bool:
    """An HTTP/2 stream the server reset (RST_STREAM) instead of answering: the stream only, not the connection."""
    return reply.outcome is Outcome.RESET and reply.stream_id is not None and reply.detail.startswith("RST_STREAM")


#: the clause of each HTTP endpoint's GET /status
STATUS_CLAUSES = {"discovery": "barco.discovery.status", "producer-http": "barco.http-producer.status",
                  "consumer": "barco.consumer.status", "consumer-h2c": "barco.consumer.status"}


def status_answered(reply, endpoint: str, clause: str) -> None:
    """A GET /status a case sends to see the connection serve (keep-alive, HTTP/2 streams): no answer breaks
    ``clause``, an answer other than 200 the endpoint's status clause."""
    if not reply.complete:
        expect_status(reply, 200, clause, "to GET /status")  # raises: no answer at all
    expect_status(reply, 200, STATUS_CLAUSES[endpoint])


def decode_binary(reply, clause: str = "barco.consumer.poll-binary") -> list[wire.PollItem]:
    kind = (reply.header("content-type") or "").split(";")[0].strip()
    if kind != wire.POLL_MIME:
        raise diverge("barco.consumer.poll-binary", f"Content-Type {wire.POLL_MIME}", kind or "none")
    try:
        items = wire.parse_poll_response(reply.body)
    except wire.WireError as exc:
        raise diverge("barco.consumer.poll-binary", "the binary poll layout", str(exc)) from None
    if not items:
        raise diverge("barco.consumer.poll-binary", "at least one item on a 200", "0 items")
    return items


def records_of(item: wire.PollItem, clause: str = "barco.consumer.records") -> list[tuple[int, bytes]]:
    if not wire.zstd_has_checksum(item.payload):
        raise diverge("barco.consumer.payload-zstd", "a zstd frame with the content checksum flag",
                      item.payload[:8].hex())
    try:
        return item.records()
    except wire.WireError as exc:
        raise diverge("barco.consumer.payload-zstd" if "zstd" in str(exc) else "barco.consumer.records",
                      "records in one zstd frame", str(exc)) from None


def http_produce(target, topic: str, body: bytes, content_type: str | None = None, key: str = "",
                 clause: str = "barco.http-producer.produce", status: int = 200):
    session = http(target, "producer-http")
    headers = [("content-type", content_type)] if content_type else []
    query = f"?partitionKey={key}" if key else ""
    reply = session.request("POST", f"/v1/topic/{topic}/messages{query}", headers, body)
    expect_status(reply, status, clause)
    return reply


def http_stored(target, topic: str, want: int) -> list[bytes]:
    """The record bodies a POST answered 200 stored in the fresh ``topic``, read back by a fresh consumer. None at
    all is barco.http-producer.produce's divergence, whatever the case compares them for."""
    consumer = Consumer(target, [topic])
    consumer.register()
    bodies = [b for _, bs in consumer.drain(want, "barco.http-producer.produce") for b in bs]
    if not bodies:
        raise diverge("barco.http-producer.produce", "the records of a POST answered 200", "no record stored")
    return bodies


def expect_records(got: list[bytes], want: list[bytes], clause: str, expected: str | None = None) -> None:
    """The records read back must be ``want``; when only the zero-length ones are missing, they were not stored:
    barco.producer.empty-message's divergence, whatever the case compares them for."""
    if got == want:
        return
    shown = got if sum(map(len, got)) <= 200 else f"records of {[len(b) for b in got]} bytes"
    if got == [w for w in want if w]:
        raise diverge("barco.producer.empty-message", "zero-length records stored as such", shown)
    raise diverge(clause, expected or f"records {want}", shown)


def json_items(reply, clause: str = "barco.consumer.poll-json") -> list[wire.PollItem]:
    try:
        return wire.parse_poll_json(reply.body)
    except wire.WireError as exc:
        raise diverge(clause, "a JSON array of poll items", str(exc)) from None


def as_json(data: bytes):
    return json.loads(data)
