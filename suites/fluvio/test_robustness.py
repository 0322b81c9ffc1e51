"""Hostile input: bulk structure-aware mutants and a property over hostile frames, each followed by the
plugin's liveness probe (notes §7, §12)."""

import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirecheck.protocols.fluvio import messages, records
from wirecheck.protocols.verdicts import Divergence
from wirecheck.strategies.binary import overlong_uvarint
from wirecheck.strategies.fluvio import BulkMutator, FluvioFuzz
from wirecheck.suites.fluvio.client import C, Fluvio, new_topic, provisioned_topics
from wirecheck.targets.fuzzing import fuzz_case, judge_example

case = pytest.mark.case


@case("fluvio.robustness.no-hang", hostile=True)
def test_bulk_mutants(target, fuzz):
    """Seeded mutants of valid Produce requests; each reaction judged against what the spec permits."""
    _, topic = new_topic(target, stem="fuzz")
    adapter = FluvioFuzz(topic, streams=_stream_topic(target) if fuzz.guided else None)
    fuzz_case(target, adapter, fuzz.rng("fluvio-bulk"), fuzz.mutants)


def _stream_topic(target) -> str | None:
    """An empty topic of this case's own for a guided run's StreamFetch steps (a stream there waits for data);
    None where topics are provisioned: a shared one may receive records, and its stream would then answer."""
    if provisioned_topics(target):
        return None
    return new_topic(target, stem="fuzzstream")[1]


@case("fluvio.robustness.no-hang", hostile=True)
@given(seed=st.integers(0, 2**32 - 1), operator=st.sampled_from(BulkMutator.OPERATORS))
def test_hostile_frames_property(target, seed, operator):
    """Property: every hostile frame gets a permitted reaction; a failure shrinks to one operator and seed."""
    target.transcript.clear()
    client, topic = new_topic(target, stem="hostile")
    client.close()
    session = target.connect()
    judge_example(target, session, FluvioFuzz(topic), BulkMutator(random.Random(seed), topic).mutant(operator))


@case("fluvio.robustness.no-hang", hostile=True)
def test_padded_record_length_varint_gets_a_reaction(target):
    """A record length varint padded with continuation bytes (non-canonical; the SPU keeps records as bytes, §4.2):
    one hostile shape judged in every run, whatever the fuzz budget draws. An answer or a close, never silence."""
    client, topic = new_topic(target, stem="padded")
    record = records.encode_record(records.Record(b"padded"))  # its length fits the varint's first byte
    raw = struct.pack(">i", 1) + overlong_uvarint(record[0], 3) + record[1:]
    batch = records.encode_batch(records.Batch(raw_records=raw, last_offset_delta=0))
    version = client.version(messages.PRODUCE)
    corr = client.send(messages.PRODUCE, version, Fluvio.produce_body([(topic, [(0, batch)])]))
    reply = client.session.recv()
    if reply.is_frame:  # what the answer says is other clauses' (records-opaque); that it decodes, the frame's
        client.decode(reply, messages.PRODUCE, version, corr, "fluvio.robustness.no-hang")
    elif not reply.ended:
        raise Divergence(C["fluvio.robustness.no-hang"], "an answer or a close", f"{reply}: the connection stayed "
                         "open")
