"""Topic and broker configs: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs (KIP-133, KIP-226, KIP-339).

Every case creates its own topic and only alters that topic's configs, so the cases are harmless on a live
cluster; broker configs are only described, or altered with ValidateOnly.
"""

from __future__ import annotations

import pytest

from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.kafka.client import C, DataPath, expect, expect_produced, short, until_applied, RECORD_TIME_MS

case = pytest.mark.case
DESCRIBE, ALTER, INCREMENTAL = 32, 33, 44
TOPIC, BROKER = 2, 4  # ConfigResource.Type
DYNAMIC_TOPIC_CONFIG = 1  # ConfigSource
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
REQUESTED_KEYS = "kafka.configs.requested-keys"  # owns every read by named keys (Configs.describe)
BARRIER = ("max.message.bytes", "1048589")  # a harmless override the barrier sets (Configs.barrier)


class Configs(DataPath):
    def describe(self, kind: int, name: str, keys: list[str] | None, clause_id: str, version: int | None = None,
                 synonyms: bool = False, documentation: bool = False) -> dict:
        """The resource's DescribeConfigs result. With ``keys``, a requested key missing from it that the target
        lists when asked for every key breaks kafka.configs.requested-keys (BLOCKED in a case about something
        else, before it misreads the missing entry)."""
        version = self.version(DESCRIBE, low=1) if version is None else version
        try:
            result = self._describe(kind, name, keys, clause_id, version, synonyms, documentation)
        except Divergence:
            if keys and clause_id != REQUESTED_KEYS:
                self._named_keys_answered(kind, name, keys, version)
            raise
        missing = set(keys or ()) - {entry["Name"] for entry in result["Configs"]}
        if missing and result["ErrorCode"] == errors.NONE:
            clause = REQUESTED_KEYS
            known = {entry["Name"] for entry in self._describe(kind, name, None, clause, version)["Configs"]}
            if missing & known:
                raise Divergence(C[clause], f"an entry for each requested key the target knows: {sorted(keys)}",
                                 f"none for {sorted(missing & known)}, which it lists when asked for every key")
        return result

    def _named_keys_answered(self, kind: int, name: str, keys: list[str], version: int) -> None:
        """A read by named keys went wrong: the same keys asked plainly (no synonyms, no documentation) on a new
        connection, under the clause that owns named keys. A target that cannot answer named keys at all is then
        one failure of kafka.configs.requested-keys that BLOCKS the cases reading configs back by name; if the plain
        read is answered, the case's own divergence stands."""
        with self.target.precondition(f"DescribeConfigs of {name} by the keys {keys} answered"):
            Configs(self.target)._describe(kind, name, keys, REQUESTED_KEYS, version)

    def _describe(self, kind: int, name: str, keys: list[str] | None, clause_id: str, version: int,
                  synonyms: bool = False, documentation: bool = False) -> dict:
        body = self.call(DESCRIBE, version, {
            "Resources": [{"ResourceType": kind, "ResourceName": name, "ConfigurationKeys": keys}],
            "IncludeSynonyms": synonyms, "IncludeDocumentation": documentation}, clause_id)
        if len(body["Results"]) != 1:
            raise Divergence(C[clause_id], "one result for one resource", short(body["Results"]))
        return body["Results"][0]

    def topic_values(self, topic: str, clause_id: str, keys: list[str] | None = None) -> dict[str, dict]:
        result = self.describe(TOPIC, topic, keys, clause_id)
        if result["ErrorCode"] != errors.NONE:
            raise Divergence(C[clause_id], f"DescribeConfigs of {topic} with error 0",
                             f"error {result['ErrorCode']} {errors.name(result['ErrorCode'])}")
        return {entry["Name"]: entry for entry in result["Configs"]}

    def values_once(self, topic: str, clause_id: str, applied, keys: list[str] | None = None) -> dict[str, dict]:
        """The topic's configs once ``applied(entries)`` holds, or as they are after client.READY_WAIT_S: Kafka
        answers an alteration once its controller committed it (KafkaApis.scala 2837-2838 forwards AlterConfigs
        and IncrementalAlterConfigs to the controller) and answers DescribeConfigs from the broker's metadata image
        (ConfigHelper.scala 109, configRepository.topicConfig), which applies the metadata log a moment later
        (client.until_applied). The caller judges what comes back."""
        return until_applied(lambda: self.topic_values(topic, clause_id, keys), applied)

    def barrier(self, topic: str) -> None:
        """A later change to the topic's configs, waited for until DescribeConfigs shows it (values_once). The
        broker applies its metadata log in order, so what an earlier request changed shows by then too: a case
        that checks that something did NOT change reads after this, or it could read before the change arrived.
        Without IncrementalAlterConfigs there is no change that leaves the others alone, so no barrier."""
        if INCREMENTAL not in self.advertised():
            return
        clause = "kafka.configs.incremental"
        name, value = BARRIER
        with self.target.precondition(f"{name}={value} set on {topic} and described (a barrier)"):
            expect(clause, self.incremental(topic, [(name, SET, value)], clause), errors.NONE)
            got = value_of(self.values_once(topic, clause, lambda e: e.get(name, {}).get("Value") == value, [name]),
                           name, clause)
            if got != value:
                raise Divergence(C[clause], f"{name}={value}", f"{name}={got}")

    def alter(self, topic: str, configs: dict[str, str | None], clause_id: str, validate_only: bool = False,
              kind: int = TOPIC) -> int:
        body = self.call(ALTER, self.version(ALTER), {
            "Resources": [{"ResourceType": kind, "ResourceName": topic,
                           "Configs": [{"Name": k, "Value": v} for k, v in configs.items()]}],
            "ValidateOnly": validate_only}, clause_id)
        return body["Responses"][0]["ErrorCode"]

    def incremental(self, name: str, ops: list[tuple[str, int, str | None]], clause_id: str,
                    validate_only: bool = False, kind: int = TOPIC) -> int:
        body = self.call(INCREMENTAL, self.version(INCREMENTAL), {
            "Resources": [{"ResourceType": kind, "ResourceName": name,
                           "Configs": [{"Name": k, "ConfigOperation": op, "Value": v} for k, op, v in ops]}],
            "ValidateOnly": validate_only}, clause_id)
        return body["Responses"][0]["ErrorCode"]

    def set_config(self, topic: str, name: str, value: str) -> None:
        """IncrementalAlterConfigs SET, then DescribeConfigs shows it: a step of the cases that need an override
        in place (one not applied breaks kafka.configs.incremental, which BLOCKS them)."""
        clause = "kafka.configs.incremental"
        expect(clause, self.incremental(topic, [(name, SET, value)], clause), errors.NONE)
        got = value_of(self.values_once(topic, clause, lambda e: e.get(name, {}).get("Value") == value), name, clause)
        if got != value:
            raise Divergence(C[clause], f"{name}={value}", f"{name}={got}")

    def node_id(self) -> str:
        body = self.call(3, self.version(3, low=1), {"Topics": [], "AllowAutoTopicCreation": False},
                         "kafka.metadata.brokers")
        return str(body["ControllerId"] if body.get("ControllerId", -1) >= 0 else body["Brokers"][0]["NodeId"])


