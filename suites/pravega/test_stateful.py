"""A stateful model of segments, writers and a table, checked step by step: appends acknowledged with strictly
increasing event numbers and the right lengths, reads returning exactly the appended events, seals refusing
appends, reconnecting writers resuming at their last acknowledged number, table keys with bumped versions."""

import uuid

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.strategies.pravega import event_payloads
from wirecheck.suites.pravega.client import MIN, Pravega, new_table, segment_name

case = pytest.mark.case


class SegmentStoreModel(RuleBasedStateMachine):
    target = None  # set by the test before the machine runs
    segments = Bundle("segments")

    def __init__(self):
        super().__init__()
        self.target.transcript.clear()
        self.client = Pravega(self.target)
        self.events: dict[str, list[bytes]] = {}
        self.sealed: set[str] = set()
        self.writers: dict[str, tuple[uuid.UUID, int]] = {}  # segment -> (writer, last acked event number)
        self.table_client, self.table = new_table(self.target, "model")
        self.keys: dict[bytes, tuple[int, bytes]] = {}

    def _length(self, name: str) -> int:
        return sum(8 + len(e) for e in self.events[name])

    @rule(target=segments)
    def create(self):
        name = segment_name(self.target, "model")
        self.client.create(name)
        self.events[name] = []
        return name

    @rule(name=segments, batch=st.lists(event_payloads(32), min_size=1, max_size=4), gap=st.integers(1, 3))
    def append(self, name, batch, gap):
        if name in self.sealed:
            writer = self.writers.get(name, (uuid.uuid4(), MIN))[0]
            client = Pravega(self.target)
            client.setup_append(name, writer)
            rid = client.send_events(writer, batch, 10**6)
            client.expect("pravega.append.sealed", rid, ("SegmentIsSealed",))
            client.close()
            return
        writer, last = self.writers.get(name, (None, MIN))
        if writer is None:
            writer = self.client.new_writer(name)
        number = max(last, 0) + gap
        self.events[name] += batch
        self.client.append(writer, batch, number, previous=last, offset=self._length(name))
        self.writers[name] = (writer, number)

    @rule(name=segments)
    def reconnect_writer(self, name):
        if name not in self.writers:
            return
        writer, last = self.writers[name]
        other = Pravega(self.target)
        got = other.setup_append(name, writer, "pravega.append.resetup")
        other.close()
        if got != last:
            raise self.client.diverge("pravega.append.resetup", f"lastEventNumber {last}", str(got))
        self.client.setup_append(name, writer)  # this connection's view moves on too

    @rule(name=segments)
    def read_back(self, name):
        data = self.client.read_all(name)
        if cmd.split_events(data) != self.events[name]:
            raise self.client.diverge("pravega.append.stored-verbatim", f"{len(self.events[name])} events",
                                      data[:64].hex())

    @rule(name=segments)
    def seal(self, name):
        if name in self.sealed:
            self.client.call("SealSegment", "pravega.segment.seal", ("SegmentIsSealed",), segment=name)
            return
        self.client.seal(name)
        self.sealed.add(name)
        self.writers.pop(name, None)

    @rule(key=st.sampled_from([b"a", b"b", b"c"]), value=st.binary(max_size=16), conditional=st.booleans())
    def put(self, key, value, conditional):
        previous = self.keys.get(key, (cmd.NOT_EXISTS, b""))[0]
        new = self.table_client.put_key(self.table, key, value, previous if conditional else cmd.NO_VERSION,
                                        above=previous if key in self.keys else None)
        self.keys[key] = (new, value)

    @rule(key=st.sampled_from([b"a", b"b", b"c"]))
    def remove(self, key):
        self.table_client.removed(self.table, [(key, cmd.NO_VERSION)])
        self.keys.pop(key, None)

    @invariant()
    def lengths_and_keys_match(self):
        for name in self.events:
            info = self.client.info(name)
            if info["write_offset"] != self._length(name) or info["is_sealed"] != (name in self.sealed):
                raise self.client.diverge("pravega.segment.info", f"length {self._length(name)}",
                                          self.client._text(info))
        read = self.table_client.get(self.table, [b"a", b"b", b"c"])
        for key, (version, value) in read.items():
            wanted = self.keys.get(key, (cmd.NOT_EXISTS, b""))
            if (version, value) != wanted:
                raise self.client.diverge("pravega.table.read", f"{key!r}: {wanted}", str((version, value)))

    def teardown(self):
        self.client.close()
        self.table_client.close()


@case("pravega.append.ack")
def test_stateful_segment_store_model(target, fuzz):
    from hypothesis import settings

    SegmentStoreModel.target = target
    run_state_machine_as_test(SegmentStoreModel, settings=settings(max_examples=max(5, fuzz.examples // 2),
                                                                    stateful_step_count=15, deadline=None))
