"""A stateful model of producers and one consumer group of two consumers, checked step by step (notes §5.4).

Per reader (topic, token, range index, version) the model keeps who was served last, where that ended, and the
offsets a poll of another consumer may start from: the committed offset, plus the end of what was served when an
implicit commit may have happened unseen (the owner polled again and got nothing from that reader). Each poll item
must then continue exactly where the same consumer stopped (offsets-continuous), or start at a permitted committed
offset after a switch (at-least-once) or a manual commit (commit); records seen twice at one offset must be equal.
An audit consumer in a fresh group reads everything from offset 0: every reader continuous, every topic holding
exactly the produced messages, each key's messages in produce order.
"""

from dataclasses import dataclass, field

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from wirecheck.protocols.barco import wire
from wirecheck.suites.barco.client import (Producer, decode_binary, diverge, expect_records, expect_status, http,
                                            records_of, register_query)

case = pytest.mark.case
SLOTS = (0, 1)
KEYS = (b"", b"k1", b"k2")
ENDPOINTS = ("consumer", "consumer-h2c")  # the two consumers speak HTTP/1.1 and HTTP/2
AUDIT_POLLS = 60


@dataclass
class ReaderModel:
    served_to: str | None = None
    served_end: int = 0
    starts: set[int] = field(default_factory=lambda: {0})  # where a poll of another consumer may start
    committed_manually: bool = False
    seen: dict[int, bytes] = field(default_factory=dict)  # offset -> record body


