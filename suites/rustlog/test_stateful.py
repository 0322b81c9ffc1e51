"""A stateful model of topics, offsets and group commits, checked against the target step by step."""

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.rustlog.client import C, RustLog, b64, short

case = pytest.mark.case


class RustLogModel(RuleBasedStateMachine):
    """Each example owns fresh topics (unique names), so examples stay independent on a live server."""

    target = None  # set by the test before the machine runs

    def __init__(self):
        super().__init__()
        self.target.transcript.clear()
        self.client = RustLog(self.target)
        self.logs: dict[tuple[str, int], list[bytes]] = {}
        self.commits: dict[tuple[str, str, int], int] = {}
        self.topics: dict[str, int] = {}

    @initialize(partitions=st.integers(1, 3))
    def create_first_topic(self, partitions):
        self.create_topic(partitions)

    @rule(partitions=st.integers(1, 3))
    @precondition(lambda self: len(self.topics) < 3)
    def create_topic(self, partitions):
        topic = self.target.unique("sm")
        with self.target.precondition(f"topic {topic} created with {partitions} partition(s)"):
            self.client.create_topic(topic, partitions)
        self.topics[topic] = partitions
        for p in range(partitions):
            self.logs[(topic, p)] = []

    def _pick(self, data):
        # Creation order, not name order: names differ between replays of one example, the order must not.
        topic = data.draw(st.sampled_from(list(self.topics)), label="topic")
        return topic, data.draw(st.integers(0, self.topics[topic] - 1), label="partition")

    @rule(data=st.data(), records=st.lists(st.binary(min_size=0, max_size=40), min_size=1, max_size=6))
    def produce(self, data, records):
        topic, partition = self._pick(data)
        log = self.logs[(topic, partition)]
        if b"" in records:
            # Notes D3 leave a zero-length record open: Error 400 is permitted, and then nothing is appended
            # (the model stays as it is; later fetches check that).
            answer = self.client.call({"type": "Produce", "topic": topic, "partition": partition,
                                       "records": [b64(r) for r in records]}, "rustlog.produce.offsets")
            if answer["type"] == "Error" and answer["code"] == 400:
                return
            if answer["type"] != "ProduceResponse" or answer["record_count"] != len(records):
                raise Divergence(C["rustlog.produce.offsets"], f"ProduceResponse record_count {len(records)}",
                                 short(answer))
        else:
            answer = self.client.produce(topic, partition, records)
        if answer["base_offset"] != len(log):
            raise Divergence(C["rustlog.produce.offsets"], f"base_offset {len(log)}", short(answer))
        log.extend(records)

    @rule(data=st.data(), max_bytes=st.integers(1, 400))
    def fetch(self, data, max_bytes):
        topic, partition = self._pick(data)
        log = self.logs[(topic, partition)]
        offset = data.draw(st.integers(0, len(log) + 2), label="offset")
        if offset > len(log):  # beyond the high watermark: Error 416 is permitted too (D7, judged by its own case)
            answer = self.client.call({"type": "Fetch", "group_id": "", "topic": topic, "partition": partition,
                                       "offset": offset, "max_bytes": max_bytes}, "rustlog.fetch.beyond-hw")
            if answer["type"] == "Error" and answer["code"] == 416:
                return
        answer = self.client.fetch(topic, partition, offset, max_bytes)
        got = self.client.payloads(answer)
        if got != log[offset : offset + len(got)]:
            raise Divergence(C["rustlog.fetch.records"], f"the model's records from offset {offset}", short(answer))
        if offset < len(log) and not got:
            raise Divergence(C["rustlog.fetch.max-bytes"], "at least one record", "none")
        if offset >= len(log) and answer["next_offset"] not in (offset, len(log)):
            raise Divergence(C["rustlog.fetch.at-hw"], f"next_offset {offset}", str(answer["next_offset"]))

    @rule(data=st.data(), group=st.sampled_from(["a", "b"]), offset=st.integers(1, 20))
    def commit(self, data, group, offset):
        topic, partition = self._pick(data)
        offset += 100 * partition + 1000 * (group == "b")  # a committed offset names its group and partition
        if self.client.commit(group, topic, partition, offset) is not True:
            raise Divergence(C["rustlog.commit.round-trip"], "success true", "success false")
        self.commits[(group, topic, partition)] = offset

    @rule(data=st.data(), group=st.sampled_from(["a", "b"]))
    def offset_fetch(self, data, group):
        topic, partition = self._pick(data)
        got = self.client.committed(group, topic, partition)
        wanted = self.commits.get((group, topic, partition))
        if got != wanted:
            # Whose commit came back says which clause broke: another group's there, group isolation; none where
            # nothing was committed, no-commit-null; else (ours, elsewhere or older) the round trip.
            whose = {(g, p) for (g, t, p), offset in self.commits.items() if t == topic and offset == got}
            if any(g != group and p == partition for g, p in whose):
                clause = "rustlog.commit.group-isolation"
            elif wanted is None and not whose:
                clause = "rustlog.commit.no-commit-null"
            else:
                clause = "rustlog.commit.round-trip"
            raise Divergence(C[clause], repr(wanted), repr(got))

    @invariant()
    def high_watermarks_match(self):
        for topic, partitions in self.topics.items():
            hws = [p["high_watermark"] for p in self.client.describe(topic)["partitions"]]
            wanted = [len(self.logs[(topic, p)]) for p in range(partitions)]
            if hws != wanted:
                raise Divergence(C["rustlog.admin.describe-topic"], f"high watermarks {wanted}", str(hws))

    def teardown(self):
        self.client.close()


@case("rustlog.commit.round-trip")
def test_stateful_model(target, fuzz):
    from hypothesis import settings

    RustLogModel.target = target
    run_state_machine_as_test(RustLogModel, settings=settings(max_examples=max(5, fuzz.examples // 2),
                                                               stateful_step_count=25))
