"""The KIP-932 share-group message definitions kafka-python's JSON folder lacks, in Apache Kafka's JSON model.

ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78) and ShareAcknowledge (79), as Kafka 4.1 defines
them (ShareGroupHeartbeat/Describe v1, ShareFetch/ShareAcknowledge v1-v2, flexible throughout; v0 was the
early-access format, removed): the facts of Share*Request.json / Share*Response.json, written as data so that
:func:`message_definitions.load_message` reads them like the others. tests/broker/test_kafka_share_groups.py
checks them against the definitions kio generates from the same JSON.
"""

from __future__ import annotations

from wirecheck.broker.kafka.api_keys import ApiKey

SHARE_KEYS = (ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE)


def _f(name: str, type_: str, versions: str, nullable: str | None = None, default=None, tag: int | None = None,
       tagged: str | None = None, fields: list | None = None) -> dict:
    out = {"name": name, "type": type_, "versions": versions}
    if nullable:
        out["nullableVersions"] = nullable
    if tag is not None:
        out["tag"], out["taggedVersions"] = tag, tagged
    if default is not None:
        out["default"] = default
    if fields is not None:
        out["fields"] = fields
    return out


def _message(key: int, kind: str, valid: str, flexible: str, fields: list) -> dict:
    return {"type": kind, "apiKey": key, "validVersions": valid, "flexibleVersions": flexible, "fields": fields}