def value_of(entries: dict[str, dict], name: str, clause_id: str) -> str | None:
    if name not in entries:
        raise Divergence(C[clause_id], f"an entry for {name}", f"entries {sorted(entries)}")
    return entries[name]["Value"]


def client_for(target, api_key: int) -> Configs:
    client = Configs(target)
    client.require(api_key)
    return client


def new_topic(client: Configs, target) -> str:
    """A fresh topic, for the cases that alter configs (an operator's topics are not the suite's to change)."""
    return client.topic("cfg")


# -- describe ----------------------------------------------------------------------------------------------------


@case("kafka.configs.describe-topic")
def test_describe_topic_lists_configs(target):
    client = client_for(target, DESCRIBE)
    entries = client.topic_values(client.topic(shared=True), "kafka.configs.describe-topic")
    for name in ("retention.ms", "cleanup.policy", "max.message.bytes"):
        if value_of(entries, name, "kafka.configs.describe-topic") is None:
            raise Divergence(C["kafka.configs.describe-topic"], f"a value for {name}", "null")


@case("kafka.configs.requested-keys")
def test_describe_returns_only_requested_keys(target):
    client = client_for(target, DESCRIBE)
    topic = client.topic(shared=True)
    wanted = ["retention.ms", "cleanup.policy", "wirecheck.no.such.config"]
    entries = client.topic_values(topic, "kafka.configs.requested-keys", wanted)
    if set(entries) != {"retention.ms", "cleanup.policy"}:
        raise Divergence(C["kafka.configs.requested-keys"], "entries retention.ms and cleanup.policy only",
                         f"entries {sorted(entries)}")


@case("kafka.configs.describe-broker")
def test_describe_broker(target):
    client = client_for(target, DESCRIBE)
    result = client.describe(BROKER, client.node_id(), None, "kafka.configs.describe-broker")
    expect("kafka.configs.describe-broker", result["ErrorCode"], errors.NONE)
    if not result["Configs"]:
        raise Divergence(C["kafka.configs.describe-broker"], "at least one broker config", "none")


