"""A strict RustLog client for the cases: every answer is decoded and checked against the layers' schema.

Each call names the clause it checks; whatever the target does instead becomes a :class:`Divergence` of that
clause, with the conversation already in the case's transcript.
"""

from __future__ import annotations

import base64
import re

from wirecheck.protocols.rustlog.clauses import CATALOGUE
from wirecheck.protocols.rustlog.layers import ANSWERS, FrameDecodeError, decode_frame, encode_frame, schema_problems
from wirecheck.protocols.verdicts import Divergence
from wirecheck.targets.client import StrictClient
from wirecheck.targets.transport.outcome import Reply

C = CATALOGUE

#: The clause a malformed answer of each type violates.
SHAPE_CLAUSE = {
    "ProduceResponse": "rustlog.produce.offsets",
    "FetchResponse": "rustlog.fetch.records",
    "OffsetCommitResponse": "rustlog.commit.round-trip",
    "OffsetFetchResponse": "rustlog.commit.round-trip",
    "CreateTopicResponse": "rustlog.admin.create",
    "ListTopicsResponse": "rustlog.admin.list",
    "DescribeTopicResponse": "rustlog.admin.describe-topic",
    "DescribePartitionResponse": "rustlog.admin.describe-partition",
    "MetricsFetchResponse": "rustlog.admin.metrics",
    "Pong": "rustlog.ping.pong",
    "Error": "rustlog.errors.shape",
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def short(obj, limit: int = 300) -> str:
    import json

    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


PING_CLAUSE = "rustlog.ping.pong"
REQUEST_TYPE = re.compile(rb'"type"\s*:\s*"(\w+)"')


def answer_clause(request: dict) -> str | None:
    """The clause of the answer a request gets (a Ping's Pong: rustlog.ping.pong); None for an unknown type."""
    return SHAPE_CLAUSE.get(ANSWERS.get(request.get("type"), ""))


class RustLog(StrictClient):
    """One connection to the target, speaking strict RustLog."""

    framing_clause = "rustlog.framing.response-frame"

    # -- raw exchange ---------------------------------------------------------------------------------------

    def send(self, request) -> bool:
        data = request if isinstance(request, (bytes, bytearray)) else encode_frame(request)
        one_frame = len(data) >= 4 and int.from_bytes(data[:4], "big") == len(data) - 4
        found = REQUEST_TYPE.search(data[:4096]) if one_frame else None
        self._answer_clause = answer_clause({"type": found.group(1).decode()}) if found else None
        return self.send_frame(data)

    def receive(self, clause_id: str, what: str = "an answer") -> dict:
        """The next answer, decoded; a missing or malformed answer violates ``clause_id`` or the framing clause."""
        return self.decode(self.session.recv(), clause_id, what)

    def decode(self, reply: Reply, clause_id: str, what: str = "an answer", type_clause: str | None = None) -> dict:
        """A whole frame -> its JSON object, with the field kinds of its layer checked when the type is known. No
        answer breaks ``clause_id``; an answer of no RustLog type ``type_clause`` (default the same)."""
        frame = self.frame_of(reply, clause_id, what)
        try:
            obj = decode_frame(frame)
        except FrameDecodeError as exc:
            raise Divergence(C["rustlog.framing.response-frame"], "a length-prefixed UTF-8 JSON object with a type",
                             str(exc)) from None
        if obj["type"] not in SHAPE_CLAUSE:
            # no RustLog answer type at all: the answer's defect (the clause of the request's answer), not the case's
            raise Divergence(C[type_clause or getattr(self, "_answer_clause", None) or clause_id],
                             f"{what}: a RustLog response type", short(obj))
        self.check_shape(obj)
        return obj

    def error_codes_of(self, frame: bytes, context=None) -> set[int] | None:
        """An Error answer's code (the one error model of RustLog: {"type": "Error", "code": N})."""
        try:
            obj = decode_frame(frame)
        except FrameDecodeError:
            return None
        if obj["type"] != "Error":
            return None
        self.check_shape(obj)
        return {obj["code"]}

    @staticmethod
    def details_problems(obj: dict) -> list[str]:
        """What breaks "details: an object or null" in an Error answer (rustlog.errors.details)."""
        return [p for p in schema_problems(obj) if p.startswith("Error.details")]

    def details(self, error: dict) -> dict:
        """An Error's details as an object ({} for null); no details key, or one that is not an object, breaks
        rustlog.errors.details (a case that reads what details says judges only that)."""
        problems = self.details_problems(error)
        if problems:
            raise Divergence(C["rustlog.errors.details"], "details: an object or null", "; ".join(problems))
        return error.get("details") or {}

    @staticmethod
    def check_shape(obj: dict) -> None:
        problems = schema_problems(obj)
        if not problems:
            return
        if obj["type"] == "Error" and all(p.startswith("Error.details") for p in problems):
            return  # a SHOULD (D11), judged by its own case: a missing key must not stop the case at hand
        raise Divergence(C[SHAPE_CLAUSE[obj["type"]]], f"a {obj['type']} as the spec defines it",
                         "; ".join(problems)[:500])

    def call(self, request, clause_id: str) -> dict:
        """Send a request and return its answer, whatever its type."""
        self.send(request)
        return self.receive(clause_id, f"an answer to {request['type'] if isinstance(request, dict) else 'it'}")

    # -- expectations ---------------------------------------------------------------------------------------

    def ok(self, request: dict, clause_id: str) -> dict:
        """The answer must be the request's own response type (seed §Message Types)."""
        answer = self.call(request, clause_id)
        wanted = ANSWERS[request["type"]]
        if answer["type"] != wanted:
            raise Divergence(C[clause_id], f"a {wanted}", short(answer))
        return answer

    def error(self, request, code: int, clause_id: str, code_clause: str | None = None) -> dict:
        """The answer must be an Error; its code must be ``code`` (under ``code_clause``, default the same)."""
        answer = self.call(request, clause_id)
        if answer["type"] != "Error":
            raise Divergence(C[clause_id], f"an Error with code {code}", short(answer))
        if answer["code"] != code:
            raise Divergence(C[code_clause or clause_id], f"Error code {code}",
                             f"Error code {answer['code']}: {short(answer.get('message', ''), 120)}")
        return answer

    def still_open(self, clause_id: str = "rustlog.request.stays-open") -> None:
        """The connection must still answer a Ping: no answer breaks ``clause_id``, a wrong one the Ping's clause."""
        self.send({"type": "Ping"})
        self.pong(clause_id)

    def pong(self, clause_id: str) -> None:
        """The answer to a Ping just sent: no answer breaks ``clause_id``, an answer but a Pong the Ping's clause (a
        case that uses a Ping as its probe judges that it was answered; what the answer says is rustlog.ping.pong)."""
        answer = self.decode(self.session.recv(), clause_id, "an answer to a Ping", type_clause=PING_CLAUSE)
        if answer != {"type": "Pong"}:
            raise Divergence(C[PING_CLAUSE], '{"type":"Pong"}', short(answer))

    # -- the operations, each checked against its clause -------------------------------------------------------

    def create_topic(self, topic: str, partitions: int = 1) -> dict:
        answer = self.ok({"type": "CreateTopic", "topic": topic, "partition_count": partitions},
                         "rustlog.admin.create")
        if answer["success"] is not True or answer["partitions_created"] != partitions:
            raise Divergence(C["rustlog.admin.create"], f"success true, partitions_created {partitions}",
                             short(answer))
        return answer

    def produce(self, topic: str, partition: int, records: list[bytes]) -> dict:
        answer = self.ok({"type": "Produce", "topic": topic, "partition": partition,
                          "records": [b64(r) for r in records]}, "rustlog.produce.offsets")
        if answer["record_count"] != len(records):
            raise Divergence(C["rustlog.produce.offsets"], f"record_count {len(records)}", short(answer))
        return answer

    def fetch(self, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20, group_id: str = "") -> dict:
        answer = self.ok({"type": "Fetch", "group_id": group_id, "topic": topic, "partition": partition,
                          "offset": offset, "max_bytes": max_bytes}, "rustlog.fetch.records")
        records = answer["records"]
        offsets = [r["offset"] for r in records]
        if records:
            if offsets != list(range(offset, offset + len(records))):
                raise Divergence(C["rustlog.fetch.records"], f"consecutive offsets from {offset}", str(offsets[:20]))
            if answer["next_offset"] != offsets[-1] + 1:
                raise Divergence(C["rustlog.fetch.next-offset"], f"next_offset {offsets[-1] + 1}",
                                 f"next_offset {answer['next_offset']}")
        return answer

    def payloads(self, answer: dict) -> list[bytes]:
        return [base64.b64decode(r["payload"]) for r in answer["records"]]

    def commit(self, group: str, topic: str, partition: int, offset: int) -> bool:
        answer = self.ok({"type": "OffsetCommit", "group": group, "topic": topic, "partition": partition,
                          "offset": offset}, "rustlog.commit.round-trip")
        return answer["success"]

    def committed(self, group: str, topic: str, partition: int) -> int | None:
        answer = self.ok({"type": "OffsetFetch", "group": group, "topic": topic, "partition": partition},
                         "rustlog.commit.round-trip")
        return answer["offset"]

    def describe(self, topic: str) -> dict:
        return self.ok({"type": "DescribeTopic", "topic": topic}, "rustlog.admin.describe-topic")

    def high_watermark(self, topic: str, partition: int) -> int:
        for entry in self.describe(topic)["partitions"]:
            if entry["partition"] == partition:
                return entry["high_watermark"]
        raise Divergence(C["rustlog.admin.describe-topic"], f"partition {partition} listed", "not listed")

def new_topic(target, client: RustLog | None = None, partitions: int = 1, stem: str = "t",
              shared: bool = False) -> tuple[RustLog, str]:
    """A topic for this case.

    ``shared``: the case's checks hold on a topic that already holds records and that other cases write to at the
    same time (they are relative to the case's own writes), so a configured topic with enough partitions is used
    when the user named some. Otherwise a fresh topic with a unique name, created with CreateTopic: a target that
    refuses makes the case BLOCKED.
    """
    client = client or RustLog(target)
    if shared:
        for name, count in target.named_topics().items():
            if count >= partitions:
                return client, name
    topic = target.unique(stem)
    with target.precondition(f"topic {topic} created with {partitions} partition(s)"):
        client.create_topic(topic, partitions)
    return client, topic


def partition_count(target, client: RustLog, topic: str) -> int:
    """How many partitions a topic has (a configured topic's as named, else as DescribeTopic lists them)."""
    named = target.named_topics().get(topic)
    if named is not None:
        return named
    with target.precondition(f"topic {topic} described"):
        return len(client.describe(topic)["partitions"])


def produced(target, client: RustLog, topic: str, partition: int, records: list[bytes]) -> int:
    """Setup: append ``records`` and return their base offset (a failure is BLOCKED, not the case's clause)."""
    with target.precondition(f"{len(records)} record(s) produced to {topic}/{partition}, found at their base offset"):
        base = client.produce(topic, partition, records)["base_offset"]
        # On a shared topic the base offset is the only way to find the records again: check it holds them.
        first = client.payloads(client.fetch(topic, partition, base, max_bytes=1))[:1]
        if first != records[:1]:
            raise Divergence(C["rustlog.produce.offsets"], f"the first record at base_offset {base}",
                             f"{first[0][:40]!r}" if first else "no record there")
        return base
