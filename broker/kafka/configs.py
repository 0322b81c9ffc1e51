"""Topic and broker configs: DescribeConfigs, AlterConfigs and IncrementalAlterConfigs (KIP-133, KIP-226, KIP-339).

The broker honours four topic configs; each topic keeps only its overrides (``Topic.configs``), the rest comes from
the broker's defaults. Behaviour follows Kafka's ConfigAdminManager / DynamicBrokerConfig as read for the spec notes:
- an unknown topic config name or a bad value is INVALID_CONFIG (40), and refuses the whole resource;
- broker configs are all static here, so altering one is INVALID_REQUEST (42, "Cannot update these configs
  dynamically");
- a broker resource names this node ("0") or the cluster default (""); any other id is INVALID_REQUEST;
- DescribeConfigs omits requested keys it does not know, lists synonyms only when asked (v1+), and documentation
  only when asked (v3+).
"""

from __future__ import annotations

from dataclasses import dataclass
from wirecheck.broker.kafka.faults import KafkaFaults, KafkaVariants
from wirecheck.broker.kafka.settings import CLOSE
from wirecheck.broker.kafka.storage import valid_topic_name
from wirecheck.broker.kafka.errors import (INVALID_CONFIG, INVALID_REQUEST, INVALID_TOPIC_EXCEPTION, NONE,
                                           UNKNOWN_TOPIC_OR_PARTITION)


TOPIC, BROKER = 2, 4  # ConfigResource.Type
# ConfigSource (DescribeConfigsResponse.json)
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
# ConfigType (DescribeConfigsResponse.json, v3+)
BOOLEAN, STRING, INT, LONG, LIST = 1, 2, 3, 5, 7
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3  # IncrementalAlterConfigs ConfigOperation


@dataclass(frozen=True)
class TopicConfig:
    kind: int  # ConfigType
    default: str
    broker_synonym: str  # the broker config that supplies the default
    doc: str
    allowed: frozenset[str] | None = None  # for STRING and LIST values
    minimum: int | None = None  # for INT and LONG values


TOPIC_CONFIGS: dict[str, TopicConfig] = {
    "retention.ms": TopicConfig(LONG, "604800000", "log.retention.ms",
                                "How long a batch is kept after its newest timestamp; -1 keeps everything.",
                                minimum=-1),
    "cleanup.policy": TopicConfig(LIST, "delete", "log.cleanup.policy",
                                  "delete or compact (a compacted topic refuses records without a key).",
                                  allowed=frozenset({"delete", "compact"})),
    "max.message.bytes": TopicConfig(INT, "1048588", "message.max.bytes",
                                     "The largest record batch the topic accepts.", minimum=0),
    "message.timestamp.type": TopicConfig(STRING, "CreateTime", "log.message.timestamp.type",
                                          "CreateTime keeps the producer's timestamps; LogAppendTime stamps "
                                          "batches on append.", allowed=frozenset({"CreateTime", "LogAppendTime"})),
}


def broker_configs(settings) -> dict[str, tuple[int, str, str]]:
    """name -> (type, value, documentation) of this broker's configs, all read-only."""
    return {
        "broker.id": (INT, "0", "This broker's node id."),
        "message.max.bytes": (INT, str(settings.max_message_bytes), "Default of the topic max.message.bytes."),
        "log.retention.ms": (LONG, str(settings.retention_ms), "Default of the topic retention.ms."),
        "log.retention.check.interval.ms": (LONG, str(settings.retention_check_ms), "How often retention runs."),
        "log.cleanup.policy": (LIST, "delete", "Default of the topic cleanup.policy."),
        "log.message.timestamp.type": (STRING, "CreateTime", "Default of the topic message.timestamp.type."),
        "num.partitions": (INT, str(settings.default_partitions), "Partitions of auto-created topics."),
        "auto.create.topics.enable": (BOOLEAN, str(settings.auto_create).lower(),
                                      "Whether Metadata creates unknown topics."),
    }


def validate(name: str, value: str | None) -> str | None:
    """The reason ``value`` is not valid for topic config ``name``, or None."""
    spec = TOPIC_CONFIGS.get(name)
    if spec is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return None
    if spec.kind in (INT, LONG):
        try:
            number = int(value)
        except ValueError:
            return f"Invalid value {value} for configuration {name}: not a number"
        if spec.minimum is not None and number < spec.minimum:
            return f"Invalid value {value} for configuration {name}: below {spec.minimum}"
        if spec.kind == INT and number >= 1 << 31:
            return f"Invalid value {value} for configuration {name}: not an int"
        return None
    items = [v.strip() for v in value.split(",")] if spec.kind == LIST else [value]
    if spec.allowed is not None and not all(item in spec.allowed for item in items):
        return f"Invalid value {value} for configuration {name}: expected one of {sorted(spec.allowed)}"
    return None