_DEFINITIONS = {
    'ShareGroupHeartbeatRequest': _message(76, 'request', '1-1', '1+', [
        _f('GroupId', 'string', '1+'),
        _f('MemberId', 'string', '1+'),
        _f('MemberEpoch', 'int32', '1+'),
        _f('RackId', 'string', '1+', nullable='1+', default='null'),
        _f('SubscribedTopicNames', '[]string', '1+', nullable='1+', default='null')]),
    'ShareGroupHeartbeatResponse': _message(76, 'response', '1-1', '1+', [
        _f('ThrottleTimeMs', 'int32', '1+'),
        _f('ErrorCode', 'int16', '1+'),
        _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
        _f('MemberId', 'string', '1+', nullable='1+', default='null'),
        _f('MemberEpoch', 'int32', '1+'),
        _f('HeartbeatIntervalMs', 'int32', '1+'),
        _f('Assignment', 'Assignment', '1+', nullable='1+', default='null', fields=[
            _f('TopicPartitions', '[]TopicPartitions', '1+', fields=[
                _f('TopicId', 'uuid', '1+'),
                _f('Partitions', '[]int32', '1+')])])]),
    'ShareGroupDescribeRequest': _message(77, 'request', '1-1', '1+', [
        _f('GroupIds', '[]string', '1+'),
        _f('IncludeAuthorizedOperations', 'bool', '1+')]),
    'ShareGroupDescribeResponse': _message(77, 'response', '1-1', '1+', [
        _f('ThrottleTimeMs', 'int32', '1+'),
        _f('Groups', '[]DescribedGroup', '1+', fields=[
            _f('ErrorCode', 'int16', '1+'),
            _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
            _f('GroupId', 'string', '1+'),
            _f('GroupState', 'string', '1+'),
            _f('GroupEpoch', 'int32', '1+'),
            _f('AssignmentEpoch', 'int32', '1+'),
            _f('AssignorName', 'string', '1+'),
            _f('Members', '[]Member', '1+', fields=[
                _f('MemberId', 'string', '1+'),
                _f('RackId', 'string', '1+', nullable='1+', default='null'),
                _f('MemberEpoch', 'int32', '1+'),
                _f('ClientId', 'string', '1+'),
                _f('ClientHost', 'string', '1+'),
                _f('SubscribedTopicNames', '[]string', '1+'),
                _f('Assignment', 'Assignment', '1+', fields=[
                    _f('TopicPartitions', '[]TopicPartitions', '1+', fields=[
                        _f('TopicId', 'uuid', '1+'),
                        _f('TopicName', 'string', '1+'),
                        _f('Partitions', '[]int32', '1+')])])]),
            _f('AuthorizedOperations', 'int32', '1+', default=-2147483648)])]),
    'ShareFetchRequest': _message(78, 'request', '1-2', '1+', [
        _f('GroupId', 'string', '1+', nullable='1+', default='null'),
        _f('MemberId', 'string', '1+', nullable='1+'),
        _f('ShareSessionEpoch', 'int32', '1+'),
        _f('MaxWaitMs', 'int32', '1+'),
        _f('MinBytes', 'int32', '1+'),
        _f('MaxBytes', 'int32', '1+', default=2147483647),
        _f('MaxRecords', 'int32', '1+'),
        _f('BatchSize', 'int32', '1+'),
        _f('ShareAcquireMode', 'int8', '2+', default=0),
        _f('IsRenewAck', 'bool', '2+', default=False),
        _f('Topics', '[]FetchTopic', '1+', fields=[
            _f('TopicId', 'uuid', '1+'),
            _f('Partitions', '[]FetchPartition', '1+', fields=[
                _f('PartitionIndex', 'int32', '1+'),
                _f('AcknowledgementBatches', '[]AcknowledgementBatch', '1+', fields=[
                    _f('FirstOffset', 'int64', '1+'),
                    _f('LastOffset', 'int64', '1+'),
                    _f('AcknowledgeTypes', '[]int8', '1+')])])]),
        _f('ForgottenTopicsData', '[]ForgottenTopic', '1+', fields=[
            _f('TopicId', 'uuid', '1+'),
            _f('Partitions', '[]int32', '1+')])]),
    'ShareFetchResponse': _message(78, 'response', '1-2', '1+', [
        _f('ThrottleTimeMs', 'int32', '1+'),
        _f('ErrorCode', 'int16', '1+'),
        _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
        _f('AcquisitionLockTimeoutMs', 'int32', '1+'),
        _f('Responses', '[]ShareFetchableTopicResponse', '1+', fields=[
            _f('TopicId', 'uuid', '1+'),
            _f('Partitions', '[]PartitionData', '1+', fields=[
                _f('PartitionIndex', 'int32', '1+'),
                _f('ErrorCode', 'int16', '1+'),
                _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
                _f('AcknowledgeErrorCode', 'int16', '1+'),
                _f('AcknowledgeErrorMessage', 'string', '1+', nullable='1+', default='null'),
                _f('CurrentLeader', 'LeaderIdAndEpoch', '1+', fields=[
                    _f('LeaderId', 'int32', '1+'),
                    _f('LeaderEpoch', 'int32', '1+')]),
                _f('Records', 'records', '1+'),
                _f('AcquiredRecords', '[]AcquiredRecords', '1+', fields=[
                    _f('FirstOffset', 'int64', '1+'),
                    _f('LastOffset', 'int64', '1+'),
                    _f('DeliveryCount', 'int16', '1+')])])]),
        _f('NodeEndpoints', '[]NodeEndpoint', '1+', fields=[
            _f('NodeId', 'int32', '1+'),
            _f('Host', 'string', '1+'),
            _f('Port', 'int32', '1+'),
            _f('Rack', 'string', '1+', nullable='1+', default='null')])]),
    'ShareAcknowledgeRequest': _message(79, 'request', '1-2', '1+', [
        _f('GroupId', 'string', '1+', nullable='1+', default='null'),
        _f('MemberId', 'string', '1+', nullable='1+'),
        _f('ShareSessionEpoch', 'int32', '1+'),
        _f('IsRenewAck', 'bool', '2+', default=False),
        _f('Topics', '[]AcknowledgeTopic', '1+', fields=[
            _f('TopicId', 'uuid', '1+'),
            _f('Partitions', '[]AcknowledgePartition', '1+', fields=[
                _f('PartitionIndex', 'int32', '1+'),
                _f('AcknowledgementBatches', '[]AcknowledgementBatch', '1+', fields=[
                    _f('FirstOffset', 'int64', '1+'),
                    _f('LastOffset', 'int64', '1+'),
                    _f('AcknowledgeTypes', '[]int8', '1+')])])])]),
    'ShareAcknowledgeResponse': _message(79, 'response', '1-2', '1+', [
        _f('ThrottleTimeMs', 'int32', '1+'),
        _f('ErrorCode', 'int16', '1+'),
        _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
        _f('AcquisitionLockTimeoutMs', 'int32', '2+'),
        _f('Responses', '[]ShareAcknowledgeTopicResponse', '1+', fields=[
            _f('TopicId', 'uuid', '1+'),
            _f('Partitions', '[]PartitionData', '1+', fields=[
                _f('PartitionIndex', 'int32', '1+'),
                _f('ErrorCode', 'int16', '1+'),
                _f('ErrorMessage', 'string', '1+', nullable='1+', default='null'),
                _f('CurrentLeader', 'LeaderIdAndEpoch', '1+', fields=[
                    _f('LeaderId', 'int32', '1+'),
                    _f('LeaderEpoch', 'int32', '1+')])])]),
        _f('NodeEndpoints', '[]NodeEndpoint', '1+', fields=[
            _f('NodeId', 'int32', '1+'),
            _f('Host', 'string', '1+'),
            _f('Port', 'int32', '1+'),
            _f('Rack', 'string', '1+', nullable='1+', default='null')])]),
}


def definition(name: str) -> dict | None:
    """The message's definition (a fresh copy: the codec's loader edits what it is given), or None."""
    found = _DEFINITIONS.get(name)
    if found is None:
        return None
    return {"name": name, **found, "fields": [_copy(f) for f in found["fields"]]}


def _copy(raw: dict) -> dict:
    out = dict(raw)
    if "fields" in raw:
        out["fields"] = [_copy(f) for f in raw["fields"]]
    return out
