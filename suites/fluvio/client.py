"""A strict Fluvio SPU client for the conformance cases.

Every answer is decoded with ``protocols.fluvio.messages`` at the request's version (strict: the size prefix
must match, the body must end exactly at the frame's end, every ErrorCode must be a known tag with its
payload) and its correlation id checked. Whatever the target does instead becomes a :class:`Divergence` of the
clause the case names, with the conversation already in the case's transcript.

Topics follow decision T1 (protocols/fluvio/clauses.py): ``WIRECHECK_FLUVIO_TOPICS`` names existing topics,
otherwise a first Produce to a fresh name must create one. Cases work relative to a partition's log end when
they start, so shared pre-created topics with data in them are fine.
"""

from __future__ import annotations

import itertools
import os
import struct

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import errors, messages, records
from wirecheck.protocols.fluvio.clauses import CATALOGUE
from wirecheck.reports.model import Divergence, Unimplemented
from wirecheck.targets.client import AdvertisedVersions, StrictClient, short
from wirecheck.targets.session import Reply

C = CATALOGUE
CLIENT_ID = "wirecheck"
TOPICS_ENV = "WIRECHECK_FLUVIO_TOPICS"
#: a name no Fluvio topic can have (upper case, underscore): never auto-created, never provisioned
INVALID_TOPIC = "WIRECHECK_NO_SUCH_TOPIC"
NO_SUCH_PARTITION = 100_000
_correlation = itertools.count(1)