@case("kafka.configs.unknown-topic")
def test_describe_unknown_topic(target):
    client = client_for(target, DESCRIBE)
    result = client.describe(TOPIC, target.unique("absent"), None, "kafka.configs.unknown-topic")
    expect("kafka.configs.unknown-topic", result["ErrorCode"], errors.UNKNOWN_TOPIC_OR_PARTITION)


@case("kafka.configs.synonyms")
@pytest.mark.parametrize("include", [True, False], ids=["with", "without"])
def test_synonyms_only_when_asked(target, include):
    client = client_for(target, DESCRIBE)
    client.require(INCREMENTAL)
    topic = new_topic(client, target)
    with target.precondition(f"retention.ms set on {topic}"):
        client.set_config(topic, "retention.ms", "86400000")
    version = client.version(DESCRIBE, low=1)
    result = client.describe(TOPIC, topic, ["retention.ms"], "kafka.configs.synonyms", version, synonyms=include)
    entry = result["Configs"][0] if result["Configs"] else None
    if entry is None:
        raise Divergence(C["kafka.configs.synonyms"], "an entry for retention.ms", short(result))
    synonyms = entry["Synonyms"]
    if not include:
        if synonyms:
            raise Divergence(C["kafka.configs.synonyms"], "no synonyms (IncludeSynonyms false)", short(synonyms))
        return
    if not synonyms or synonyms[0]["Value"] != "86400000" or synonyms[0]["Source"] != DYNAMIC_TOPIC_CONFIG:
        raise Divergence(C["kafka.configs.synonyms"],
                         "synonyms starting with retention.ms=86400000 from DYNAMIC_TOPIC_CONFIG (1)", short(synonyms))


@case("kafka.configs.documentation")
@pytest.mark.parametrize("include", [True, False], ids=["with", "without"])
def test_documentation_only_when_asked(target, include):
    client = client_for(target, DESCRIBE)
    low, high = client.require(DESCRIBE)
    if high < 3:
        raise Unimplemented("DescribeConfigs v3+ (documentation) is not advertised")
    topic = client.topic(shared=True)
    version = client.version(DESCRIBE, low=3)
    result = client.describe(TOPIC, topic, ["retention.ms"], "kafka.configs.documentation", version,
                             documentation=include)
    docs = [e["Documentation"] for e in result["Configs"]]
    if not docs:
        raise Divergence(C["kafka.configs.documentation"], "an entry for retention.ms", short(result))
    if include and docs[0] is None:
        raise Divergence(C["kafka.configs.documentation"], "documentation for retention.ms", "null")
    if not include and docs[0] is not None:
        raise Divergence(C["kafka.configs.documentation"], "null documentation (not asked)", short(docs[0]))


# -- alter -------------------------------------------------------------------------------------------------------


@case("kafka.configs.alter-round-trip")
def test_alter_configs_replaces_overrides(target):
    client = client_for(target, ALTER)
    client.require(DESCRIBE)
    topic = new_topic(client, target)
    clause = "kafka.configs.alter-round-trip"
    expect(clause, client.alter(topic, {"retention.ms": "3600000", "cleanup.policy": "compact"}, clause), errors.NONE)
    entries = client.values_once(topic, clause, lambda e: e.get("retention.ms", {}).get("Value") == "3600000")
    if value_of(entries, "retention.ms", clause) != "3600000" or entries["retention.ms"]["ConfigSource"] != \
            DYNAMIC_TOPIC_CONFIG:
        raise Divergence(C[clause], "retention.ms=3600000 from DYNAMIC_TOPIC_CONFIG (1)", short(entries["retention.ms"]))
    expect(clause, client.alter(topic, {"retention.ms": "7200000"}, clause), errors.NONE)
    entries = client.values_once(topic, clause, lambda e: e.get("retention.ms", {}).get("Value") == "7200000")
    if value_of(entries, "retention.ms", clause) != "7200000":
        raise Divergence(C[clause], "retention.ms=7200000", short(entries["retention.ms"]))
    policy = entries.get("cleanup.policy", {})
    if policy.get("ConfigSource") == DYNAMIC_TOPIC_CONFIG or policy.get("Value") == "compact":
        raise Divergence(C[clause], "cleanup.policy back to its default (not named in the second AlterConfigs)",
                         short(policy))


