"""CreateTopics and DeleteTopics.

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

from wirecheck.broker.kafka import configs
from wirecheck.broker.kafka.errors import (INVALID_CONFIG, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
                                                      INVALID_REQUEST, INVALID_TOPIC_EXCEPTION, NONE,
                                                      TOPIC_ALREADY_EXISTS, TOPIC_AUTHORIZATION_FAILED,
                                                      UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION)
from wirecheck.broker.kafka.broker_parts import BrokerParts
from wirecheck.broker.kafka.settings import MAX_PARTITIONS
from wirecheck.broker.kafka.storage import valid_topic_name


class TopicApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    def create_topics(self, req: dict, version: int) -> dict:
        results = []
        for t in req["Topics"]:
            name = t["Name"]
            error, message, count, rf = self._check_creatable(t)
            if not self.settings.topic_admin:  # Kafka authorizes before it validates
                error, message = TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
            # Honoured configs (configs.TOPIC_CONFIGS) are validated and kept; others are accepted and ignored.
            honoured = {c["Name"]: c["Value"] for c in t["Configs"] if c["Name"] in configs.TOPIC_CONFIGS}
            for config_name, value in honoured.items():
                reason = configs.validate(config_name, value)
                if not error and reason:
                    error, message = INVALID_CONFIG, reason
            timestamp_type = honoured.get("message.timestamp.type") or "CreateTime"
            result = {"Name": name, "ErrorCode": error, "ErrorMessage": message, "TopicConfigErrorCode": 0,
                      "NumPartitions": -1, "ReplicationFactor": -1, "Configs": []}
            if error == NONE:
                topic = self.storage.topics.get(name)  # present only under create-duplicate-no-error
                if not req["validateOnly"] and topic is None:
                    # Other topic configs are accepted and ignored (documented in the package docstring).
                    made = 1 if self.faults.create_topic_count_ignored else count  # fault: always 1 partition
                    topic = self.storage.create(name, made, log_append_time=timestamp_type == "LogAppendTime",
                                                configs={k: v for k, v in honoured.items() if v is not None})
                result.update(NumPartitions=count, ReplicationFactor=rf,
                              TopicId=topic.topic_id if topic else bytes(16))
                # KIP-525: v5+ answers the created (or, validateOnly, would-be) topic's effective configs, sorted by
                # name, as Apache Kafka's ReplicationControlManager.createTopic does (metadata/src/main/java/org/
                # apache/kafka/controller/ReplicationControlManager.java: computeEffectiveTopicConfigs(creation
                # Configs), configNames.sort, one CreatableTopicConfigs per entry); which configs a server has is its
                # own (protocols/kafka/__init__.py declares the list an implementation field)
                overrides = {k: v for k, v in honoured.items() if v is not None}
                result["Configs"] = [{key: entry[key] for key in ("Name", "Value", "ReadOnly", "ConfigSource",
                                                                  "IsSensitive")}
                                     for entry in sorted(self.configs.effective_topic_configs(overrides),
                                                         key=lambda entry: entry["Name"])] if version >= 5 else []
            results.append(result)
        return {"ThrottleTimeMs": 0, "Topics": results}

    def _check_creatable(self, t: dict) -> tuple[int, str | None, int, int]:
        """(error, message, partitions, replication factor) for one CreatableTopic, in Kafka's checking order."""
        name, count, rf = t["Name"], t["NumPartitions"], t["ReplicationFactor"]
        if t["Assignments"]:
            if count != -1 or rf != -1:
                return INVALID_REQUEST, "Both numPartitions or replicationFactor and replicasAssignments were set.", \
                    count, rf
            count, rf = len(t["Assignments"]), len(t["Assignments"][0]["BrokerIds"])
        count = self.settings.default_partitions if count == -1 else count  # -1: the broker default (v4+)
        rf = 1 if rf == -1 else rf
        if not valid_topic_name(name):
            return INVALID_TOPIC_EXCEPTION, f"invalid topic name {name!r}", count, rf
        if name in self.storage.topics and not self.faults.create_duplicate_no_error:
            code = -TOPIC_ALREADY_EXISTS if self.faults.error_code_negated else TOPIC_ALREADY_EXISTS
            return code, f"Topic '{name}' already exists.", count, rf  # fault error-code-negated: -36
        if count < (0 if self.faults.create_zero_partitions_accepted else 1):  # fault: 0 partitions pass
            return INVALID_PARTITIONS, "Number of partitions must be larger than 0.", count, rf
        if count > MAX_PARTITIONS:
            return INVALID_PARTITIONS, f"This broker keeps at most {MAX_PARTITIONS} partitions a topic.", count, rf
        if name not in self.storage.topics and not self.storage.has_room(count):
            return INVALID_PARTITIONS, "This broker's partition budget is exhausted.", count, rf
        if rf != 1 and not (rf > 1 and self.faults.replication_factor_unchecked):
            return INVALID_REPLICATION_FACTOR, f"Replication factor {rf}: this broker is the only one.", count, rf
        return NONE, None, count, rf

    def delete_topics(self, req: dict, version: int) -> dict:
        if version >= 6:
            wanted = [(t["Name"], t["TopicId"]) for t in req["Topics"]]
        else:
            wanted = [(name, None) for name in req["TopicNames"]]
        results = []
        for name, topic_id in wanted:
            if name is None and topic_id:
                topic = self.storage.by_id.get(topic_id)
                if topic is None:
                    results.append({"Name": None, "TopicId": topic_id, "ErrorCode": UNKNOWN_TOPIC_ID})
                    continue
                name = topic.name
            topic = self.storage.topics.get(name)
            if not self.settings.topic_admin:
                results.append({"Name": name, "TopicId": bytes(16), "ErrorCode": TOPIC_AUTHORIZATION_FAILED})
                continue
            if topic is None:
                results.append({"Name": name, "TopicId": bytes(16), "ErrorCode": UNKNOWN_TOPIC_OR_PARTITION})
                continue
            self.storage.delete(name)
            self.coordinator.forget_topic(name)
            self.producers.forget_topic(name)
            results.append({"Name": name, "TopicId": topic.topic_id, "ErrorCode": NONE})
        return {"ThrottleTimeMs": 0, "Responses": results}
