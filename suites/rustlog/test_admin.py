"""The admin plane: topics, partitions, describe, metrics, ping (seed §Admin Control Plane, §Message Types)."""

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_PARTITIONS, MAX_TOPIC_NAME
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.rustlog.client import C, RustLog, new_topic, short

case = pytest.mark.case


@case("rustlog.admin.create")
def test_create_topic(target):
    client, topic = new_topic(target, partitions=3)
    partitions = [p["partition"] for p in client.describe(topic)["partitions"]]
    if partitions != [0, 1, 2]:
        raise Divergence(C["rustlog.admin.create"], "partitions [0, 1, 2]", str(partitions))


@case("rustlog.admin.create-duplicate")
def test_duplicate_create_does_not_succeed(target):
    client, topic = new_topic(target, partitions=2)
    answer = client.call({"type": "CreateTopic", "topic": topic, "partition_count": 5},
                         "rustlog.admin.create-duplicate")
    if answer["type"] == "CreateTopicResponse" and answer["success"] is not False:
        raise Divergence(C["rustlog.admin.create-duplicate"], "an Error or success false", short(answer))
    if answer["type"] not in ("CreateTopicResponse", "Error"):
        raise Divergence(C["rustlog.admin.create-duplicate"], "an Error or success false", short(answer))
    count = len(client.describe(topic)["partitions"])
    if count != 2:
        raise Divergence(C["rustlog.admin.create-duplicate"], "the topic keeps 2 partitions", f"{count} partitions")


def _name(target, length: int) -> str:
    stem = target.unique("n")
    return (stem + "x" * length)[:length] if length >= len(stem) else "abcdefghijklmnopqrstuvwxyz"[:length]


@case("rustlog.admin.topic-name")
@pytest.mark.parametrize("length", [1, MAX_TOPIC_NAME], ids=["1-char", "255-chars"])
def test_topic_name_boundaries_accepted(target, length):
    client = RustLog(target)
    name = _name(target, length)
    answer = client.call({"type": "CreateTopic", "topic": name, "partition_count": 1}, "rustlog.admin.topic-name")
    # A 1-character name may already exist on a shared target: an "exists" answer still proves it was valid.
    if answer["type"] == "Error" and not (length == 1 and name in _topics(client)):
        raise Divergence(C["rustlog.admin.topic-name"], f"a {length}-character name accepted", short(answer))


@case("rustlog.admin.topic-name")
@pytest.mark.parametrize("name", ["", "x" * (MAX_TOPIC_NAME + 1), "a b", "a.b", "a/b", "a\tb", "\u00e9t\u00e9",
                                  "a\u0000b"], ids=["0-chars", "256-chars", "space", "dot", "slash", "tab",
                                                    "non-ascii", "nul"])
def test_invalid_topic_names_rejected(target, name):
    client = RustLog(target)
    client.error({"type": "CreateTopic", "topic": name, "partition_count": 1}, 400, "rustlog.admin.topic-name")
    if name in _topics(client):
        raise Divergence(C["rustlog.admin.topic-name"], "the invalid topic not created", "listed by ListTopics")


@case("rustlog.admin.partition-count")
@pytest.mark.parametrize("count,valid", [(0, False), (1, True), (MAX_PARTITIONS, True), (MAX_PARTITIONS + 1, False)],
                         ids=["0", "1", "1000", "1001"])
def test_partition_count_boundaries(target, count, valid):
    client = RustLog(target)
    request = {"type": "CreateTopic", "topic": target.unique("pc"), "partition_count": count}
    if valid:
        answer = client.ok(request, "rustlog.admin.partition-count")
        if answer["success"] is not True:
            raise Divergence(C["rustlog.admin.partition-count"], f"success, {count} partitions", short(answer))
        if answer["partitions_created"] != count:  # accepted: what the answer reports is admin.create's
            raise Divergence(C["rustlog.admin.create"], f"partitions_created {count}", short(answer))
    else:
        client.error(request, 400, "rustlog.admin.partition-count")


