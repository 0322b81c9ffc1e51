"""ConsumerGroupDescribe (69): a KIP-848 group's epochs, state, assignor and members, each with its epoch and its
current and target assignment (ConsumerGroupDescribeResponse.json); and the wire shape of an assignment
(topic id -> partitions) that ConsumerGroupHeartbeat answers carry too.
"""

from __future__ import annotations
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.errors import GROUP_ID_NOT_FOUND

Partition = tuple[bytes, int]
MEMBER_TYPE_CONSUMER = 1  # MemberType (v1): 0 a classic-protocol member, 1 a consumer-protocol one


def describe(groups: dict, classic_groups: dict, storage, faults: KafkaFaults, req: dict) -> dict:
    described = []
    for group_id in req["GroupIds"]:
        group = groups.get(group_id)
        if group is None:
            message = (f"Group {group_id} is not a consumer group." if group_id in classic_groups
                       else f"Group {group_id} not found.")
            # Apache Kafka sets only the id, the error and its message; the rest keeps the message's defaults
            # (GroupState "", epochs 0): GroupMetadataManager.consumerGroupDescribe, GroupIdNotFoundException
            # (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java)
            described.append({"ErrorCode": GROUP_ID_NOT_FOUND, "ErrorMessage": message, "GroupId": group_id,
                              "GroupState": "", "GroupEpoch": 0, "AssignmentEpoch": 0,
                              "AssignorName": "", "Members": []})
            continue
        # a member without a regex has "" (Apache Kafka's ConsumerGroupMember.Builder starts subscribedTopicRegex at
        # "" and asConsumerGroupDescribeMember copies it; Kafka 4.4 answers so)
        described.append({
            "ErrorCode": 0, "ErrorMessage": None, "GroupId": group_id, "GroupState": group.state(),
            "GroupEpoch": group.epoch, "AssignmentEpoch": group.assignment_epoch, "AssignorName": group.assignor,
            "Members": [{
                "MemberId": m.member_id, "InstanceId": m.instance_id, "RackId": m.rack_id,
                "MemberEpoch": m.epoch, "ClientId": m.client_id, "ClientHost": m.client_host,
                "SubscribedTopicNames": m.subscribed, "SubscribedTopicRegex": m.regex or "",
                "Assignment": {"TopicPartitions": _named(storage, m.assigned)},
                "TargetAssignment": {"TopicPartitions": [] if faults.consumer_group_describe_no_target
                                     else _named(storage, group.target.get(m.member_id, set()))},
                "MemberType": MEMBER_TYPE_CONSUMER,
            } for m in group.members.values()]})
    return {"ThrottleTimeMs": 0, "Groups": described}


def _named(storage, partitions: set[Partition]) -> list[dict]:
    out = []
    for entry in by_topic(partitions):
        topic = storage.by_id.get(entry["TopicId"])
        out.append({**entry, "TopicName": topic.name if topic else ""})
    return out


def by_topic(partitions: set[Partition]) -> list[dict]:
    topics: dict[bytes, list[int]] = {}
    for topic_id, index in sorted(partitions):
        topics.setdefault(topic_id, []).append(index)
    return [{"TopicId": t, "Partitions": ps} for t, ps in topics.items()]
