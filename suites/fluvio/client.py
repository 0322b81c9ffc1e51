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
import time

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import errors, messages, records
from wirecheck.protocols.fluvio.clauses import CATALOGUE, undecodable_response_clause
from wirecheck.protocols.verdicts import Blocked, Divergence, Unimplemented
from wirecheck.targets.client import AdvertisedVersions, StrictClient, short
from wirecheck.targets.runner.validate import parse_topics
from wirecheck.targets.transport.outcome import Reply

C = CATALOGUE
CLIENT_ID = "wirecheck"
TOPICS_ENV = "WIRECHECK_FLUVIO_TOPICS"
#: a name no Fluvio topic can have (upper case, underscore): never auto-created, never provisioned
INVALID_TOPIC = "WIRECHECK_NO_SUCH_TOPIC"
NO_SUCH_PARTITION = 100_000
_correlation = itertools.count(1)


class Fluvio(AdvertisedVersions, StrictClient):
    """One connection to the target, speaking strict Fluvio SPU.

    It follows the log end of each partition it has read one for (``log_end``): every Produce it then makes is
    checked against it under ``fluvio.produce.offsets``, so a case that only uses a Produce to get records in
    is BLOCKED by a wrong base offset instead of misreading everything that follows from it."""

    framing_clause = "fluvio.framing.response-frame"

    def __init__(self, target, session=None):
        super().__init__(target, session)
        self.log_ends: dict[tuple[str, int], int] = {}

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
            clause = decode_clause or undecodable_response_clause(api_key, exc)
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

    API_VERSIONS_VERSION = 2

    def api_versions(self, version: int = API_VERSIONS_VERSION) -> dict:
        body = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}
        answer = self.call(messages.API_VERSIONS, version, body, "fluvio.versions.advertised")
        if answer["error_code"].code != 0:
            raise Divergence(C["fluvio.versions.advertised"], "error_code 0", str(answer["error_code"]))
        return answer

    def fetch_advertised(self) -> dict[int, tuple[int, int]]:
        return self._ranges(self.api_versions())

    def advertised_in(self, frame: bytes) -> dict[int, tuple[int, int]]:
        answer = messages.decode_response(messages.API_VERSIONS, self.API_VERSIONS_VERSION, frame)
        return self._ranges(answer["body"])

    @staticmethod
    def _ranges(answer: dict) -> dict[int, tuple[int, int]]:
        return {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}

    @staticmethod
    def api_name(api_key: int) -> str:
        return messages.api_name(api_key)

    def version(self, api_key: int, wanted: int = messages.COMMON_VERSION) -> int:
        """``wanted`` if advertised, else the closest advertised version we can encode (<= 25)."""
        low, high = self.require(api_key)
        chosen = min(max(wanted, low), high, messages.COMMON_VERSION)
        if chosen < low:
            raise Unimplemented(f"{messages.api_name(api_key)} advertised as {low}..{high}: no version we encode")
        return self.both_speak(api_key, chosen, low)

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
        for (name, parts), entry in zip(topics, answer["responses"]):
            for (partition, data), written in zip(parts, entry["partitions"]):
                if written["error_code"].code == 0:
                    self.expect_base(name, partition, written["base_offset"], data)
        return answer

    def expect_base(self, topic: str, partition: int, base: int, record_set: bytes) -> None:
        """A successful write of ``record_set`` answered with ``base``: it must be the log end we know (when we
        know it), which then advances by the offsets the batches take (§4.4)."""
        key = (topic, partition)
        try:
            taken = sum(records.offsets_taken(b) for b in records.split_batches(record_set))
        except struct.error:  # a record set a case made unreadable on purpose: the log end is no longer known
            self.log_ends.pop(key, None)
            return
        if key not in self.log_ends or not taken:  # an empty write answers base 0 (fluvio.produce.empty)
            return
        if base != self.log_ends[key]:
            raise Divergence(C["fluvio.produce.offsets"],
                             f"base_offset {self.log_ends[key]} (the log end before the write)", str(base))
        self.log_ends[key] = base + taken

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
        self.log_ends[(topic, partition)] = entry["last_stable_offset"]
        return entry["last_stable_offset"]

    # -- StreamFetch / UpdateOffsets ------------------------------------------------------------------------

    def stream_fetch(self, topic: str, partition: int, offset: int, max_bytes: int = messages.DEFAULT_MAX_BYTES,
                     isolation: int = 0, consumer_id: str | None = None) -> tuple[int, int]:
        """Send a StreamFetch; returns (correlation id, version). Answers come with ``stream_answer``."""
        version = self.version(messages.STREAM_FETCH)
        if consumer_id is not None and version < 23:
            raise Unimplemented(f"StreamFetch advertised up to v{version}: a consumer_id needs v23")
        body = {"topic": topic, "partition": partition, "fetch_offset": offset, "max_bytes": max_bytes,
                "isolation": isolation, "wasm_module": b"", "smartmodule": None, "derivedstream": None,
                "smartmodules": [], "consumer_id": consumer_id}
        return self.send(messages.STREAM_FETCH, version, body), version

    def stream_answer(self, correlation_id: int, version: int, clause_id: str, deadline: float | None = None) -> dict:
        return self.receive(messages.STREAM_FETCH, version, correlation_id, clause_id, deadline)

    def update_offsets(self, updates: list[tuple[int, int]], clause_id: str = "fluvio.update-offsets.status") -> list:
        """[(offset, session_id)] -> the status entries."""
        version = self.version(messages.UPDATE_OFFSETS, 0)
        body = {"offsets": [{"offset": o, "session_id": s} for o, s in updates]}
        return self.call(messages.UPDATE_OFFSETS, version, body, clause_id)["status"]


    # -- consumer offsets (1006-1008: the SPU decodes them without listing them, notes §3.1, §5.6) ---------------

    def call_unlisted(self, api_key: int, body: dict, clause_id: str, version: int = messages.COMMON_VERSION) -> dict:
        """A request the SPU does not advertise: a target that closes on it does not implement it."""
        correlation_id = self.send(api_key, version, body)
        reply = self.session.recv()
        if reply.ended:
            raise Unimplemented(f"the target closed the connection on {messages.api_name(api_key)} v{version}")
        return self.decode(reply, api_key, version, correlation_id, clause_id)

    def update_consumer_offset(self, offset: int, session_id: int, clause_id: str,
                               version: int = messages.COMMON_VERSION) -> dict:
        return self.call_unlisted(messages.UPDATE_CONSUMER_OFFSET, {"offset": offset, "session_id": session_id},
                                  clause_id, version)

    def delete_consumer_offset(self, topic: str, partition: int, consumer_id: str, clause_id: str,
                               version: int = messages.COMMON_VERSION) -> dict:
        body = {"replica_id": {"topic": topic, "partition": partition}, "consumer_id": consumer_id}
        return self.call_unlisted(messages.DELETE_CONSUMER_OFFSET, body, clause_id, version)

    def consumer_offsets(self, clause_id: str, consumer_id: str | None = None,
                         replica: tuple[str, int] | None = None, filtered: bool = False,
                         version: int = messages.COMMON_VERSION) -> list[dict]:
        """FetchConsumerOffsets (v25; ``filtered`` sends filter_opts): the consumers listed, after error 0."""
        filter_opts = None
        if filtered:
            filter_opts = {"replica_id": None if replica is None else {"topic": replica[0], "partition": replica[1]},
                           "consumer_id": consumer_id}
        answer = self.call_unlisted(messages.FETCH_CONSUMER_OFFSETS, {"filter_opts": filter_opts}, clause_id,
                                    version)
        if answer["error_code"].code != 0:
            raise Divergence(C[clause_id], "FetchConsumerOffsets error_code 0", str(answer["error_code"]))
        return answer["consumers"]


