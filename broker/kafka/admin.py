"""Admin APIs: CreatePartitions (KIP-195), DeleteRecords (KIP-107), DeleteGroups (KIP-229), OffsetDelete (KIP-496),
DescribeCluster (KIP-700), OffsetForLeaderEpoch (KIP-101/279) and DescribeProducers (KIP-664).

Error choices follow the Kafka broker code the spec notes cite (ReplicationControlManager.createPartitions,
UnifiedLog.deleteRecordsOnLeader, GroupCoordinator.handleDeleteGroups/handleDeleteOffsets, KafkaApis); each one
beyond them is commented where it is made. This broker is one node with leader epoch 0 for every partition.
"""

from __future__ import annotations

import struct

from wirecheck.broker.kafka import groups
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.settings import CLUSTER_OPERATIONS
from wirecheck.broker.kafka.errors import (FENCED_LEADER_EPOCH, GROUP_ID_NOT_FOUND, GROUP_SUBSCRIBED_TO_TOPIC,
                                           INVALID_GROUP_ID, INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT, NONE,
                                           NON_EMPTY_GROUP, OFFSET_OUT_OF_RANGE, TOPIC_AUTHORIZATION_FAILED,
                                           UNKNOWN_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION)

UNSUPPORTED_ENDPOINT_TYPE = 120
BROKERS_ENDPOINT = 1  # DescribeClusterRequest EndpointType
LEADER_EPOCH = 0


def subscribed_topics(protocol_type: str | None, metadata: bytes) -> set[str]:
    """Topics of a consumer-protocol subscription (ConsumerProtocolSubscription: version, topics...); other
    protocol types subscribe to nothing this broker can see."""
    if protocol_type != "consumer" or len(metadata) < 6:
        return set()
    pos = 2
    (count,) = struct.unpack_from(">i", metadata, pos)
    pos += 4
    topics = set()
    for _ in range(min(max(count, 0), len(metadata))):
        if pos + 2 > len(metadata):
            break
        (n,) = struct.unpack_from(">h", metadata, pos)
        pos += 2
        if n < 0:
            break
        topics.add(metadata[pos:pos + n].decode("utf-8", "replace"))
        pos += n
    return topics