class Fluvio(AdvertisedVersions, StrictClient):
    """One connection to the target, speaking strict Fluvio SPU."""

    framing_clause = "fluvio.framing.response-frame"

    # -- raw exchange ---------------------------------------------------------------------------------------

    @staticmethod
    def next_correlation_id() -> int:
        return next(_correlation) & 0x7FFFFFFF

    def send(self, api_key: int, version: int, body: dict, correlation_id: int | None = None) -> int:
        correlation_id = self.next_correlation_id() if correlation_id is None else correlation_id
        self.send_frame(messages.encode_request(api_key, version, correlation_id, body, CLIENT_ID))
        return correlation_id

    def receive(self, api_key: int, version: int, correlation_id: int, clause_id: str,
                deadline: float | None = None, decode_clause: str | None = None) -> dict:
        """The next answer, decoded at ``version``; it must carry ``correlation_id``."""
        reply = self.session.recv(deadline)
        return self.decode(reply, api_key, version, correlation_id, clause_id, decode_clause)

    def decode(self, reply: Reply, api_key: int, version: int, correlation_id: int, clause_id: str,
               decode_clause: str | None = None) -> dict:
        frame = self.frame_of(reply, clause_id, f"a {messages.api_name(api_key)} v{version} response")
        try:
            decoded = messages.decode_response(api_key, version, frame)
        except DecodeError as exc:
            # A Produce response that does not decode at its version has the wrong fields for that version
            fallback = ("fluvio.produce.response-fields" if api_key == messages.PRODUCE
                        else "fluvio.framing.response-frame")
            clause = decode_clause or ("fluvio.errors.encoding" if "ErrorCode" in str(exc) else fallback)
            raise Divergence(C[clause], f"a {messages.api_name(api_key)} v{version} response that decodes exactly",
                             f"{exc} ({len(frame)} bytes: {frame[:64].hex()}...)") from None
        if decoded["correlation_id"] != correlation_id:
            raise Divergence(C["fluvio.framing.correlation-id"], f"correlation id {correlation_id}",
                             f"correlation id {decoded['correlation_id']}")
        return decoded["body"]

    def call(self, api_key: int, version: int, body: dict, clause_id: str, decode_clause: str | None = None) -> dict:
        correlation_id = self.send(api_key, version, body)
        return self.receive(api_key, version, correlation_id, clause_id, decode_clause=decode_clause)

    # -- ApiVersions ----------------------------------------------------------------------------------------

    def api_versions(self, version: int = 2) -> dict:
        body = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}
        answer = self.call(messages.API_VERSIONS, version, body, "fluvio.versions.advertised")
        if answer["error_code"].code != 0:
            raise Divergence(C["fluvio.versions.advertised"], "error_code 0", str(answer["error_code"]))
        return answer

    def fetch_advertised(self) -> dict[int, tuple[int, int]]:
        return {k["api_key"]: (k["min_version"], k["max_version"]) for k in self.api_versions()["api_keys"]}

    @staticmethod
    def api_name(api_key: int) -> str:
        return messages.api_name(api_key)

    def version(self, api_key: int, wanted: int = messages.COMMON_VERSION) -> int:
        """``wanted`` if advertised, else the closest advertised version we can encode (<= 25)."""
        low, high = self.require(api_key)
        chosen = min(max(wanted, low), high, messages.COMMON_VERSION)
        if chosen < low:
            raise Unimplemented(f"{messages.api_name(api_key)} advertised as {low}..{high}: no version we encode")
        return chosen

    # -- Produce --------------------------------------------------------------------------------------------

    @staticmethod
    def produce_body(topics: list[tuple[str, list[tuple[int, bytes]]]], isolation: int = messages.READ_UNCOMMITTED,
                     timeout_ms: int = 1500, transactional_id: str | None = None) -> dict:
        return {"transactional_id": transactional_id, "isolation": isolation, "timeout_ms": timeout_ms,
                "topics": [{"name": name, "partitions": [{"partition_index": p, "records": data} for p, data in parts]}
                           for name, parts in topics],
                "smartmodules": []}

    def produce_request(self, topics, version: int | None = None, clause_id: str = "fluvio.produce.offsets",
                        **options) -> dict:
        version = self.version(messages.PRODUCE) if version is None else version
        answer = self.call(messages.PRODUCE, version, self.produce_body(topics, **options), clause_id)
        wanted = [(name, [p for p, _ in parts]) for name, parts in topics]
        got = [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in answer["responses"]]
        if got != wanted:
            raise Divergence(C["fluvio.produce.response-entries"], f"entries {wanted}", f"entries {got}")
        return answer

    def produce(self, topic: str, partition: int, record_set: bytes, clause_id: str = "fluvio.produce.offsets",
                version: int | None = None, **options) -> tuple[errors.ErrorValue, int]:
        """(error, base_offset) of one partition entry."""
        answer = self.produce_request([(topic, [(partition, record_set)])], version, clause_id, **options)
        entry = answer["responses"][0]["partitions"][0]
        return entry["error_code"], entry["base_offset"]

    def produce_ok(self, topic: str, partition: int, record_set: bytes, clause_id: str = "fluvio.produce.offsets",
                   **options) -> int:
        error, base = self.produce(topic, partition, record_set, clause_id, **options)
        if error.code != 0:
            raise Divergence(C[clause_id], "error_code 0", str(error))
        return base

    # -- Fetch ----------------------------------------------------------------------------------------------

    @staticmethod
    def fetch_body(topic: str, partition: int, offset: int, max_bytes: int = messages.DEFAULT_MAX_BYTES,
                   isolation: int = 0) -> dict:
        return {"max_wait": 0, "min_bytes": 0, "max_bytes": max_bytes, "isolation": isolation,
                "topics": [{"name": topic, "fetch_partitions": [{
                    "partition_index": partition, "current_leader_epoch": 0, "fetch_offset": offset,
                    "log_start_offset": 0, "max_bytes": max_bytes}]}],
                "forgotten": []}

    def fetch(self, topic: str, partition: int, offset: int, max_bytes: int = messages.DEFAULT_MAX_BYTES,
              clause_id: str = "fluvio.fetch.stored-batches", version: int | None = None,
              decode_clause: str | None = None, isolation: int = 0) -> dict:
        """The one partition entry of a Fetch answer."""
        version = self.version(messages.FETCH) if version is None else version
        answer = self.call(messages.FETCH, version, self.fetch_body(topic, partition, offset, max_bytes, isolation),
                           clause_id, decode_clause)
        topics = answer["topics"]
        if len(topics) != 1 or topics[0]["name"] != topic or len(topics[0]["partitions"]) != 1:
            raise Divergence(C[clause_id], f"one entry for {topic}/{partition}", short(answer))
        entry = topics[0]["partitions"][0]
        if entry["partition_index"] != partition:
            raise Divergence(C[clause_id], f"partition_index {partition}", str(entry["partition_index"]))
        return entry

    def fetch_batches(self, topic: str, partition: int, offset: int, clause_id: str = "fluvio.fetch.stored-batches",
                      **options) -> list[bytes]:
        entry = self.fetch(topic, partition, offset, clause_id=clause_id, **options)
        if entry["error_code"].code != 0:
            raise Divergence(C[clause_id], "error_code 0", str(entry["error_code"]))
        return records.split_batches(entry["records"])

    # -- FetchOffsets ---------------------------------------------------------------------------------------

    def fetch_offsets(self, topic: str, partitions: list[int], clause_id: str = "fluvio.offsets.values") -> list[dict]:
        version = self.version(messages.FETCH_OFFSETS)
        body = {"topics": [{"name": topic, "partitions": [{"partition_index": p} for p in partitions]}],
                "consumer_id": None}
        answer = self.call(messages.FETCH_OFFSETS, version, body, clause_id)
        got = [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in answer["topics"]]
        if got != [(topic, partitions)]:
            raise Divergence(C[clause_id], f"entries {[(topic, partitions)]}", f"entries {got}")
        return answer["topics"][0]["partitions"]

    def log_end(self, topic: str, partition: int = 0) -> int:
        """The partition's high watermark (= log end on a single replica) from FetchOffsets."""
        entry = self.fetch_offsets(topic, [partition])[0]
        if entry["error_code"].code != 0:
            raise Divergence(C["fluvio.offsets.values"], "error_code 0 for a topic we produced to",
                             str(entry["error_code"]))
        return entry["last_stable_offset"]

    # -- StreamFetch / UpdateOffsets ------------------------------------------------------------------------

    def stream_fetch(self, topic: str, partition: int, offset: int, max_bytes: int = messages.DEFAULT_MAX_BYTES,
                     isolation: int = 0) -> tuple[int, int]:
        """Send a StreamFetch; returns (correlation id, version). Answers come with ``stream_answer``."""
        version = self.version(messages.STREAM_FETCH)
        body = {"topic": topic, "partition": partition, "fetch_offset": offset, "max_bytes": max_bytes,
                "isolation": isolation, "wasm_module": b"", "smartmodule": None, "derivedstream": None,
                "smartmodules": [], "consumer_id": None}
        return self.send(messages.STREAM_FETCH, version, body), version

    def stream_answer(self, correlation_id: int, version: int, clause_id: str, deadline: float | None = None) -> dict:
        return self.receive(messages.STREAM_FETCH, version, correlation_id, clause_id, deadline)

    def update_offsets(self, updates: list[tuple[int, int]], clause_id: str = "fluvio.update-offsets.status") -> list:
        """[(offset, session_id)] -> the status entries."""
        version = self.version(messages.UPDATE_OFFSETS, 0)
        body = {"offsets": [{"offset": o, "session_id": s} for o, s in updates]}
        return self.call(messages.UPDATE_OFFSETS, version, body, clause_id)["status"]