# -- record sets -------------------------------------------------------------------------------------------------


def record_set(*batches: bytes) -> bytes:
    return b"".join(batches)


def batch_of(values: list[bytes], **options) -> bytes:
    return records.build_batch(values, **options)


# -- topics (decision T1) ----------------------------------------------------------------------------------------


def provisioned_topics(target) -> dict[str, int]:
    """``--target-option fluvio.topics=name:partitions,...`` (or ``WIRECHECK_FLUVIO_TOPICS``) -> {name: partitions}."""
    return target.named_topics() or parse_topics(os.environ.get(TOPICS_ENV, ""))


def new_topic(target, client: Fluvio | None = None, stem: str = "t", partitions: int = 1, own: bool = False,
              fewer_than: int | None = None) -> tuple[Fluvio, str]:
    """A topic for this case with at least ``partitions`` partitions (and fewer than ``fewer_than``, when a case
    needs a partition the topic does not have).

    ``own``: the case may leave the topic unusable (a conforming SPU short-circuits a partition for good after
    some writes, A14), so it never takes a topic named in ``fluvio.topics``: it needs one it can create.
    Topics come from, in order: ``fluvio.topics`` (shared, checked usable first: an unusable one makes the case
    BLOCKED), the SC when its endpoint is known (``fluvio.sc=host:port``), or a first Produce (decision T1)."""
    client = client or Fluvio(target)
    given = provisioned_topics(target)
    if given and not own:
        return client, _shared_topic(target, client, given, partitions, fewer_than)
    if fewer_than is not None and fewer_than <= 1:
        raise Unimplemented(f"a case needs a topic with fewer than {fewer_than} partitions")
    if target.knows_endpoint("sc"):
        return client, _topic_through_sc(target, client, stem, partitions)
    if partitions > 1:
        raise Unimplemented(f"a case needs {partitions} partitions: name such a topic in fluvio.topics or give "
                            "the SC (fluvio.sc=HOST:PORT)")
    topic = target.unique(stem.lower())
    with target.precondition(f"topic {topic} created by an empty Produce"):
        error, _ = client.produce(topic, 0, b"", clause_id="fluvio.topics.provisioning")
        if error.code == errors.NOT_LEADER_FOR_PARTITION:
            if given:  # an ``own`` case: the named topics are shared, and this one may be left unusable (A14)
                raise Unimplemented("this case may leave its partition unusable (A14), so it needs a topic of its "
                                    "own: give the SC (--target-option fluvio.sc=HOST:PORT) to create one")
            raise Unimplemented(f"the target did not create {topic} on Produce and {TOPICS_ENV} is not set "
                                "(the SPU has no topic API; decision T1)")
        if error.code != 0:
            raise Divergence(C["fluvio.produce.empty"], "error 0 for an empty RecordSet", str(error))
    return client, topic