class Configs:
    """The three config APIs over the broker's topics and settings."""

    def __init__(self, storage, settings, faults: KafkaFaults, variants: KafkaVariants | None = None):
        self.storage = storage
        self.settings = settings
        self.faults = faults
        self.variants = KafkaVariants() if variants is None else variants

    # ------------------------------------------------------------------------------------------ describe

    def describe(self, req: dict, version: int) -> dict:
        if self.faults.describe_configs_named_keys_close and any(r["ConfigurationKeys"] for r in req["Resources"]):
            return {CLOSE: True}
        synonyms = (req.get("IncludeSynonyms", False) or self.faults.describe_configs_synonyms_always) \
            and version >= 1
        docs = req.get("IncludeDocumentation", False) or self.faults.describe_configs_docs_always
        results = []
        for resource in req["Resources"]:
            kind, name, keys = resource["ResourceType"], resource["ResourceName"], resource["ConfigurationKeys"]
            result = {"ErrorCode": NONE, "ErrorMessage": None, "ResourceType": kind, "ResourceName": name,
                      "Configs": []}
            results.append(result)
            error, message = self._resource_error(kind, name)
            # Apache Kafka checks a topic resource's name before looking it up: ConfigHelper.describeConfigs calls
            # Topic.validate(topic), whose InvalidTopicException answers 17 (core/src/main/scala/kafka/server/
            # ConfigHelper.scala)
            if kind == TOPIC and not valid_topic_name(name):
                error, message = INVALID_TOPIC_EXCEPTION, f"Topic name {name!r} is illegal"
            if error == UNKNOWN_TOPIC_OR_PARTITION and self.faults.describe_configs_unknown_topic_empty:
                continue  # fault: an unknown topic described as one with no configs, error 0
            if error:
                result.update(ErrorCode=error, ErrorMessage=message)
                continue
            entries = self._topic_entries(name, synonyms) if kind == TOPIC else self._broker_entries(synonyms)
            if kind == BROKER and self.faults.describe_configs_broker_empty:
                entries = []  # fault: only dynamic broker configs are listed, and there are none
            if kind == TOPIC and self.faults.describe_configs_defaults_null:
                for e in entries:  # fault: only overrides carry a value
                    e["Value"] = e["Value"] if e["ConfigSource"] != DEFAULT_CONFIG else None
            if keys is not None:
                entries = [e for e in entries if e["Name"] in keys]
                if self.faults.describe_configs_drops_key and entries:
                    entries = entries[1:]
            for entry in entries:
                entry["Documentation"] = entry["Documentation"] if docs else None
            result["Configs"] = entries
        return {"ThrottleTimeMs": 0, "Results": results}

    def _resource_error(self, kind: int, name: str) -> tuple[int, str | None]:
        if kind == TOPIC:
            if name not in self.storage.topics:
                return UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist"
            return NONE, None
        if kind == BROKER:
            if name not in ("", str(self.settings.node_id)):
                return INVALID_REQUEST, (f"Unexpected broker id, expected {self.settings.node_id} or empty string, "
                                         f"but received {name}")
            return NONE, None
        return INVALID_REQUEST, f"Unsupported resource type {kind}"

    def _topic_entries(self, topic_name: str, with_synonyms: bool) -> list[dict]:
        return self.effective_topic_configs(self.storage.topics[topic_name].configs, with_synonyms)

    def effective_topic_configs(self, overrides: dict[str, str], with_synonyms: bool = False) -> list[dict]:
        """Every topic config with its value and source, ``overrides`` applied (DescribeConfigs; CreateTopics v5+
        answers the same, KIP-525)."""
        entries = []
        for name, spec in TOPIC_CONFIGS.items():
            broker_default = self._broker_default(name)
            chain = []
            if name in overrides:
                chain.append({"Name": name, "Value": overrides[name], "Source": DYNAMIC_TOPIC_CONFIG})
            chain.append({"Name": spec.broker_synonym, "Value": broker_default, "Source": DEFAULT_CONFIG})
            value, source = chain[0]["Value"], chain[0]["Source"]
            entries.append({"Name": name, "Value": value, "ReadOnly": False, "ConfigSource": source,
                            "IsDefault": source == DEFAULT_CONFIG, "IsSensitive": False,
                            "Synonyms": chain if with_synonyms else [], "ConfigType": spec.kind,
                            "Documentation": spec.doc})
        return entries

    def _broker_default(self, topic_config: str) -> str:
        if topic_config == "max.message.bytes":
            return str(self.settings.max_message_bytes)
        if topic_config == "retention.ms":
            return str(self.settings.retention_ms)
        return TOPIC_CONFIGS[topic_config].default

    def _broker_entries(self, with_synonyms: bool) -> list[dict]:
        return [{"Name": name, "Value": value, "ReadOnly": True, "ConfigSource": DEFAULT_CONFIG, "IsDefault": True,
                 "IsSensitive": False,
                 "Synonyms": [{"Name": name, "Value": value, "Source": DEFAULT_CONFIG}] if with_synonyms else [],
                 "ConfigType": kind, "Documentation": doc}
                for name, (kind, value, doc) in broker_configs(self.settings).items()]

    # ------------------------------------------------------------------------------------------ alter

    def alter(self, req: dict, version: int) -> dict:
        """AlterConfigs: the given configs replace every override of the resource."""
        responses = []
        for resource in req["Resources"]:
            wanted = {c["Name"]: c["Value"] for c in resource["Configs"]}
            error, message = self._check_alter(resource, wanted)
            if not error and (not req["ValidateOnly"] or self.faults.validate_only_applied):
                self._apply(resource["ResourceName"], {k: v for k, v in wanted.items() if v is not None})
            responses.append(self._answer(resource, error, message))
        return {"ThrottleTimeMs": 0, "Responses": responses}

    def incremental_alter(self, req: dict, version: int) -> dict:
        """IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT per config."""
        responses = []
        for resource in req["Resources"]:
            error, message, result = self._incremental(resource, req["ValidateOnly"])
            if not error and (not req["ValidateOnly"] or self.faults.validate_only_applied):
                self._apply(resource["ResourceName"], result)
            responses.append(self._answer(resource, error, message))
        return {"ThrottleTimeMs": 0, "Responses": responses}

    def _incremental(self, resource: dict, validate_only: bool) -> tuple[int, str | None, dict]:
        names = [c["Name"] for c in resource["Configs"]]
        if len(set(names)) != len(names):
            return INVALID_REQUEST, "Error due to duplicate config keys", {}
        if any(c["ConfigOperation"] not in (SET, DELETE, APPEND, SUBTRACT) for c in resource["Configs"]):
            return INVALID_REQUEST, "Unknown config operation", {}
        error, message = self._check_alter(resource, {}) if names else (NONE, None)
        if error:
            return error, message, {}
        if resource["ResourceType"] == BROKER:
            if validate_only and self.faults.read_only_validate_passes:
                return NONE, None, {}  # fault: validation skips the static-config check
            # variant read-only-invalid-config: the refusal as a config error (40) instead of Kafka's 42
            code = INVALID_CONFIG if self.variants.read_only_invalid_config else INVALID_REQUEST
            return code, f"Cannot update these configs dynamically: {sorted(names)}", {}
        current = dict(self.storage.topics[resource["ResourceName"]].configs)
        for c in resource["Configs"]:
            name, op, value = c["Name"], c["ConfigOperation"], c["Value"]
            spec = TOPIC_CONFIGS.get(name)
            if spec is None:
                if self.faults.alter_configs_unknown_accepted:
                    continue
                return INVALID_CONFIG, f"Unknown topic config name: {name}", {}
            if op in (APPEND, SUBTRACT) and spec.kind != LIST:
                return INVALID_CONFIG, f"Config value append is not allowed for config key: {name}", {}
            if op == SET:
                current[name] = value
            elif op == DELETE:
                current.pop(name, None)
            else:
                items = [v for v in current.get(name, self._broker_default(name)).split(",") if v]
                given = [v.strip() for v in (value or "").split(",") if v.strip()]
                if op == APPEND and self.faults.incremental_append_replaces:
                    items = []  # fault: APPEND acts as SET
                items = items + [v for v in given if v not in items] if op == APPEND else \
                    [v for v in items if v not in given]
                current[name] = ",".join(items)
        for name, value in current.items():
            reason = validate(name, value)
            if reason:
                return INVALID_CONFIG, reason, {}
        return NONE, None, current

    def _check_alter(self, resource: dict, wanted: dict) -> tuple[int, str | None]:
        kind, name = resource["ResourceType"], resource["ResourceName"]
        error, message = self._resource_error(kind, name)
        if error:
            return error, message
        if kind == BROKER:
            if not wanted:
                return NONE, None
            return INVALID_REQUEST, f"Cannot update these configs dynamically: {sorted(wanted)}"
        for config, value in wanted.items():
            reason = validate(config, value)
            if reason and not (self.faults.alter_configs_unknown_accepted and config not in TOPIC_CONFIGS):
                return INVALID_CONFIG, reason
        return NONE, None

    def _apply(self, topic_name: str, overrides: dict) -> None:
        topic = self.storage.topics[topic_name]
        if self.faults.alter_configs_not_applied:
            return
        topic.configs = {k: v for k, v in overrides.items() if k in TOPIC_CONFIGS}
        topic.log_append_time = topic.configs.get("message.timestamp.type") == "LogAppendTime"
        self.storage.save()

    @staticmethod
    def _answer(resource: dict, error: int, message: str | None) -> dict:
        return {"ErrorCode": error, "ErrorMessage": message, "ResourceType": resource["ResourceType"],
                "ResourceName": resource["ResourceName"]}