def _topics(client: RustLog) -> dict[str, int]:
    answer = client.ok({"type": "ListTopics"}, "rustlog.admin.list")
    return {t["name"]: t["partition_count"] for t in answer["topics"]}


@case("rustlog.admin.list")
def test_list_topics_includes_created_topics(target):
    client, a = new_topic(target, partitions=4)
    _, b = new_topic(target, client, partitions=1)
    topics = _topics(client)
    if topics.get(a) != 4 or topics.get(b) != 1:
        raise Divergence(C["rustlog.admin.list"], f"{a}: 4 and {b}: 1", f"{a}: {topics.get(a)}, {b}: {topics.get(b)}")


@case("rustlog.admin.list-sorted")
def test_list_topics_sorted(target):
    client, _ = new_topic(target)
    names = [t["name"] for t in client.ok({"type": "ListTopics"}, "rustlog.admin.list")["topics"]]
    if names != sorted(names):
        raise Divergence(C["rustlog.admin.list-sorted"], "names in sorted order", str(names[:10]))


@case("rustlog.admin.describe-topic")
def test_describe_topic(target):
    client, topic = new_topic(target, partitions=3)
    client.produce(topic, 2, [b"a", b"b"])
    answer = client.describe(topic)
    parts = answer["partitions"]
    if answer["topic"] != topic or [p["partition"] for p in parts] != [0, 1, 2]:
        raise Divergence(C["rustlog.admin.describe-topic"], f"{topic} with partitions [0, 1, 2]", short(answer))
    for p in parts:
        if not (p["log_start_offset"] <= p["high_watermark"] and p["segment_count"] >= 1):
            raise Divergence(C["rustlog.admin.describe-topic"], "log_start <= high_watermark, segment_count >= 1",
                             short(p))
    if [p["high_watermark"] for p in parts] != [0, 0, 2]:
        raise Divergence(C["rustlog.admin.describe-topic"], "high watermarks [0, 0, 2]",
                         str([p["high_watermark"] for p in parts]))


@case("rustlog.admin.describe-unknown")
def test_describe_unknown_topic_is_404(target):
    RustLog(target).error({"type": "DescribeTopic", "topic": target.unique("missing")}, 404,
                          "rustlog.admin.describe-unknown")


@case("rustlog.admin.describe-partition")
def test_describe_partition(target):
    client, topic = new_topic(target, partitions=2)
    client.produce(topic, 1, [b"a"])
    answer = client.ok({"type": "DescribePartition", "topic": topic, "partition": 1},
                       "rustlog.admin.describe-partition")
    if (answer["topic"], answer["partition"], answer["high_watermark"]) != (topic, 1, 1):
        raise Divergence(C["rustlog.admin.describe-partition"], f"{topic} partition 1, high_watermark 1",
                         short(answer))
    client.error({"type": "DescribePartition", "topic": topic, "partition": 2}, 405,
                 "rustlog.admin.describe-partition")
    client.error({"type": "DescribePartition", "topic": target.unique("missing"), "partition": 0}, 404,
                 "rustlog.admin.describe-partition")


@case("rustlog.admin.metrics")
def test_metrics_count_produced_records(target):
    client, topic = new_topic(target)

    def produced() -> int:
        metrics = client.ok({"type": "MetricsFetch"}, "rustlog.admin.metrics")["metrics"]
        value = metrics.get("messages_produced_total")
        if not isinstance(value, int) or isinstance(value, bool):
            raise Divergence(C["rustlog.admin.metrics"], "an integer messages_produced_total", short(metrics))
        return value

    before = produced()
    client.produce(topic, 0, [b"m"] * 7)
    after = produced()
    if after - before < 7:
        raise Divergence(C["rustlog.admin.metrics"], f"messages_produced_total grows by >= 7 (from {before})",
                         str(after))


@case("rustlog.ping.pong")
def test_ping(target):
    answer = RustLog(target).call({"type": "Ping"}, "rustlog.ping.pong")
    if answer != {"type": "Pong"}:
        raise Divergence(C["rustlog.ping.pong"], '{"type":"Pong"}', short(answer))