def _shared_topic(target, client: Fluvio, given: dict[str, int], partitions: int, fewer_than: int | None) -> str:
    """The named topic with the fewest partitions that fits, after checking that its partition 0 takes a write
    (another case, or another run, may have left it short-circuited)."""
    fitting = sorted((count, name) for name, count in given.items()
                     if count >= partitions and (fewer_than is None or count < fewer_than))
    if not fitting:
        bound = f" and fewer than {fewer_than}" if fewer_than is not None else ""
        raise Unimplemented(f"fluvio.topics names no topic with at least {partitions}{bound} partitions")
    topic = fitting[0][1]
    usable = f"the shared topic {topic} takes a write on partition 0"
    with target.precondition(usable):
        error, _ = client.produce(topic, 0, batch_of([b"wirecheck: partition usable?"]),
                                  clause_id="fluvio.topics.provisioning")
    if error.code != 0:  # a state of the shared topic (short-circuited, A14), not a divergence to report
        raise Blocked(usable, Divergence(C["fluvio.topics.provisioning"], f"a write to {topic}/0 succeeds",
                                         str(error)), carries=False)
    return topic


#: how long a topic created through the SC may take to reach its SPU (a real cluster assigns replicas later)
SC_TOPIC_READY_SECONDS = 10.0


def _topic_through_sc(target, client: Fluvio, stem: str, partitions: int) -> str:
    from wirecheck.suites.fluvio.sc_client import ScClient  # the SC client builds on this module

    topic = target.unique(stem.lower())
    with target.precondition(f"topic {topic} created through the SC"):
        admin = ScClient(target)
        try:
            status = admin.create_topic(topic, "fluvio.topics.provisioning", partitions=partitions)
        finally:
            admin.close()
        if status["error_code"].code != 0:
            raise Divergence(C["fluvio.topics.provisioning"], f"the SC creates {topic}", str(status["error_code"]))
        waited_until = time.monotonic() + SC_TOPIC_READY_SECONDS
        while True:
            entries = client.fetch_offsets(topic, list(range(partitions)), clause_id="fluvio.topics.provisioning")
            if all(entry["error_code"].code == 0 for entry in entries):
                return topic
            if time.monotonic() > waited_until:
                raise Divergence(C["fluvio.topics.provisioning"], f"the SPU serves {topic} after the SC created it",
                                 str([str(entry["error_code"]) for entry in entries]))
            time.sleep(0.05)


def frame_with_size(size: int, rest: bytes = b"") -> bytes:
    return struct.pack(">i", size) + rest
