"""The KIP-848 message definitions kafka-python's JSON folder lacks, in Apache Kafka's JSON model.

The broker's codec reads Apache Kafka's ``*.json`` message definitions as shipped by kafka-python, which stops
before ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69). These are the same facts
(ConsumerGroupHeartbeatRequest.json / Response.json, ConsumerGroupDescribeRequest.json / Response.json, Kafka
4.1: v0-v1, flexible from v0), written as data so that :func:`message_definitions.load_message` reads them like
the others.
"""

from __future__ import annotations

import copy


def _f(name: str, type_: str, versions: str = "0+", nullable: str | None = None, default=None,
       fields: list | None = None) -> dict:
    out = {"name": name, "type": type_, "versions": versions}
    if nullable:
        out["nullableVersions"] = nullable
    if default is not None:
        out["default"] = default
    if fields is not None:
        out["fields"] = fields
    return out


def _topic_partitions(with_name: bool) -> list:
    named = [_f("TopicName", "string")] if with_name else []
    return [_f("TopicId", "uuid"), *named, _f("Partitions", "[]int32")]


def _described_assignment() -> list:
    return [_f("TopicPartitions", "[]TopicPartitions", fields=_topic_partitions(with_name=True))]


_DEFINITIONS = {
    "ConsumerGroupHeartbeatRequest": [
        _f("GroupId", "string"),
        _f("MemberId", "string"),  # v0: "" on the first heartbeat (the coordinator names it); v1: the client's UUID
        _f("MemberEpoch", "int32"),  # 0 joins, -1 leaves, -2 leaves temporarily (static members)
        _f("InstanceId", "string", nullable="0+", default="null"),
        _f("RackId", "string", nullable="0+", default="null"),
        _f("RebalanceTimeoutMs", "int32", default=-1),
        _f("SubscribedTopicNames", "[]string", nullable="0+", default="null"),  # null: unchanged
        _f("SubscribedTopicRegex", "string", "1+", nullable="1+", default="null"),
        _f("ServerAssignor", "string", nullable="0+", default="null"),
        _f("TopicPartitions", "[]TopicPartitions", nullable="0+", default="null",
           fields=_topic_partitions(with_name=False)),  # what the member owns; null: unchanged
    ],
    "ConsumerGroupHeartbeatResponse": [
        _f("ThrottleTimeMs", "int32"),
        _f("ErrorCode", "int16"),
        _f("ErrorMessage", "string", nullable="0+", default="null"),
        _f("MemberId", "string", nullable="0+", default="null"),
        _f("MemberEpoch", "int32"),
        _f("HeartbeatIntervalMs", "int32"),
        _f("Assignment", "Assignment", nullable="0+", default="null",  # null: unchanged since the last answer
           fields=[_f("TopicPartitions", "[]TopicPartitions", fields=_topic_partitions(with_name=False))]),
    ],
    "ConsumerGroupDescribeRequest": [
        _f("GroupIds", "[]string"),
        _f("IncludeAuthorizedOperations", "bool"),
    ],
    "ConsumerGroupDescribeResponse": [
        _f("ThrottleTimeMs", "int32"),
        _f("Groups", "[]DescribedGroup", fields=[
            _f("ErrorCode", "int16"),
            _f("ErrorMessage", "string", nullable="0+", default="null"),
            _f("GroupId", "string"),
            _f("GroupState", "string"),
            _f("GroupEpoch", "int32"),
            _f("AssignmentEpoch", "int32"),
            _f("AssignorName", "string"),
            _f("Members", "[]Member", fields=[
                _f("MemberId", "string"),
                _f("InstanceId", "string", nullable="0+", default="null"),
                _f("RackId", "string", nullable="0+", default="null"),
                _f("MemberEpoch", "int32"),
                _f("ClientId", "string"),
                _f("ClientHost", "string"),
                _f("SubscribedTopicNames", "[]string"),
                _f("SubscribedTopicRegex", "string", nullable="0+", default="null"),
                _f("Assignment", "Assignment", fields=_described_assignment()),
                _f("TargetAssignment", "Assignment", fields=_described_assignment()),
                _f("MemberType", "int8", "1+", default=-1),  # 0 classic, 1 consumer (KIP-1099)
            ]),
            _f("AuthorizedOperations", "int32", default=-2147483648),
        ]),
    ],
}


def definition(name: str) -> dict | None:
    """The message's definition (a fresh copy: the codec's loader edits what it is given), or None."""
    fields = _DEFINITIONS.get(name)
    if fields is None:
        return None
    return {"name": name, "validVersions": "0-1", "flexibleVersions": "0+", "fields": copy.deepcopy(fields)}