@case("kafka.configs.incremental")
def test_incremental_alter_operations(target):
    client = client_for(target, INCREMENTAL)
    client.require(DESCRIBE)
    topic = new_topic(client, target)
    clause = "kafka.configs.incremental"
    expect(clause, client.incremental(topic, [("retention.ms", SET, "1234567"),
                                              ("cleanup.policy", SET, "delete")], clause), errors.NONE)
    expect(clause, client.incremental(topic, [("cleanup.policy", APPEND, "compact")], clause), errors.NONE)
    entries = client.values_once(topic, clause, lambda e: "compact" in (e.get("cleanup.policy", {}).get("Value") or ""),
                                 ["retention.ms", "cleanup.policy"])
    policy = set((value_of(entries, "cleanup.policy", clause) or "").split(","))
    if value_of(entries, "retention.ms", clause) != "1234567" or policy != {"delete", "compact"}:
        raise Divergence(C[clause], "retention.ms=1234567, cleanup.policy=delete,compact", short(entries))
    expect(clause, client.incremental(topic, [("cleanup.policy", SUBTRACT, "delete"),
                                              ("retention.ms", DELETE, None)], clause), errors.NONE)
    entries = client.values_once(topic, clause, lambda e: e.get("cleanup.policy", {}).get("Value") == "compact",
                                 ["retention.ms", "cleanup.policy"])
    if value_of(entries, "cleanup.policy", clause) != "compact" or \
            entries["retention.ms"]["ConfigSource"] == DYNAMIC_TOPIC_CONFIG:
        raise Divergence(C[clause], "cleanup.policy=compact and retention.ms back to its default", short(entries))


@case("kafka.configs.validate-only")
@pytest.mark.parametrize("api", ["AlterConfigs", "IncrementalAlterConfigs"])
def test_validate_only_changes_nothing(target, api):
    client = client_for(target, ALTER if api == "AlterConfigs" else INCREMENTAL)
    client.require(DESCRIBE)
    topic = new_topic(client, target)
    clause = "kafka.configs.validate-only"
    before = value_of(client.topic_values(topic, clause, ["retention.ms"]), "retention.ms", clause)
    if api == "AlterConfigs":
        code = client.alter(topic, {"retention.ms": "1000"}, clause, validate_only=True)
    else:
        code = client.incremental(topic, [("retention.ms", SET, "1000")], clause, validate_only=True)
    expect(clause, code, errors.NONE)
    client.barrier(topic)
    after = value_of(client.topic_values(topic, clause, ["retention.ms"]), "retention.ms", clause)
    if after != before:
        raise Divergence(C[clause], f"retention.ms still {before}", f"retention.ms {after}")


@case("kafka.configs.unknown-config")
@pytest.mark.parametrize(("name", "value"), [("wirecheck.no.such.config", "1"), ("retention.ms", "soon"),
                                             ("message.timestamp.type", "WallClock")],
                         ids=["unknown-name", "not-a-number", "not-an-enum"])
def test_unknown_or_invalid_config_refused(target, name, value):
    client = client_for(target, INCREMENTAL)
    client.require(DESCRIBE)
    topic = new_topic(client, target)
    clause = "kafka.configs.unknown-config"
    expect(clause, client.incremental(topic, [(name, SET, value)], clause), errors.INVALID_CONFIG)
    client.barrier(topic)
    entries = client.topic_values(topic, clause)
    if name in entries and entries[name]["Value"] == value:
        raise Divergence(C[clause], f"{name} unchanged", f"{name}={value}")


@case("kafka.configs.read-only")
def test_static_broker_config_refused(target):
    client = client_for(target, INCREMENTAL)
    code = client.incremental(client.node_id(), [("broker.id", SET, "7")], "kafka.configs.read-only",
                              validate_only=True, kind=BROKER)
    expect("kafka.configs.read-only", code, errors.INVALID_REQUEST, errors.INVALID_CONFIG,
           errors.POLICY_VIOLATION)


@case("kafka.configs.honoured")
def test_max_message_bytes_override_enforced(target):
    client = client_for(target, INCREMENTAL)
    client.require(DESCRIBE)
    topic = new_topic(client, target)
    clause = "kafka.configs.honoured"
    with target.precondition(f"max.message.bytes=200 set on {topic}"):
        client.set_config(topic, "max.message.bytes", "200")
    small = records.build_batch([b"x"], keys=[b"k"], base_timestamp=RECORD_TIME_MS)
    large = records.build_batch([b"x" * 400], keys=[b"k"], base_timestamp=RECORD_TIME_MS)
    expect_produced(client.produce(topic, small, clause_id=clause), clause)
    expect_produced(client.produce(topic, large, clause_id=clause), clause, errors.MESSAGE_TOO_LARGE)
