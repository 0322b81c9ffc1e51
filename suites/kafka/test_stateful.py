"""A stateful model of Kafka partitions and group commits, checked against the target step by step.

The model keeps, per partition, the records produced (offset -> value) and, per group, the committed offsets.
Every Fetch, ListOffsets and OffsetFetch answer is compared with it. Each example owns fresh topics and groups
(unique names), so examples stay independent on a live server.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from wirecheck.protocols import compression
from wirecheck.protocols.kafka import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.kafka.client import C, DataPath, expect_produced, short, RECORD_TIME_MS
from wirecheck.suites.kafka.topics_groups import commit, fetch_committed, find_coordinator

case = pytest.mark.case
VALUES = st.lists(st.integers(0, 64).flatmap(lambda n: st.binary(min_size=n, max_size=n)), min_size=1, max_size=5)


class KafkaModel(RuleBasedStateMachine):
    target = None  # set by the test before the machine runs

    def __init__(self):
        super().__init__()
        self.target.transcript.clear()
        self.client = DataPath(self.target)
        self.topic = self.target.unique("sm")
        self.groups = [self.target.unique("ga"), self.target.unique("gb")]
        self.log: list[bytes] = []
        self.commits: dict[str, int] = {}

    @initialize()
    def create_topic(self):
        self.client.create_topic(self.topic)  # a fresh topic: the model's offsets start at 0
        with self.target.precondition("the group coordinators found"):
            for group in self.groups:
                find_coordinator(self.client, group)

    @rule(values=VALUES, codec=st.sampled_from(sorted(compression.NAMES)))
    def produce(self, values, codec):
        batch = records.build_batch(values, compression_codec=codec, base_timestamp=RECORD_TIME_MS)
        answer = expect_produced(self.client.produce(self.topic, batch), "kafka.produce.base-offset")
        if answer["BaseOffset"] != len(self.log):
            raise Divergence(C["kafka.produce.base-offset"], f"base offset {len(self.log)}",
                             f"base offset {answer['BaseOffset']}")
        self.log.extend(values)

    @rule(data=st.data())
    def fetch(self, data):
        offset = data.draw(st.integers(0, len(self.log)), label="offset")
        # at the end of the log nothing is to come: no need to wait as a client would
        partition = self.client.fetch(self.topic, offset, wait_ms=0 if offset == len(self.log) else 500)
        if partition["ErrorCode"] != errors.NONE:
            raise Divergence(C["kafka.fetch.records"], "error 0", f"error {partition['ErrorCode']}")
        batches = records.decode_batches(partition["Records"] or b"", allow_partial_tail=True)
        got = [(b.base_offset + r.offset_delta, r.value) for b in batches for r in b.records]
        got = [item for item in got if item[0] >= offset]
        wanted = list(enumerate(self.log))[offset:]
        if got != wanted[: len(got)] or (wanted and not got):
            raise Divergence(C["kafka.fetch.records"], f"the model's records from offset {offset}",
                             short(got))
        if partition["HighWatermark"] != len(self.log):
            raise Divergence(C["kafka.fetch.high-watermark"], f"HighWatermark {len(self.log)}",
                             f"{partition['HighWatermark']}")

    @rule(group=st.sampled_from([0, 1]), data=st.data())
    def commit_offset(self, group, data):
        offset = data.draw(st.integers(0, len(self.log)), label="offset")
        code = commit(self.client, self.groups[group], self.topic, offset, "kafka.commit.round-trip")
        if code != errors.NONE:
            raise Divergence(C["kafka.commit.round-trip"], "error 0", f"error {code}")
        self.commits[self.groups[group]] = offset

    @rule(group=st.sampled_from([0, 1]))
    def fetch_commit(self, group):
        name = self.groups[group]
        got = fetch_committed(self.client, name, self.topic, "kafka.commit.round-trip")
        wanted = self.commits.get(name, -1)
        if got != wanted:
            clause = "kafka.commit.no-offset" if wanted == -1 else "kafka.commit.round-trip"
            raise Divergence(C[clause], f"committed offset {wanted}", f"{got}")

    @invariant()
    def log_end_matches(self):
        latest = self.client.list_offset(self.topic, -1)
        if latest["Offset"] != len(self.log):
            raise Divergence(C["kafka.list-offsets.earliest-latest"], f"latest offset {len(self.log)}",
                             f"{latest['Offset']}")

    def teardown(self):
        self.client.session.close()


@case("kafka.fetch.records")
def test_stateful_model(target, fuzz):
    KafkaModel.target = target
    run_state_machine_as_test(KafkaModel, settings=settings(max_examples=max(5, fuzz.examples // 2),
                                                             stateful_step_count=20))
