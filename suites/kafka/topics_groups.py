"""Steps the topic, metadata, classic group, commit and idempotence cases share (and the other Kafka suites reuse):
creating topics, finding the coordinator, joining, syncing and heartbeating as a single member, committing and
fetching offsets, a producer id and an idempotent batch."""

from __future__ import annotations

import struct
from typing import NamedTuple
from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import (
    C,
    DataPath,
    expect,
    short, RECORD_TIME_MS)


COMMIT_MAX = 9  # OffsetCommit/OffsetFetch v10 name topics by id


# What the common clients put in a classic group of ProtocolType "consumer" (the Java consumer's ConsumerProtocol,
# clients/src/main/resources/common/message/ConsumerProtocolSubscription.json and ConsumerProtocolAssignment.json,
# v0): the leader assigns real partitions, so the cases send nothing a broker reading them (Kafka's group
# coordinator does, for online migration) has to guess at.
def text(value: str) -> bytes:
    return struct.pack(">h", len(value)) + value.encode()


def subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0: version, topics, null user data."""
    return struct.pack(">hi", 0, 1) + text(topic) + struct.pack(">i", -1)


def assignment(topic: str, partitions: int) -> bytes:
    """ConsumerProtocolAssignment v0: version, one topic with its partitions 0..n-1, null user data."""
    return (struct.pack(">hi", 0, 1) + text(topic) + struct.pack(f">i{partitions}i", partitions, *range(partitions))
            + struct.pack(">i", -1))


#: the subscription of the joins whose group is never synced (no partition is assigned from it)
PROTOCOL_METADATA = subscription("wirecheck")


def code_of(item: dict) -> int:
    return item["ErrorCode"]


def create(client: DataPath, name: str, partitions: int, clause_id: str, replication: int = 1) -> int:
    version = client.version(19, low=1)
    body = client.call(19, version, {"Topics": [{"Name": name, "NumPartitions": partitions,
                                                 "ReplicationFactor": replication}], "timeoutMs": 10000}, clause_id)
    return body["Topics"][0]["ErrorCode"]


def find_coordinator(client: DataPath, group: str) -> dict:
    """The group's coordinator, asked again while it is not ready (Kafka creates __consumer_offsets on first use:
    client.COORDINATOR_NOT_READY); still not ready after that, or any other error, breaks the clause."""
    version = client.version(10)
    body = client.call_until_ready(10, version, {"Key": group, "KeyType": 0, "CoordinatorKeys": [group]},
                                   "kafka.group.find-coordinator")
    entry = body["Coordinators"][0] if version >= 4 else body
    expect("kafka.group.find-coordinator", entry["ErrorCode"], errors.NONE)
    return entry


def join_request(group: str, member_id: str, metadata: bytes = PROTOCOL_METADATA) -> dict:
    return {"GroupId": group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000, "MemberId": member_id,
            "GroupInstanceId": None, "ProtocolType": "consumer",
            "Protocols": [{"Name": "range", "Metadata": metadata}]}


def join(client: DataPath, group: str, member_id: str, version: int, clause_id: str,
         metadata: bytes = PROTOCOL_METADATA) -> dict:
    """JoinGroup, asked again while its coordinator is loading (client.COORDINATOR_NOT_READY), as clients do."""
    return client.call_until_ready(11, version, join_request(group, member_id, metadata), clause_id)


def partition_count(client: DataPath, topic: str) -> int:
    body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False},
                       "kafka.metadata.brokers")
    return len(body["Topics"][0]["Partitions"])


def join_single_member(client: DataPath, group: str, metadata: bytes = PROTOCOL_METADATA) -> tuple[int, dict]:
    """Join a fresh group as its only member (going through MEMBER_ID_REQUIRED on v4+)."""
    version = client.version(11, 9)
    client.session.deadline = max(client.session.deadline, 12.0)  # a broker may delay the first rebalance
    answer = join(client, group, "", version, "kafka.group.member-id-required", metadata)
    if version >= 4 and answer["ErrorCode"] == errors.MEMBER_ID_REQUIRED:
        answer = join(client, group, answer["MemberId"], version, "kafka.group.member-id-required", metadata)
    expect("kafka.group.member-id-required", answer["ErrorCode"], errors.NONE)
    return version, answer


def sync_single_member(client: DataPath, group: str, member: str, generation: int, assignment: bytes,
                       clause_id: str) -> dict:
    return client.call(14, client.version(14, 5), {
        "GroupId": group, "GenerationId": generation, "MemberId": member, "ProtocolType": "consumer",
        "ProtocolName": "range", "Assignments": [{"MemberId": member, "Assignment": assignment}]}, clause_id)


class Joined(NamedTuple):
    group: str
    version: int  # JoinGroup's
    member: str
    generation: int
    metadata: bytes  # its subscription
    assignment: bytes  # what the leader (itself) assigned it


def joined_group(target, client: DataPath) -> Joined:
    """A fresh group with this connection as its only, synced member, subscribed to a topic whose partitions it
    assigned itself as the leader. A precondition: a failure makes the case BLOCKED."""
    group = target.unique("g")
    with target.precondition(f"group {group} joined and synced by its only member"):
        topic = client.topic(shared=True)
        metadata, assigned = subscription(topic), assignment(topic, partition_count(client, topic))
        find_coordinator(client, group)
        version, joined = join_single_member(client, group, metadata)
        member, generation = joined["MemberId"], joined["GenerationId"]
        synced = sync_single_member(client, group, member, generation, assigned, "kafka.group.leader-metadata")
        expect("kafka.group.leader-metadata", synced["ErrorCode"], errors.NONE)
    return Joined(group, version, member, generation, metadata, assigned)


def heartbeat(client: DataPath, group: str, generation: int, member: str, clause_id: str) -> int:
    return client.call(12, client.version(12, 4), {"GroupId": group, "GenerationId": generation, "MemberId": member,
                                                   "GroupInstanceId": None}, clause_id)["ErrorCode"]


def commit(client: DataPath, group: str, topic: str, offset: int, clause_id: str) -> int:
    version = client.version(8, COMMIT_MAX, low=2)
    # a coordinator still loading is asked again (client.COORDINATOR_NOT_READY)
    body = client.call_until_ready(8, version, {
        "GroupId": group, "GenerationIdOrMemberEpoch": -1, "MemberId": "", "GroupInstanceId": None,
        "RetentionTimeMs": -1, "Topics": [{"Name": topic, "Partitions": [
            {"PartitionIndex": 0, "CommittedOffset": offset, "CommittedMetadata": "wc"}]}]}, clause_id)
    return body["Topics"][0]["Partitions"][0]["ErrorCode"]


def fetch_committed(client: DataPath, group: str, topic: str, clause_id: str) -> int:
    version = client.version(9, COMMIT_MAX, low=1)
    # a coordinator still loading is asked again (client.COORDINATOR_NOT_READY)
    body = client.call_until_ready(9, version, {
        "GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}],
        "Groups": [{"GroupId": group, "Topics": [{"Name": topic, "PartitionIndexes": [0]}]}]}, clause_id)
    topics = body["Groups"][0]["Topics"] if version >= 8 else body["Topics"]
    partition = topics[0]["Partitions"][0]
    expect(clause_id, partition["ErrorCode"], errors.NONE)
    return partition["CommittedOffset"]


def committed(client: DataPath, group: str, topic: str, offset: int) -> None:
    """Commit ``offset`` for partition 0 of ``topic`` and read it back: a commit not stored breaks
    kafka.commit.round-trip, which BLOCKS the cases that only need the commit. The fresh group's offset is read
    first under kafka.commit.no-offset: cases that later take -1 as "deleted" rest on that reading."""
    before = fetch_committed(client, group, topic, "kafka.commit.no-offset")
    if before != -1:
        raise Divergence(C["kafka.commit.no-offset"], "offset -1 before any commit", f"{before}")
    clause = "kafka.commit.round-trip"
    expect(clause, commit(client, group, topic, offset, clause), errors.NONE)
    got = fetch_committed(client, group, topic, clause)
    if got != offset:
        raise Divergence(C[clause], f"committed offset {offset}", f"{got}")


def init_producer(client: DataPath) -> tuple[int, int]:
    """An idempotent producer id. Kafka answers COORDINATOR_LOAD_IN_PROGRESS (14) until its first block of producer
    ids arrives from the controller (RPCProducerIdManager.generateProducerId); the producer asks again
    (TransactionManager.java InitProducerIdHandler), and so does this (client.COORDINATOR_NOT_READY)."""
    body = client.call_until_ready(22, client.version(22), {"TransactionalId": None, "TransactionTimeoutMs": 60000,
                                                            "ProducerId": -1, "ProducerEpoch": -1},
                                   "kafka.idempotence.init-producer-id")
    expect("kafka.idempotence.init-producer-id", body["ErrorCode"], errors.NONE)
    if body["ProducerId"] < 0 or body["ProducerEpoch"] < 0:
        raise Divergence(C["kafka.idempotence.init-producer-id"], "a non-negative producer id and epoch",
                         short(body))
    return body["ProducerId"], body["ProducerEpoch"]


def idempotent_batch(values, producer: tuple[int, int], sequence: int) -> bytes:
    return records.build_batch(values, base_timestamp=RECORD_TIME_MS, producer_id=producer[0],
                               producer_epoch=producer[1], base_sequence=sequence)


def group_state(client: DataPath, group: str, clause_id: str) -> str:
    """The classic group's state as DescribeGroups lists it."""
    body = client.call(15, client.version(15, 5), {"Groups": [group], "IncludeAuthorizedOperations": False},
                       clause_id)
    described = body["Groups"][0]
    expect(clause_id, described["ErrorCode"], errors.NONE)
    return described["GroupState"]

