"""A stateful model of one partition: produce, fetch, fetch offsets and stream fetch, checked step by step."""

import bisect
import struct

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from wirecheck.protocols.fluvio import errors, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.strategies.fluvio import batches
from wirecheck.suites.fluvio.client import C, Fluvio, new_topic

case = pytest.mark.case


def _mismatch_clause(got: list[bytes], wanted: list[bytes], clause_id: str) -> str:
    """The clause a difference between served and stored batches breaks: with the same batches served (base
    offsets), a batch whose bytes differ breaks what it carries (a schema id, compression); otherwise
    ``clause_id``, the serving request's own."""
    if [b[:8] for b in got] != [b[:8] for b in wanted]:
        return clause_id
    for served, stored in zip(got, wanted):
        if served != stored:
            attributes = struct.unpack_from(">h", stored, records.ATTRIBUTES_OFFSET)[0]
            if attributes & records.SCHEMA_ID_BIT:
                return "fluvio.produce.schema-id"
            if attributes & records.COMPRESSION_MASK:
                return "fluvio.produce.compression"
    return clause_id


class PartitionModel(RuleBasedStateMachine):
    """Each example owns a fresh topic (or starts from the log end of a provisioned one)."""

    target = None  # set by the test before the machine runs

    def __init__(self):
        super().__init__()
        self.target.transcript.clear()
        self.client, self.topic = new_topic(self.target, stem="model")
        self.start = self.leo = self.client.log_end(self.topic)
        self.bases: list[int] = []
        self.stored: list[bytes] = []

    def _expected_from(self, offset: int) -> list[bytes]:
        index = max(0, bisect.bisect_right(self.bases, offset) - 1)
        return self.stored[index:]

    @rule(batch=batches(codecs=(records.NONE, records.GZIP, records.ZSTD)))
    def produce(self, batch):
        base = self.client.produce_ok(self.topic, 0, batch)  # judged against the log end by the client itself
        self.bases.append(base)
        self.stored.append(records.as_stored(batch, base))
        self.leo += records.offsets_taken(batch)

    @rule(data=st.data())
    def fetch(self, data):
        # drawn relative to the start: a shared topic's log end grows between examples, and a strategy whose
        # bounds move between runs of one example is flaky for Hypothesis
        offset = self.start + data.draw(st.integers(0, self.leo - self.start + 1), label="offset from start")
        # beyond the end the answer carries Other(String): if it does not decode, the error's payload is at fault
        entry = self.client.fetch(self.topic, 0, offset,
                                  decode_clause="fluvio.errors.encoding" if offset > self.leo else None)
        if offset > self.leo:
            if entry["error_code"].code != errors.OTHER:
                raise Divergence(C["fluvio.fetch.beyond-end"], "Other (2)", str(entry["error_code"]))
            return
        got = records.split_batches(entry["records"])
        wanted = self._expected_from(offset) if offset < self.leo else []
        if entry["error_code"].code != 0 or got != wanted:
            clause = "fluvio.fetch.at-end" if offset == self.leo else "fluvio.fetch.stored-batches"
            if entry["error_code"].code == 0:
                clause = _mismatch_clause(got, wanted, clause)
            raise Divergence(C[clause], f"{len(wanted)} stored batches from offset {offset}",
                             f"{entry['error_code']}, {len(got)} batches")

    @rule(data=st.data())
    def stream(self, data):
        if self.leo == self.start:
            return
        offset = self.start + data.draw(st.integers(0, self.leo - self.start - 1), label="offset from start")
        reader = Fluvio(self.target)
        try:
            corr, version = reader.stream_fetch(self.topic, 0, offset)
            answer = reader.stream_answer(corr, version, "fluvio.stream.records")
            got = records.split_batches(answer["partition"]["records"])
            wanted = self._expected_from(offset)
            if got != wanted:
                raise Divergence(C[_mismatch_clause(got, wanted, "fluvio.stream.records")],
                                 f"the stored batches from offset {offset}", f"{len(got)} batches")
        finally:
            reader.close()

    @invariant()
    def offsets_match(self):
        entry = self.client.fetch_offsets(self.topic, [0])[0]
        if entry["last_stable_offset"] != self.leo:
            raise Divergence(C["fluvio.offsets.values"], f"last_stable_offset {self.leo}",
                             str(entry["last_stable_offset"]))

    def teardown(self):
        self.client.close()


@case("fluvio.produce.offsets")
def test_stateful_partition_model(target, fuzz):
    from hypothesis import settings

    PartitionModel.target = target
    run_state_machine_as_test(PartitionModel, settings=settings(max_examples=max(5, fuzz.examples // 2),
                                                                 stateful_step_count=15))
