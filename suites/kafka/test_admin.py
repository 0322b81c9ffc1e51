"""Admin APIs: CreatePartitions, DeleteRecords, DeleteGroups, OffsetDelete, DescribeCluster, OffsetForLeaderEpoch,
DescribeProducers. Each case works on topics and groups it creates, so it is harmless on a live cluster.
"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, expect, expect_produced, short, RECORD_TIME_MS
from wirecheck.suites.kafka.topics_groups import (committed, fetch_committed, find_coordinator, idempotent_batch,
                                                       init_producer, join_single_member)

case = pytest.mark.case
DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH, CREATE_PARTITIONS, DELETE_GROUPS = 21, 23, 37, 42
OFFSET_DELETE, DESCRIBE_CLUSTER, DESCRIBE_PRODUCERS = 47, 60, 61
EARLIEST = -2


def client_for(target, *api_keys: int) -> DataPath:
    client = DataPath(target)
    for key in api_keys:
        client.require(key)
    return client


def batch(*values: bytes) -> bytes:
    return records.build_batch(list(values), keys=[b"k"] * len(values), base_timestamp=RECORD_TIME_MS)


def topic_with_records(client: DataPath, target, count: int) -> str:
    """A new topic whose partition 0 holds ``count`` records, one batch each (offsets 0..count-1)."""
    name = client.topic("adm")
    with target.precondition(f"{count} records written to {name}-0"):
        for i in range(count):
            client.append(name, batch(b"r%d" % i))
    return name


# -- CreatePartitions ----------------------------------------------------------------------------------------------


def create_partitions(client: DataPath, topic: str, count: int, clause_id: str, validate_only: bool = False) -> dict:
    body = client.call(CREATE_PARTITIONS, client.version(CREATE_PARTITIONS), {
        "Topics": [{"Name": topic, "Count": count, "Assignments": None}], "TimeoutMs": 10000,
        "ValidateOnly": validate_only}, clause_id)
    return body["Results"][0]


def partitions_of(client: DataPath, topic: str, clause_id: str) -> list[int]:
    body = client.call(3, client.version(3, low=4), {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False},
                       clause_id)
    return sorted(p["PartitionIndex"] for t in body["Topics"] if t["Name"] == topic for p in t["Partitions"])


@case("kafka.admin.create-partitions")
def test_create_partitions_grows_the_topic(target):
    client = client_for(target, CREATE_PARTITIONS)
    clause = "kafka.admin.create-partitions"
    topic = target.unique("grow")
    client.create_topic(topic)
    expect(clause, create_partitions(client, topic, 3, clause)["ErrorCode"], errors.NONE)
    got = partitions_of(client, topic, clause)
    if got != [0, 1, 2]:
        raise Divergence(C[clause], "partitions [0, 1, 2] after CreatePartitions to 3", short(got))


@case("kafka.admin.create-partitions-invalid")
@pytest.mark.parametrize("change", ["shrink", "same", "unknown-topic"])
def test_create_partitions_refuses_no_growth(target, change):
    client = client_for(target, CREATE_PARTITIONS)
    clause = "kafka.admin.create-partitions-invalid"
    topic = target.unique("grow")
    if change == "unknown-topic":
        expect(clause, create_partitions(client, topic, 2, clause)["ErrorCode"], errors.UNKNOWN_TOPIC_OR_PARTITION)
        return
    body = client.call(19, client.version(19, low=1), {
        "Topics": [{"Name": topic, "NumPartitions": 2, "ReplicationFactor": 1}], "timeoutMs": 10000},
        "kafka.topics.create")
    expect("kafka.topics.create", body["Topics"][0]["ErrorCode"], errors.NONE)
    client.wait_until_usable(topic, 2)
    made = partitions_of(client, topic, "kafka.topics.create")  # the "unchanged" check below rests on it
    if made != [0, 1]:
        raise Divergence(C["kafka.topics.create"], "partitions [0, 1] created", short(made))
    expect(clause, create_partitions(client, topic, 1 if change == "shrink" else 2, clause)["ErrorCode"],
           errors.INVALID_PARTITIONS)
    got = partitions_of(client, topic, clause)
    if got != [0, 1]:
        raise Divergence(C[clause], "partitions [0, 1] unchanged", short(got))


# -- DeleteRecords -------------------------------------------------------------------------------------------------


def delete_records(client: DataPath, topic: str, offset: int, clause_id: str) -> dict:
    body = client.call(DELETE_RECORDS, client.version(DELETE_RECORDS), {
        "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0, "Offset": offset}]}], "TimeoutMs": 10000},
        clause_id)
    return body["Topics"][0]["Partitions"][0]


def log_start_moved(client: DataPath, topic: str, offset: int) -> None:
    """DeleteRecords to ``offset``, then the log start is there (LowWatermark, ListOffsets earliest): a log start
    that did not move breaks kafka.admin.delete-records, which BLOCKS the cases that only need it moved."""
    clause = "kafka.admin.delete-records"
    result = delete_records(client, topic, offset, clause)
    expect(clause, result["ErrorCode"], errors.NONE)
    if result["LowWatermark"] != offset:
        raise Divergence(C[clause], f"LowWatermark {offset}", f"LowWatermark {result['LowWatermark']}")
    earliest = client.list_offset(topic, EARLIEST)["Offset"]
    if earliest != offset:
        raise Divergence(C[clause], f"ListOffsets earliest {offset} after DeleteRecords to {offset}",
                         f"offset {earliest}")


@case("kafka.admin.delete-records")
def test_delete_records_moves_the_log_start(target):
    client = client_for(target, DELETE_RECORDS)
    log_start_moved(client, topic_with_records(client, target, 3), 2)


@case("kafka.admin.delete-records-fetch")
def test_fetch_below_the_new_log_start_is_out_of_range(target):
    client = client_for(target, DELETE_RECORDS)
    clause = "kafka.admin.delete-records-fetch"
    topic = topic_with_records(client, target, 3)
    log_start_moved(client, topic, 2)
    expect(clause, client.fetch(topic, 0, clause_id=clause)["ErrorCode"], errors.OFFSET_OUT_OF_RANGE)
    answer = client.fetch(topic, 2, clause_id=clause)
    expect(clause, answer["ErrorCode"], errors.NONE)
    if not answer["Records"]:
        raise Divergence(C[clause], "the record at offset 2", "no records")


@case("kafka.admin.delete-records-beyond-hw")
def test_delete_records_beyond_the_high_watermark(target):
    client = client_for(target, DELETE_RECORDS)
    clause = "kafka.admin.delete-records-beyond-hw"
    topic = topic_with_records(client, target, 2)
    expect(clause, delete_records(client, topic, 10, clause)["ErrorCode"], errors.OFFSET_OUT_OF_RANGE)
    earliest = client.list_offset(topic, EARLIEST)["Offset"]
    if earliest != 0:
        raise Divergence(C[clause], "log start 0 unchanged", f"offset {earliest}")


# -- groups --------------------------------------------------------------------------------------------------------


def delete_groups(client: DataPath, groups: list[str], clause_id: str) -> dict[str, int]:
    body = client.call(DELETE_GROUPS, client.version(DELETE_GROUPS), {"GroupsNames": groups}, clause_id)
    return {r["GroupId"]: r["ErrorCode"] for r in body["Results"]}


@case("kafka.admin.delete-groups")
def test_delete_empty_and_unknown_groups(target):
    client = client_for(target, DELETE_GROUPS)
    clause = "kafka.admin.delete-groups"
    topic, group, absent = client.topic(shared=True), target.unique("g"), target.unique("absent")
    with target.precondition(f"an offset committed for group {group}"):
        find_coordinator(client, group)
        committed(client, group, topic, 7)
    got = delete_groups(client, [group, absent], clause)
    expect(clause, got.get(group, -99), errors.NONE)
    expect(clause, got.get(absent, -99), errors.GROUP_ID_NOT_FOUND)
    if fetch_committed(client, group, topic, clause) != -1:
        raise Divergence(C[clause], "no committed offset once the group is deleted", "offset still committed")


@case("kafka.admin.delete-groups-non-empty")
def test_delete_group_with_members_refused(target):
    client = client_for(target, DELETE_GROUPS)
    clause = "kafka.admin.delete-groups-non-empty"
    group = target.unique("g")
    with target.precondition(f"group {group} joined by one member"):
        find_coordinator(client, group)
        join_single_member(client, group)
    expect(clause, delete_groups(client, [group], clause).get(group, -99), errors.NON_EMPTY_GROUP)
    body = client.call(15, client.version(15), {"Groups": [group]}, clause)
    state = body["Groups"][0]["GroupState"]
    if state in ("Dead", "Empty"):
        raise Divergence(C[clause], "the group kept with its member", f"state {state}")


def offset_delete(client: DataPath, group: str, topic: str, clause_id: str) -> dict:
    return client.call(OFFSET_DELETE, client.version(OFFSET_DELETE), {
        "GroupId": group, "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": 0}]}]}, clause_id)


@case("kafka.admin.offset-delete")
def test_offset_delete_removes_the_commit(target):
    client = client_for(target, OFFSET_DELETE)
    clause = "kafka.admin.offset-delete"
    topic, group = client.topic(shared=True), target.unique("g")
    with target.precondition(f"an offset committed for group {group}"):
        find_coordinator(client, group)
        committed(client, group, topic, 5)
    body = offset_delete(client, group, topic, clause)
    expect(clause, body["ErrorCode"], errors.NONE)
    expect(clause, body["Topics"][0]["Partitions"][0]["ErrorCode"], errors.NONE)
    got = fetch_committed(client, group, topic, clause)
    if got != -1:
        raise Divergence(C[clause], "offset -1 after OffsetDelete", f"offset {got}")


@case("kafka.admin.offset-delete-unknown-group")
def test_offset_delete_unknown_group(target):
    client = client_for(target, OFFSET_DELETE)
    clause = "kafka.admin.offset-delete-unknown-group"
    topic = client.topic(shared=True)
    expect(clause, offset_delete(client, target.unique("absent"), topic, clause)["ErrorCode"],
           errors.GROUP_ID_NOT_FOUND)


# -- cluster, epochs, producers ------------------------------------------------------------------------------------


@case("kafka.admin.describe-cluster")
def test_describe_cluster_matches_metadata(target):
    client = client_for(target, DESCRIBE_CLUSTER)
    clause = "kafka.admin.describe-cluster"
    version = client.version(DESCRIBE_CLUSTER)
    body = client.call(DESCRIBE_CLUSTER, version, {"IncludeClusterAuthorizedOperations": False, "EndpointType": 1,
                                                   "IncludeFencedBrokers": False}, clause)
    expect(clause, body["ErrorCode"], errors.NONE)
    metadata = client.call(3, client.version(3, low=4), {"Topics": [], "AllowAutoTopicCreation": False},
                           "kafka.metadata.brokers")
    described = {(b["BrokerId"], b["Host"], b["Port"]) for b in body["Brokers"]}
    listed = {(b["NodeId"], b["Host"], b["Port"]) for b in metadata["Brokers"]}
    if not described or described != listed:
        raise Divergence(C[clause], f"the brokers Metadata lists: {sorted(listed)}", short(sorted(described)))
    if metadata.get("ClusterId") and body["ClusterId"] != metadata["ClusterId"]:
        raise Divergence(C[clause], f"cluster id {metadata['ClusterId']}", f"cluster id {body['ClusterId']}")


@case("kafka.admin.offset-for-leader-epoch")
def test_offset_for_current_leader_epoch_is_the_log_end(target):
    client = client_for(target, OFFSET_FOR_LEADER_EPOCH)
    clause = "kafka.admin.offset-for-leader-epoch"
    end = 2  # the records the case wrote to its new topic
    topic = topic_with_records(client, target, end)
    metadata = client.call(3, client.version(3, low=7), {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False},
                           clause)
    epoch = metadata["Topics"][0]["Partitions"][0]["LeaderEpoch"]
    body = client.call(OFFSET_FOR_LEADER_EPOCH, client.version(OFFSET_FOR_LEADER_EPOCH), {
        "ReplicaId": -1, "Topics": [
            {"Topic": topic, "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": epoch, "LeaderEpoch": epoch},
                                            {"Partition": 99, "CurrentLeaderEpoch": -1, "LeaderEpoch": epoch}]}]},
        clause)
    found = {p["Partition"]: p for p in body["Topics"][0]["Partitions"]}
    if 0 not in found or 99 not in found:
        raise Divergence(C[clause], "results for partitions 0 and 99", short(body))
    expect(clause, found[0]["ErrorCode"], errors.NONE)
    if found[0]["EndOffset"] != end or found[0]["LeaderEpoch"] != epoch:
        raise Divergence(C[clause], f"EndOffset {end} at epoch {epoch}", short(found[0]))
    expect(clause, found[99]["ErrorCode"], errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.admin.describe-producers")
def test_describe_producers_lists_the_idempotent_producer(target):
    client = client_for(target, DESCRIBE_PRODUCERS)
    clause = "kafka.admin.describe-producers"
    topic = client.topic(shared=True)
    with target.precondition("an idempotent producer id"):
        producer = init_producer(client)
    expect_produced(client.produce(topic, idempotent_batch([b"a", b"b"], producer, 0), clause_id=clause), clause)
    body = client.call(DESCRIBE_PRODUCERS, client.version(DESCRIBE_PRODUCERS), {
        "Topics": [{"Name": topic, "PartitionIndexes": [0]}]}, clause)
    partition = body["Topics"][0]["Partitions"][0]
    expect(clause, partition["ErrorCode"], errors.NONE)
    mine = [p for p in partition["ActiveProducers"] if p["ProducerId"] == producer[0]]
    if not mine or mine[0]["LastSequence"] != 1 or mine[0]["ProducerEpoch"] != producer[1]:
        raise Divergence(C[clause], f"producer {producer[0]} epoch {producer[1]} with last sequence 1",
                         short(partition["ActiveProducers"]))
