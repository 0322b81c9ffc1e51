"""Semantic cases at every version a client may send, not only the newest both sides speak.

A broker's old request versions are what old clients send: aiokafka 0.14 sends InitProducerId v0, kafkajs 2.2.4
v1, and admin clients list a group's offsets with OffsetFetch v2-v7 and null Topics. A defect at such a version
(an error path that crashes, a branch that answers nothing) is met only by those clients; here it fails under the
protocol clause it breaks, at the version that breaks it. Each version the suite's codec speaks is a case; one the
target does not advertise is UNIMPLEMENTED.
"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import errors
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, expect, short

case = pytest.mark.case
INIT_PRODUCER_ID, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 22, 8, 9, 10
FETCH_ALL_FROM = 2  # OffsetFetchRequest.json: Topics nullable ("null to fetch offsets for all topics") from v2
GROUPS_FROM = 8  # OffsetFetch v8+ batches groups (KIP-709)
BY_NAME_MAX = 9  # OffsetCommit/OffsetFetch v10 name topics by id (OffsetCommitRequest.json, OffsetFetchRequest.json)


def _versions(api_key: int, low: int = 0, high: int | None = None) -> list[int]:
    ours_low, ours_high = DataPath.our_versions(api_key)
    return list(range(max(low, ours_low), min(ours_high, ours_high if high is None else high) + 1))


@case("kafka.idempotence.init-producer-id")
@pytest.mark.parametrize("version", _versions(INIT_PRODUCER_ID), ids=lambda v: f"v{v}")
def test_init_producer_id_at_every_version(target, version):
    client = DataPath(target)
    version = client.common_version(INIT_PRODUCER_ID, cap=version, low=version)  # UNIMPLEMENTED if not advertised
    clause = "kafka.idempotence.init-producer-id"
    # asked again while the broker says "not yet" (client.COORDINATOR_NOT_READY): Kafka's producer id manager
    # answers COORDINATOR_LOAD_IN_PROGRESS until its first block of ids arrives from the controller
    # (ProducerIdManager.scala, RPCProducerIdManager.generateProducerId), and every producer retries it
    body = client.call_until_ready(INIT_PRODUCER_ID, version, {"TransactionalId": None, "TransactionTimeoutMs": 60000,
                                                                "ProducerId": -1, "ProducerEpoch": -1}, clause)
    expect(clause, body["ErrorCode"], errors.NONE)
    if body["ProducerId"] < 0 or body["ProducerEpoch"] < 0:
        raise Divergence(C[clause], f"v{version}: a non-negative producer id and epoch", short(body))


def _commit(target, client: DataPath, group: str, topic: str, offset: int) -> None:
    """A commit, as the group's client commits (a precondition of kafka.commit.round-trip)."""
    clause = "kafka.commit.round-trip"
    with target.precondition("the group coordinator found"):
        version = client.version(FIND_COORDINATOR)
        found = client.call_until_ready(FIND_COORDINATOR, version, {"Key": group, "KeyType": 0,
                                                                    "CoordinatorKeys": [group]},
                                        "kafka.group.find-coordinator")
        entry = found["Coordinators"][0] if version >= 4 else found
        expect("kafka.group.find-coordinator", entry["ErrorCode"], errors.NONE)
    with target.precondition("the offset committed"):
        body = client.call_until_ready(OFFSET_COMMIT, client.version(OFFSET_COMMIT, BY_NAME_MAX, low=2), {
            "GroupId": group, "GenerationIdOrMemberEpoch": -1, "MemberId": "", "GroupInstanceId": None,
            "RetentionTimeMs": -1, "Topics": [{"Name": topic, "Partitions": [
                {"PartitionIndex": 0, "CommittedOffset": offset, "CommittedMetadata": "wc"}]}]}, clause)
        expect(clause, body["Topics"][0]["Partitions"][0]["ErrorCode"], errors.NONE)


@case("kafka.commit.fetch-all")
@pytest.mark.parametrize("version", _versions(OFFSET_FETCH, FETCH_ALL_FROM, BY_NAME_MAX), ids=lambda v: f"v{v}")
def test_fetch_all_offsets_at_every_version(target, version):
    client = DataPath(target)
    version = client.common_version(OFFSET_FETCH, cap=version, low=version)
    topic, group = client.topic(shared=True), target.unique("g")
    _commit(target, client, group, topic, 42)
    clause = "kafka.commit.fetch-all"
    body = client.call_until_ready(OFFSET_FETCH, version, {
        "GroupId": group, "Topics": None, "RequireStable": False,
        "Groups": [{"GroupId": group, "MemberId": None, "MemberEpoch": -1, "Topics": None}]}, clause)
    answer = body["Groups"][0] if version >= GROUPS_FROM else body
    expect(clause, answer["ErrorCode"], errors.NONE)
    offsets = {(t["Name"], p["PartitionIndex"]): p["CommittedOffset"]
               for t in answer["Topics"] or [] for p in t["Partitions"]}
    if offsets.get((topic, 0)) != 42:
        raise Divergence(C[clause], f"v{version}: {topic}[0] at offset 42 among the group's offsets",
                         f"{offsets or 'no offsets'}")