class ConsumerGroupModel(RuleBasedStateMachine):
    target = None  # set by the test before the machine runs

    def __init__(self):
        super().__init__()
        self.target.transcript.clear()
        self.producer = Producer(self.target)
        self.topics = [self.target.unique("st") for _ in range(2)]
        self.group = self.target.unique("sg")
        self.generation = [0, 0]
        self.registered = [False, False]
        self.sessions = [http(self.target, endpoint) for endpoint in ENDPOINTS]
        self.produced: dict[str, list[tuple[bytes, bytes]]] = {t: [] for t in self.topics}  # (key, message)
        self.readers: dict[tuple, ReaderModel] = {}

    def consumer_id(self, slot: int) -> str:
        return f"{self.group}-c{slot}-{self.generation[slot]}"

    def request(self, slot: int, action: str, query: str = ""):
        return self.sessions[slot].request("POST", f"/v1/consumer/{action}?consumerId={self.consumer_id(slot)}"
                                                   + query)

    # -- rules ----------------------------------------------------------------------------------------------------

    @initialize(batches=st.lists(st.lists(st.binary(max_size=24), min_size=1, max_size=3), min_size=2, max_size=3))
    def produce_chunks(self, batches):
        """Several chunks in one reader (one key, one topic) before anything else, so every example can see an
        offset move from one chunk to the next."""
        for messages in batches:
            self.produce(0, KEYS[1], messages)

    @rule(topic=st.sampled_from((0, 1)), key=st.sampled_from(KEYS),
          messages=st.lists(st.binary(max_size=24), min_size=1, max_size=3))
    def produce(self, topic, key, messages):
        name = self.topics[topic]
        self.producer.produce(name, messages, key=key)
        self.produced[name] += [(key, m) for m in messages]

    @rule(slot=st.sampled_from(SLOTS))
    def register(self, slot):
        query = register_query(self.consumer_id(slot), self.topics, self.group, earliest=True)
        expect_status(self.sessions[slot].request("PUT", query), (200,),
                      "barco.consumer.register-idempotent" if self.registered[slot] else "barco.consumer.register")
        self.registered[slot] = True

    @rule(slot=st.sampled_from(SLOTS))
    def poll(self, slot):
        reply = self.request(slot, "poll")
        if not self.registered[slot]:
            expect_status(reply, (409,), "barco.consumer.unregistered")
            return
        expect_status(reply, (200, 204), "barco.consumer.poll-binary")
        me = self.consumer_id(slot)
        served = set()
        for item in decode_binary(reply) if reply.status == 200 else []:
            key = (item.topic, item.token, item.range_index, item.version)
            self.check_item(me, self.readers.setdefault(key, ReaderModel()), item)
            served.add(key)
        for key, reader in self.readers.items():
            if reader.served_to == me and key not in served:
                reader.starts.add(reader.served_end)  # nothing new there: an implicit commit may have happened

    def check_item(self, me: str, reader: ReaderModel, item: wire.PollItem) -> None:
        bodies = [body for _, body in records_of(item)]
        if reader.served_to == me:
            if item.offset != reader.served_end:
                raise diverge("barco.consumer.offsets-continuous",
                              f"offset {reader.served_end} (the same consumer continues)", f"offset {item.offset}")
        elif item.offset not in reader.starts:
            clause = "barco.consumer.commit" if reader.committed_manually else (
                "barco.consumer.at-least-once" if reader.served_to else "barco.consumer.offsets-continuous")
            raise diverge(clause, f"offset in {sorted(reader.starts)} (the committed position)",
                          f"offset {item.offset}")
        for offset, body in enumerate(bodies, item.offset):
            if reader.seen.setdefault(offset, body) != body:
                raise diverge("barco.consumer.records", f"offset {offset}: {reader.seen[offset][:40]!r} again",
                              body[:40])
        reader.served_to, reader.served_end = me, item.offset + len(bodies)
        reader.starts, reader.committed_manually = {item.offset}, False

    @rule(slot=st.sampled_from(SLOTS))
    def commit(self, slot):
        reply = self.request(slot, "commit")
        if not self.registered[slot]:
            expect_status(reply, (409,), "barco.consumer.unregistered")
            return
        # 409: another consumer of the group is reading a range assigned here (notes §5.1)
        expect_status(reply, (204, 409), "barco.consumer.commit")
        self.committed(slot, certain=reply.status == 204)

    def committed(self, slot: int, certain: bool) -> None:
        for reader in self.readers.values():
            if reader.served_to == self.consumer_id(slot):
                reader.starts = {reader.served_end} if certain else reader.starts | {reader.served_end}
                reader.committed_manually = certain
                reader.served_to = None if certain else reader.served_to

    @rule(slot=st.sampled_from(SLOTS), commit=st.booleans())
    def goodbye(self, slot, commit):
        reply = self.request(slot, "goodbye", "" if commit else "&commit=false")
        if not self.registered[slot]:
            expect_status(reply, (409,), "barco.consumer.unregistered")
            return
        expect_status(reply, (200,), "barco.consumer.goodbye")
        if commit:
            self.committed(slot, certain=True)
        self.registered[slot] = False
        self.generation[slot] += 1  # the slot comes back as a different consumer

    @rule()
    def audit(self):
        """A consumer of a fresh group reads every reader from offset 0 to its end."""
        with http(self.target, "consumer") as session:
            self.audit_with(session)

    def audit_with(self, session):
        auditor = self.target.unique("audit")
        reply = session.request("PUT", register_query(auditor, self.topics, self.target.unique("ag"), earliest=True))
        expect_status(reply, (200,), "barco.consumer.register")
        logs: dict[tuple, list[bytes]] = {}
        wanted = sum(len(v) for v in self.produced.values())
        for _ in range(AUDIT_POLLS):
            if sum(len(v) for v in logs.values()) >= wanted:
                break
            reply = session.request("POST", f"/v1/consumer/poll?consumerId={auditor}")
            expect_status(reply, (200, 204), "barco.consumer.poll-binary")
            for item in decode_binary(reply) if reply.status == 200 else []:
                log = logs.setdefault((item.topic, item.token, item.range_index, item.version), [])
                if item.offset != len(log):
                    raise diverge("barco.consumer.offsets-continuous", f"offset {len(log)}", f"offset {item.offset}")
                log += [body for _, body in records_of(item)]
        expect_status(session.request("POST", f"/v1/consumer/goodbye?consumerId={auditor}"), (200,),
                      "barco.consumer.goodbye")
        for topic, produced in self.produced.items():
            readers = [log for key, log in logs.items() if key[0] == topic.encode()]
            # readers interleave: compared as multisets
            expect_records(sorted(body for log in readers for body in log), sorted(m for _, m in produced),
                           "barco.consumer.records", f"the {len(produced)} records produced to {topic}")
            for key in KEYS[1:]:  # one key, one reader: its messages in produce order
                order = [m for k, m in produced if k == key]
                if order and not any(_in_order(order, log) for log in readers):
                    raise diverge("barco.producer.partition-key", f"key {key!r}: {order} in order in one reader",
                                  readers)

    def teardown(self):
        for slot in SLOTS:
            if self.registered[slot]:
                self.request(slot, "goodbye")
        for session in self.sessions:
            session.close()
        self.producer.close()  # a model holds three connections at most, so examples never pile them up


def _in_order(wanted: list[bytes], log: list[bytes]) -> bool:
    """``wanted`` is a subsequence of ``log``."""
    rest = iter(log)
    return all(any(body == w for body in rest) for w in wanted)


@case("barco.consumer.offsets-continuous")
def test_stateful_consumer_group_model(target, fuzz):
    from hypothesis import settings

    ConsumerGroupModel.target = target
    run_state_machine_as_test(ConsumerGroupModel, settings=settings(max_examples=max(5, fuzz.examples // 2),
                                                                     stateful_step_count=20, deadline=None))
