"""Metadata and FindCoordinator: what the cluster is, which topics it has, where a group's coordinator is.

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

from wirecheck.broker.kafka.errors import (INVALID_TOPIC_EXCEPTION, LEADER_NOT_AVAILABLE, NONE,
                                                      UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION)
from wirecheck.broker.kafka.broker_parts import BrokerParts
from wirecheck.broker.kafka.settings import (AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_ID, CLUSTER_OPERATIONS,
                                                        TOPIC_OPERATIONS)
from wirecheck.broker.kafka.storage import valid_topic_name


class MetadataApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    def metadata(self, req: dict, version: int, host: str, port: int) -> dict:
        requested = req["Topics"]
        if requested is None or (version == 0 and requested == []):
            names = sorted(self.storage.topics)  # null (v1+) or empty (v0): all topics
        elif self.faults.metadata_empty_means_all and requested == []:
            names = sorted(self.storage.topics)
        else:
            names = []
            for t in requested:
                name = t.get("Name")
                if name is None and t.get("TopicId"):
                    topic = self.storage.by_id.get(t["TopicId"])
                    name = topic.name if topic else None
                    if name is None:
                        names.append((UNKNOWN_TOPIC_ID, None, t["TopicId"]))
                        continue
                if name not in names:  # Kafka collects the requested names into a set
                    names.append(name)
        allow_create = req.get("AllowAutoTopicCreation", True) if version >= 4 else True
        allow_create = allow_create or self.faults.metadata_ignores_allow_create  # fault: v4+ flag ignored
        topics = []
        for entry in names:
            if isinstance(entry, tuple):
                topics.append({"ErrorCode": entry[0], "Name": None, "TopicId": entry[2], "Partitions": []})
                continue
            topics.append(self._topic_metadata(entry, allow_create))
        # Kafka's handleTopicMetadataRequest: v8+ sets every listed topic's operations when asked, v8-10 the
        # cluster's (KafkaApis.scala: includeTopicAuthorizedOperations, includeClusterAuthorizedOperations)
        if version >= 8 and req.get("IncludeTopicAuthorizedOperations"):
            for topic in topics:
                topic["TopicAuthorizedOperations"] = TOPIC_OPERATIONS
        cluster_operations = CLUSTER_OPERATIONS if 8 <= version <= 10 and req.get(
            "IncludeClusterAuthorizedOperations") else AUTHORIZED_OPERATIONS_OMITTED
        return {
            "ThrottleTimeMs": 0,
            "Brokers": [{"NodeId": self.settings.node_id, "Host": host, "Port": port, "Rack": None}],
            "ClusterId": CLUSTER_ID,
            "ControllerId": self.settings.node_id,
            "Topics": topics,
            "ClusterAuthorizedOperations": cluster_operations,
            "ErrorCode": NONE,
        }

    def _topic_metadata(self, name: str, allow_create: bool) -> dict:
        topic = self.storage.topics.get(name)
        if topic is None:
            if not valid_topic_name(name):
                # variant invalid-topic-unknown: a name this broker cannot hold is simply not there (3)
                unknown = self.variants.invalid_topic_unknown
                code = UNKNOWN_TOPIC_OR_PARTITION if unknown else INVALID_TOPIC_EXCEPTION
                return {"ErrorCode": code, "Name": name, "Partitions": [],
                        "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
            may_create = allow_create and self.settings.auto_create
            if not (may_create and self.storage.has_room(self.settings.default_partitions)):
                return {"ErrorCode": UNKNOWN_TOPIC_OR_PARTITION, "Name": name, "Partitions": [],
                        "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
            # Apache Kafka 4 answers the Metadata that asks for the creation UNKNOWN_TOPIC_OR_PARTITION, with no id
            # and no partitions (DefaultAutoTopicCreationManager.sendCreateTopicRequest: the request goes to the
            # controller, and the answer does not wait for it); clients retry (3 is retriable), and a later
            # Metadata lists the partitions. Kafka 3's AutoTopicCreationManager.scala answered LEADER_NOT_AVAILABLE
            # with the topic's id (variant metadata-auto-create-leader-not-available). kafka.metadata.unknown-topic's
            # case looks twice, so the fault metadata-ignores-allow-create is told from a correct broker by the
            # topic the second Metadata lists.
            topic = self.storage.create(name, self.settings.default_partitions)
            if self.variants.metadata_auto_create_leader_not_available:
                return {"ErrorCode": LEADER_NOT_AVAILABLE, "Name": name, "TopicId": topic.topic_id, "Partitions": [],
                        "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
            return {"ErrorCode": UNKNOWN_TOPIC_OR_PARTITION, "Name": name, "Partitions": [],
                    "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED}
        node = self.settings.node_id
        leader = node + 1 if self.faults.metadata_leader_not_a_broker else node  # fault: no such node
        return {
            "ErrorCode": NONE, "Name": name, "TopicId": topic.topic_id, "IsInternal": False,
            "Partitions": [{"ErrorCode": NONE, "PartitionIndex": p.index, "LeaderId": leader, "LeaderEpoch": 0,
                            "ReplicaNodes": [node], "IsrNodes": [node], "OfflineReplicas": []}
                           for p in topic.partitions],
            "TopicAuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED,
        }

    def find_coordinator(self, req: dict, version: int, host: str, port: int) -> dict:
        if self.faults.coordinator_port_hardcoded:
            port = 9092 if port != 9092 else 9093
        if version < 4:
            return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "ErrorMessage": None, "NodeId": self.settings.node_id,
                    "Host": host, "Port": port}
        return {"ThrottleTimeMs": 0, "Coordinators": [
            {"Key": key, "NodeId": self.settings.node_id, "Host": host, "Port": port, "ErrorCode": NONE, "ErrorMessage": None}
            for key in req["CoordinatorKeys"]]}
