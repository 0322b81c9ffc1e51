"""Every API this broker serves, registered once: its key, its message name, the versions it advertises and
implements, and its handler; and the request and response codecs compiled from that table.

A handler takes the personality, the decoded request, its version and the :class:`Caller`, and returns a response
dict, None (no response) or an awaitable of either. Produce min 0: Kafka 4 keeps advertising it for librdkafka
(KAFKA-18659); v0-2 are decoded and answered in their own layout, and a batch that is not magic 2 gets
INVALID_RECORD (87), as message formats 0/1 are gone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from wirecheck.broker.kafka.api_keys import ApiKey as K
from wirecheck.broker.kafka.codec import Message, Options

if TYPE_CHECKING:
    from wirecheck.broker.kafka.server import KafkaPersonality


class Caller(NamedTuple):
    """Who asked, for the handlers that name an address or a member: the client, and the listener it reached."""

    client_id: str
    host: str  # this listener's host and port, as Metadata, FindCoordinator and DescribeCluster name them
    port: int
    client_host: str


Handler = Callable[["KafkaPersonality", dict, int, Caller], Any]


class Api(NamedTuple):
    name: str  # the message definitions <name>Request and <name>Response
    low: int  # the versions advertised and implemented
    high: int
    handler: Handler | None  # None: answered before dispatch (SASL, by the connection's authenticator)


APIS: dict[int, Api] = {
    K.PRODUCE: Api("Produce", 0, 12, lambda k, req, v, c: k.broker.produce(req, v)),
    # v3 only reaches the handler under the advertise-unimplemented fault: answered in the v4 layout
    K.FETCH: Api("Fetch", 4, 16, lambda k, req, v, c: k.broker.fetch(req, max(v, 4))),
    K.LIST_OFFSETS: Api("ListOffsets", 1, 9, lambda k, req, v, c: k.broker.list_offsets(req, v)),
    K.METADATA: Api("Metadata", 0, 13, lambda k, req, v, c: k.broker.metadata(req, v, c.host, c.port)),
    K.OFFSET_COMMIT: Api("OffsetCommit", 2, 9, lambda k, req, v, c: k.broker.offset_commit(req, v)),
    K.OFFSET_FETCH: Api("OffsetFetch", 1, 9, lambda k, req, v, c: k.broker.offset_fetch(req, v)),
    K.FIND_COORDINATOR: Api("FindCoordinator", 0, 6,
                            lambda k, req, v, c: k.broker.find_coordinator(req, v, c.host, c.port)),
    K.JOIN_GROUP: Api("JoinGroup", 0, 9, lambda k, req, v, c: k.broker.join_group(req, v, c.client_id, c.client_host)),
    K.HEARTBEAT: Api("Heartbeat", 0, 4, lambda k, req, v, c: k.broker.heartbeat(req, v)),
    K.LEAVE_GROUP: Api("LeaveGroup", 0, 5, lambda k, req, v, c: k.broker.leave_group(req, v)),
    K.SYNC_GROUP: Api("SyncGroup", 0, 5, lambda k, req, v, c: k.broker.sync_group(req, v)),
    K.DESCRIBE_GROUPS: Api("DescribeGroups", 0, 6, lambda k, req, v, c: k.broker.describe_groups(req, v)),
    K.LIST_GROUPS: Api("ListGroups", 0, 5, lambda k, req, v, c: k.broker.list_groups(req, v)),
    K.API_VERSIONS: Api("ApiVersions", 0, 4, lambda k, req, v, c: k.api_versions(req, v)),
    K.CREATE_TOPICS: Api("CreateTopics", 2, 7, lambda k, req, v, c: k.broker.create_topics(req, v)),
    K.DELETE_TOPICS: Api("DeleteTopics", 1, 6, lambda k, req, v, c: k.broker.delete_topics(req, v)),
    K.INIT_PRODUCER_ID: Api("InitProducerId", 0, 5, lambda k, req, v, c: k.broker.init_producer_id(req, v)),
    # v4+: the broker-to-broker batched form (KIP-890), not implemented
    K.ADD_PARTITIONS_TO_TXN: Api("AddPartitionsToTxn", 0, 3,
                                 lambda k, req, v, c: k.broker.add_partitions_to_txn(req, v)),
    # v4 (EndTxn, TxnOffsetCommit too): TRANSACTION_ABORTABLE allowed, never sent
    K.ADD_OFFSETS_TO_TXN: Api("AddOffsetsToTxn", 0, 4, lambda k, req, v, c: k.broker.add_offsets_to_txn(req, v)),
    # v5: transaction protocol version 2 (KIP-890 part 2, transactions_v2.py)
    K.END_TXN: Api("EndTxn", 0, 5, lambda k, req, v, c: k.broker.end_txn(req, v)),
    # v5: adds its group to the transaction itself (TV2)
    K.TXN_OFFSET_COMMIT: Api("TxnOffsetCommit", 0, 5, lambda k, req, v, c: k.broker.txn_offset_commit(req, v)),
    K.DELETE_RECORDS: Api("DeleteRecords", 0, 2, lambda k, req, v, c: k.broker.admin.delete_records(req, v)),
    # v0-1 are gone from the definitions (Kafka 4)
    K.OFFSET_FOR_LEADER_EPOCH: Api("OffsetForLeaderEpoch", 2, 4,
                                   lambda k, req, v, c: k.broker.admin.offset_for_leader_epoch(req, v)),
    # v0 likewise
    K.DESCRIBE_CONFIGS: Api("DescribeConfigs", 1, 4, lambda k, req, v, c: k.broker.configs.describe(req, v)),
    K.ALTER_CONFIGS: Api("AlterConfigs", 0, 2, lambda k, req, v, c: k.broker.configs.alter(req, v)),
    K.CREATE_PARTITIONS: Api("CreatePartitions", 0, 3, lambda k, req, v, c: k.broker.admin.create_partitions(req, v)),
    K.DELETE_GROUPS: Api("DeleteGroups", 0, 2, lambda k, req, v, c: k.broker.admin.delete_groups(req, v)),
    K.INCREMENTAL_ALTER_CONFIGS: Api("IncrementalAlterConfigs", 0, 1,
                                     lambda k, req, v, c: k.broker.configs.incremental_alter(req, v)),
    K.OFFSET_DELETE: Api("OffsetDelete", 0, 0, lambda k, req, v, c: k.broker.admin.offset_delete(req, v)),
    K.DESCRIBE_CLUSTER: Api("DescribeCluster", 0, 2,
                            lambda k, req, v, c: k.broker.admin.describe_cluster(req, v, c.host, c.port)),
    K.DESCRIBE_PRODUCERS: Api("DescribeProducers", 0, 0,
                              lambda k, req, v, c: k.broker.admin.describe_producers(req, v)),
    # KIP-848 (consumer_groups.py)
    K.CONSUMER_GROUP_HEARTBEAT: Api("ConsumerGroupHeartbeat", 0, 1, lambda k, req, v, c: k.broker.consumer_groups
                                    .heartbeat(req, v, c.client_id, c.client_host)),
    K.CONSUMER_GROUP_DESCRIBE: Api("ConsumerGroupDescribe", 0, 1,
                                   lambda k, req, v, c: k.broker.consumer_groups.describe(req, v)),
    # KIP-932 share groups (share_groups.py, share_fetch.py): Kafka 4.1's versions (v0 was the early-access
    # format, removed)
    K.SHARE_GROUP_HEARTBEAT: Api("ShareGroupHeartbeat", 1, 1, lambda k, req, v, c: k.broker.share_groups
                                 .heartbeat(req, v, c.client_id, c.client_host)),
    K.SHARE_GROUP_DESCRIBE: Api("ShareGroupDescribe", 1, 1,
                                lambda k, req, v, c: k.broker.share_groups.describe(req, v)),
    K.SHARE_FETCH: Api("ShareFetch", 1, 2, lambda k, req, v, c: k.broker.share_fetcher.share_fetch(req, v)),
    K.SHARE_ACKNOWLEDGE: Api("ShareAcknowledge", 1, 2,
                             lambda k, req, v, c: k.broker.share_fetcher.share_acknowledge(req, v)),
    # KIP-714 (telemetry.py); not advertised under --no-kafka-telemetry
    K.GET_TELEMETRY_SUBSCRIPTIONS: Api("GetTelemetrySubscriptions", 0, 0,
                                       lambda k, req, v, c: k.telemetry.subscriptions(req, v)),
    K.PUSH_TELEMETRY: Api("PushTelemetry", 0, 0, lambda k, req, v, c: k.telemetry.push(req, v)),
}

TELEMETRY_KEYS = (K.GET_TELEMETRY_SUBSCRIPTIONS, K.PUSH_TELEMETRY)

#: Advertised only when SASL is enabled (``--kafka-sasl-users``). SaslHandshake v0 (raw tokens after the handshake,
#: before KIP-152) is not offered.
SASL_APIS: dict[int, Api] = {
    K.SASL_HANDSHAKE: Api("SaslHandshake", 0, 1, None),
    K.SASL_AUTHENTICATE: Api("SaslAuthenticate", 0, 2, None),
}


@functools.lru_cache(maxsize=None)
def compile_messages(misskip_tags: bool, sasl: bool = False, short_string_varints: bool = False,
                     negative_null: bool = False, default_tags: bool = False) \
        -> tuple[dict[int, Message], dict[int, Message]]:
    """Request and response codecs of every API, each advertised version compiled once per process."""
    opts = Options(misskip_tags=misskip_tags, short_string_varint=short_string_varints, negative_null=negative_null,
                   default_tags=default_tags)
    apis = {**APIS, **SASL_APIS} if sasl else APIS
    requests = {key: Message(api.name + "Request", opts) for key, api in apis.items()}
    responses = {key: Message(api.name + "Response", opts) for key, api in apis.items()}
    for key, api in apis.items():
        for version in range(api.low, api.high + 1):
            requests[key].compile(version)
            responses[key].compile(version)
    return requests, responses