class Admin:
    def __init__(self, storage, coordinator: groups.Coordinator, producers, faults: KafkaFaults,
                 max_partitions: int, cluster_id: str, node_id: int, topic_admin: bool = True):
        self.storage = storage
        self.topic_admin = topic_admin
        self.coordinator = coordinator
        self.producers = producers
        self.faults = faults
        self.max_partitions = max_partitions
        self.cluster_id = cluster_id
        self.node_id = node_id

    # ------------------------------------------------------------------------------------------ partitions

    def create_partitions(self, req: dict, version: int) -> dict:
        results = []
        for t in req["Topics"]:
            error, message = self._check_partitions(t)
            if not error and not req["ValidateOnly"]:
                topic = self.storage.topics[t["Name"]]
                count = len(topic.partitions) + 1 if self.faults.create_partitions_count_ignored else t["Count"]
                self.storage.add_partitions(topic, count)
            results.append({"Name": t["Name"], "ErrorCode": error, "ErrorMessage": message})
        return {"ThrottleTimeMs": 0, "Results": results}

    def _check_partitions(self, t: dict) -> tuple[int, str | None]:
        if not self.topic_admin:
            return TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
        topic = self.storage.topics.get(t["Name"])
        if topic is None:
            return UNKNOWN_TOPIC_OR_PARTITION, f"Topic {t['Name']} does not exist"
        current, count = len(topic.partitions), t["Count"]
        if count < current:
            return INVALID_PARTITIONS, f"Topic currently has {current} partitions, which is higher than the " \
                                       f"requested {count}."
        if count == current and not self.faults.create_partitions_same_accepted:  # fault: a no-op passes
            return INVALID_PARTITIONS, f"Topic already has {current} partitions."
        if count > self.max_partitions or not self.storage.has_room(count - current):
            return INVALID_PARTITIONS, f"This broker keeps at most {self.max_partitions} partitions a topic."
        if t["Assignments"] is not None:
            if len(t["Assignments"]) != count - current:
                return INVALID_REPLICA_ASSIGNMENT, f"Increasing the number of partitions by {count - current} " \
                                                   f"but {len(t['Assignments'])} assignments provided."
            if any(a["BrokerIds"] != [self.node_id] for a in t["Assignments"]):
                return INVALID_REPLICA_ASSIGNMENT, f"This cluster has one broker, {self.node_id}."
        return NONE, None

    # ------------------------------------------------------------------------------------------ records

    def delete_records(self, req: dict, version: int) -> dict:
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                out = {"PartitionIndex": p["PartitionIndex"], "LowWatermark": -1, "ErrorCode": NONE}
                parts.append(out)
                partition = self.storage.partition(t["Name"], p["PartitionIndex"])
                if partition is None:
                    out["ErrorCode"] = UNKNOWN_TOPIC_OR_PARTITION
                    continue
                offset = partition.high_watermark if p["Offset"] == -1 else p["Offset"]  # -1: the high watermark
                if offset > partition.high_watermark and self.faults.delete_records_clamps_to_hw:
                    offset = partition.high_watermark  # fault: an offset beyond the HW deletes everything
                if not 0 <= offset <= partition.high_watermark:
                    out["ErrorCode"] = OFFSET_OUT_OF_RANGE
                    continue
                if self.faults.delete_records_start_not_moved:
                    out["LowWatermark"] = offset  # fault: claims the move, keeps the records
                    continue
                partition.delete_before(offset)
                out["LowWatermark"] = partition.log_start
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}

    # ------------------------------------------------------------------------------------------ groups

    def delete_groups(self, req: dict, version: int) -> dict:
        results = []
        for group_id in req["GroupsNames"]:
            results.append({"GroupId": group_id, "ErrorCode": self._delete_group(group_id)})
        return {"ThrottleTimeMs": 0, "Results": results}

    def _delete_group(self, group_id: str) -> int:
        if not group_id:
            return INVALID_GROUP_ID
        group = self.coordinator.groups.get(group_id)
        if group is None:  # fault delete-groups-unknown-ok: nothing to delete taken as success
            return NONE if self.faults.delete_groups_unknown_ok else GROUP_ID_NOT_FOUND
        if group.members and not self.faults.delete_groups_non_empty_accepted:
            return NON_EMPTY_GROUP
        self.coordinator.delete(group_id)
        return NONE

    def offset_delete(self, req: dict, version: int) -> dict:
        group_id = req["GroupId"]
        group = self.coordinator.groups.get(group_id) if group_id else None
        if group is None:
            error = INVALID_GROUP_ID if not group_id else GROUP_ID_NOT_FOUND
            if group_id and self.faults.offset_delete_unknown_group_ok:
                error = NONE  # fault: nothing to delete taken as success
            return {"ErrorCode": error, "ThrottleTimeMs": 0, "Topics": []}
        subscribed: set[str] = set()
        if group.protocol_name:
            for member in group.members.values():
                subscribed |= subscribed_topics(group.protocol_type, member.metadata_for(group.protocol_name))
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                index = p["PartitionIndex"]
                if self.storage.partition(t["Name"], index) is None:
                    error = UNKNOWN_TOPIC_OR_PARTITION
                elif t["Name"] in subscribed:
                    error = GROUP_SUBSCRIBED_TO_TOPIC  # a live consumer would commit it again
                else:
                    error = NONE
                    if not self.faults.offset_delete_not_deleted:
                        group.offsets.pop((t["Name"], index), None)
                parts.append({"PartitionIndex": index, "ErrorCode": error})
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ErrorCode": NONE, "ThrottleTimeMs": 0, "Topics": topics}

    # ------------------------------------------------------------------------------------------ cluster

    def describe_cluster(self, req: dict, version: int, host: str, port: int) -> dict:
        if req.get("EndpointType", BROKERS_ENDPOINT) != BROKERS_ENDPOINT:
            # a broker serves only its broker endpoints; controllers are reached elsewhere (KIP-919)
            return {"ThrottleTimeMs": 0, "ErrorCode": UNSUPPORTED_ENDPOINT_TYPE,
                    "ErrorMessage": "This broker only describes broker endpoints", "EndpointType": req["EndpointType"],
                    "ClusterId": self.cluster_id, "ControllerId": -1, "Brokers": [],
                    "ClusterAuthorizedOperations": -2147483648}
        if self.faults.describe_cluster_port_wrong:
            port = port + 1
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None, "EndpointType": BROKERS_ENDPOINT,
                "ClusterId": self.cluster_id, "ControllerId": self.node_id,
                "Brokers": [{"BrokerId": self.node_id, "Host": host, "Port": port, "Rack": None, "IsFenced": False}],
                # settings.CLUSTER_OPERATIONS: Kafka's handleDescribeClusterRequest, when asked
                "ClusterAuthorizedOperations": CLUSTER_OPERATIONS if req.get("IncludeClusterAuthorizedOperations")
                else -2147483648}

    def offset_for_leader_epoch(self, req: dict, version: int) -> dict:
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                out = {"ErrorCode": NONE, "Partition": p["Partition"], "LeaderEpoch": -1, "EndOffset": -1}
                parts.append(out)
                partition = self.storage.partition(t["Topic"], p["Partition"])
                current = p.get("CurrentLeaderEpoch", -1)
                if partition is None:
                    out["ErrorCode"] = UNKNOWN_TOPIC_OR_PARTITION
                elif current > LEADER_EPOCH:
                    out["ErrorCode"] = UNKNOWN_LEADER_EPOCH
                elif 0 <= current < LEADER_EPOCH:
                    out["ErrorCode"] = FENCED_LEADER_EPOCH
                elif p["LeaderEpoch"] == LEADER_EPOCH:
                    end = partition.high_watermark
                    out.update(LeaderEpoch=LEADER_EPOCH, EndOffset=end + (1 if self.faults.leader_epoch_end_off
                                                                          else 0))
                # an epoch this leader never had: UNDEFINED_EPOCH (-1) and UNDEFINED_EPOCH_OFFSET (-1), error 0
            topics.append({"Topic": t["Topic"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}

    def describe_producers(self, req: dict, version: int) -> dict:
        topics = []
        for t in req["Topics"]:
            parts = []
            for index in t["PartitionIndexes"]:
                partition = self.storage.partition(t["Name"], index)
                if partition is None:
                    parts.append({"PartitionIndex": index, "ErrorCode": UNKNOWN_TOPIC_OR_PARTITION,
                                  "ErrorMessage": None, "ActiveProducers": []})
                    continue
                active = [{"ProducerId": pid, "ProducerEpoch": epoch, "LastSequence": last_seq,
                           "LastTimestamp": last_timestamp, "CoordinatorEpoch": -1,
                           "CurrentTxnStartOffset": partition.open_transactions.get(pid, -1)}
                          for pid, epoch, last_seq, last_timestamp in self.producers.active(t["Name"], index)
                          if not self.faults.describe_producers_empty]
                parts.append({"PartitionIndex": index, "ErrorCode": NONE, "ErrorMessage": None,
                              "ActiveProducers": active})
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}