# -- record sets -------------------------------------------------------------------------------------------------


def record_set(*batches: bytes) -> bytes:
    return b"".join(batches)


def batch_of(values: list[bytes], **options) -> bytes:
    return records.build_batch(values, **options)


# -- topics (decision T1) ----------------------------------------------------------------------------------------


def provisioned_topics(target) -> dict[str, int]:
    """``--target-option fluvio.topics=name:partitions,...`` (or ``WIRECHECK_FLUVIO_TOPICS``) -> {name: partitions}."""
    text = (getattr(target, "options", {}).get("topics") or os.environ.get(TOPICS_ENV, "")).strip()
    topics = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, count = item.partition(":")
        topics[name] = int(count or 1)
    return topics


def new_topic(target, client: Fluvio | None = None, stem: str = "t", partitions: int = 1) -> tuple[Fluvio, str]:
    """A topic for this case: a provisioned one with enough partitions, or a fresh name created by Produce."""
    client = client or Fluvio(target)
    given = provisioned_topics(target)
    if given:
        for name, count in given.items():
            if count >= partitions:
                return client, name
        raise Unimplemented(f"{TOPICS_ENV} names no topic with {partitions} partitions")
    if partitions > 1:
        raise Unimplemented(f"a case needs {partitions} partitions: name such a topic in {TOPICS_ENV}")
    topic = target.unique(stem.lower())
    with target.precondition(f"topic {topic} created by an empty Produce"):
        error, _ = client.produce(topic, 0, b"", clause_id="fluvio.topics.provisioning")
        if error.code == errors.NOT_LEADER_FOR_PARTITION:
            raise Unimplemented(f"the target did not create {topic} on Produce and {TOPICS_ENV} is not set "
                                "(the SPU has no topic API; decision T1)")
        if error.code != 0:
            raise Divergence(C["fluvio.produce.empty"], "error 0 for an empty RecordSet", str(error))
    return client, topic


def frame_with_size(size: int, rest: bytes = b"") -> bytes:
    return struct.pack(">i", size) + rest
