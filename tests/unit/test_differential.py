"""The differential comparator: answers decoded with the layers, volatile fields ignored, the first difference on
a connection named by its field path and the clause that covers it, and recorded (not raised: the case's own
checks judge the target); --strict turns a recorded difference into DIVERGENT."""

from __future__ import annotations

import socket

import pytest

from wirecheck.protocols.clauses import Level
from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.spec import BY_CONTENT
from wirecheck.protocols.verdicts import Differs, Verdict
from wirecheck.reports.records import differential_totals
from wirecheck.targets.differential import (Comparator, MirroredSession, RequestQueue, Tally, flatten, own_entries,
                                            without_silent)
from wirecheck.targets.runner.run import RunOptions
from wirecheck.targets.runner.validate import UsageProblem, validate
from wirecheck.targets.runner.verdicts import classify
from wirecheck.targets.transport.outcome import Outcome, Reply

RUSTLOG = all_specs()["rustlog"]
COMPARE = Comparator(RUSTLOG, RUSTLOG.primary)


def fetched(next_offset: int, timestamp: int) -> Reply:
    return Reply(Outcome.FRAME, encode_frame({"type": "FetchResponse", "next_offset": next_offset,
                                              "records": [{"offset": 0, "timestamp": timestamp, "payload": "YQ=="}]}))


def test_json_values_flatten_to_field_paths():
    fields = flatten(RUSTLOG.primary.dissect(fetched(1, 5).frame, None))
    assert fields["FetchResponse.records[0].timestamp"] == 5 and fields["FetchResponse.records.count"] == 1


def test_volatile_fields_are_not_compared():
    assert COMPARE.difference(None, fetched(1, 1795485508319175), fetched(1, 1795485508319047)) is None


def test_the_first_difference_is_named_and_its_clause_found():
    path, ours, theirs = COMPARE.difference(None, fetched(2, 1), fetched(1, 1))
    assert (path, ours, theirs) == ("FetchResponse.next_offset", 2, 1)
    assert COMPARE.clause_for(path).id == "rustlog.fetch.next-offset"
    assert COMPARE.clause_for("Error.details").id == "rustlog.differential.same-answer"


def test_closed_and_reset_are_one_outcome_but_an_answer_is_another():
    closed, reset = Reply(Outcome.CLOSED), Reply(Outcome.RESET)
    assert COMPARE.difference(None, closed, reset) is None
    assert COMPARE.difference(None, fetched(1, 1), closed) == ("outcome", "an answer", "the connection ended")


def test_divergent_fails_the_run():
    """A difference is raised only under --strict (targets/runner/judging.checked): DIVERGENT fails, whatever the
    clause's level (the verdict table's outcome)."""
    should = Differs(RUSTLOG.catalogue["rustlog.differential.same-answer"], "Error.details", "x", "y")
    must = Differs(RUSTLOG.catalogue["rustlog.fetch.next-offset"], "FetchResponse.next_offset", "1", "2")
    assert should.clause.level is Level.SHOULD and must.clause.level is Level.MUST
    verdicts = {classify(d, "call", None, strict=s).verdict for d in (should, must) for s in (False, True)}
    assert verdicts == {Verdict.DIVERGENT} and Verdict.DIVERGENT.pytest_outcome(strict=True) == "failed"


def test_every_protocols_declarations_name_real_clauses_and_decoders():
    for spec in all_specs().values():
        assert f"{spec.name}.differential.same-answer" in spec.catalogue
        for pattern, clause_id in spec.field_clauses.items():
            assert clause_id in spec.catalogue, (spec.name, pattern, clause_id)
        comparator = Comparator(spec, spec.primary)
        assert all(callable(comparator.decoder(pattern.replace("*", "X"))) for pattern in spec.field_decoders)


class _Answering:
    """A session stand-in that answers every recv with the same reply."""

    def __init__(self, reply: Reply):
        self.reply, self.framing, self.sock, self.deadline = reply, RUSTLOG.primary.framing, None, 1.0
        self.endpoint = RUSTLOG.primary
        self.transcript = type("T", (), {"note": lambda self, text: None})()

    def send(self, data, decode=True):
        return True

    def recv(self, deadline=None):
        return self.reply


def test_the_first_difference_on_a_connection_is_recorded_and_comparing_stops():
    """A difference never interrupts the case: it is recorded with its clause, and later answers on the same
    connection (whose state may now differ) are not compared."""
    found = []
    session = MirroredSession(_Answering(fetched(2, 1)), _Answering(fetched(1, 1)), COMPARE, found.append)
    assert session.request(b"{}\n").frame == fetched(2, 1).frame
    assert session.request(b"{}\n").frame == fetched(2, 1).frame
    assert [(d.path, d.target, d.reference, d.clause.id) for d in found] == \
        [("FetchResponse.next_offset", 2, 1, "rustlog.fetch.next-offset")]
    divergence = found[0].as_divergence()
    assert isinstance(divergence, Differs) and "first difference at FetchResponse.next_offset" in str(divergence)


def test_answers_that_depend_on_server_timers_are_not_compared():
    """Target.depends_on_server_timers turns comparing off: the same difference recorded before is not after
    (the bytes still reach both servers)."""
    found = []
    session = MirroredSession(_Answering(fetched(2, 1)), _Answering(fetched(1, 1)), COMPARE, found.append)
    session.comparing = False
    assert session.request(b"{}\n").frame == fetched(2, 1).frame
    assert not found


def test_a_replay_compares_a_server_wide_listing_in_the_entries_the_case_named():
    """What other cases of the failing run left on the server is not re-created by a replay: a listing of every
    consumer (Fluvio) is compared in the case's own entries, renumbered, and a missing own entry still differs."""
    flat = {"R.error_code": 0, "R.consumers[0].consumer_id": "other", "R.consumers[0].offset": 7,
            "R.consumers[1].consumer_id": "wc-mine", "R.consumers[1].offset": 3, "R.consumers.count": 2,
            "R.names": ["other", "wc-mine"]}
    listings = {"R.consumers": "consumer_id", "R.names": ""}
    own = own_entries(flat, listings, sent=b"...wc-mine...")
    assert own == {"R.error_code": 0, "R.consumers[0].consumer_id": "wc-mine", "R.consumers[0].offset": 3,
                   "R.consumers.count": 1, "R.names": ["wc-mine"]}
    gone = own_entries({**flat, "R.consumers[1].consumer_id": "someone"}, listings, sent=b"...wc-mine...")
    assert gone["R.consumers.count"] == 0


def test_a_case_counts_the_answers_it_compared_against_those_exchanged():
    """After a difference the connection's later answers are exchanged but not compared: "compared 1 of 3"."""
    tally = Tally()
    session = MirroredSession(_Answering(fetched(2, 1)), _Answering(fetched(1, 1)), COMPARE, lambda d: None,
                              tally=tally)
    for _ in range(3):
        session.request(b"{}\n")
    assert (tally.compared, tally.exchanged) == (1, 3) and not tally.complete
    assert tally.text().startswith("compared 1 of 3 answers (stopped at a difference in FetchResponse.next_offset")
    agreeing = Tally()
    session = MirroredSession(_Answering(fetched(1, 1)), _Answering(fetched(1, 1)), COMPARE, lambda d: None,
                              tally=agreeing)
    session.request(b"{}\n")
    session.request(b"{}\n")
    assert (agreeing.compared, agreeing.exchanged, agreeing.text()) == (2, 2, "")


def test_the_run_sums_compared_and_exchanged_answers():
    records = [{"case": "a", "differential": {"compared": 3, "exchanged": 9, "stopped": "x"}},
               {"case": "b", "differential": {"compared": 5, "exchanged": 5, "stopped": None, "apart": {"h": 4}}},
               {"case": "c"}]
    assert differential_totals(records) == {"compared": 8, "exchanged": 14, "percent": 57.1, "cases": 2,
                                            "cases_compared_in_part": 1, "apart": {"h": 4}}
    assert differential_totals([{"case": "c"}]) is None


def test_an_answer_is_paired_with_the_request_it_answers():
    """Kafka's acks=0 Produce gets no answer: the next answer is paired by its correlation id, not by order."""
    kafka = all_specs()["kafka"].primary
    queue = RequestQueue(kafka.framing, kafka.answers_request)
    silent = b"\x00\x00\x00\x08\x00\x00\x00\x03\x00\x00\x00\x01"  # api 0 v3, correlation 1
    probe = b"\x00\x00\x00\x08\x00\x12\x00\x00\x00\x00\x00\x02"  # api 18 v0, correlation 2
    queue.sent(silent + probe)
    assert queue.answered(b"\x00\x00\x00\x04\x00\x00\x00\x02") == probe
    assert queue.answered(b"\x00\x00\x00\x04\x00\x00\x00\x09") is None  # nothing left waiting


def test_oracle_misuse_is_one_usage_line(tmp_path):
    specs = all_specs()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        validate(RunOptions(oracles=[f"kafka=127.0.0.1:{port}"], report_dir=str(tmp_path)), specs)
        for given, expected in ([f"127.0.0.1:{port}"], "expected PROTOCOL=HOST:PORT"), \
                ([f"nosuch=127.0.0.1:{port}"], "unknown protocol"), \
                ([f"kafka=127.0.0.1:{port}"] * 2, "kafka is given twice"):
            with pytest.raises(UsageProblem, match=expected):
                validate(RunOptions(oracles=given, report_dir=str(tmp_path)), specs)
    with pytest.raises(UsageProblem, match="no server accepts a connection"):
        validate(RunOptions(oracles=[f"kafka=127.0.0.1:{port}"], report_dir=str(tmp_path)), specs)


def test_a_list_in_the_servers_own_order_is_compared_in_key_order():
    """ProtocolSpec.unordered_lists: Apache Kafka answers a ListOffsets topic's partitions in its own order."""
    flat = {"R.parts[0].index": 1, "R.parts[0].offset": 7, "R.parts[1].index": 0, "R.parts[1].offset": 3,
            "R.parts.count": 2}
    ordered = own_entries(flat, {"R.parts": "index"}, None)
    assert ordered == {"R.parts[0].index": 0, "R.parts[0].offset": 3, "R.parts[1].index": 1, "R.parts[1].offset": 7,
                       "R.parts.count": 2}
    assert own_entries({**flat, "R.parts[1].offset": 4}, {"R.parts": "index"}, None) != ordered


def test_a_list_keyed_by_a_chosen_value_is_ordered_by_its_content_inside_another_list():
    """A classic group's members carry only a member id the server generated (BY_CONTENT): two servers listing the
    same members in their own orders compare equal, the ids left out; a members list inside a groups list too."""
    def group(first: tuple[str, bytes], second: tuple[str, bytes]) -> dict:
        return {"R.groups[0].id": "g", "R.groups[0].members[0].member": first[0],
                "R.groups[0].members[0].assignment": first[1], "R.groups[0].members[1].member": second[0],
                "R.groups[0].members[1].assignment": second[1], "R.groups[0].members.count": 2, "R.groups.count": 1}

    listings = {"R.groups": "id", "R.groups.members": BY_CONTENT}
    chosen = ("*.member",)

    def ordered(flat: dict) -> dict:
        for pattern, key in listings.items():
            flat = own_entries(flat, {pattern: key}, None, chosen)
        return {path: value for path, value in flat.items() if not path.endswith(".member")}

    target = ordered(group(("a-1", b"\x01"), ("a-2", b"")))
    oracle = ordered(group(("b-9", b""), ("b-3", b"\x01")))
    assert target == oracle and target["R.groups[0].members[0].assignment"] == b""
    assert ordered(group(("b-9", b""), ("b-3", b"\x02"))) != target


def test_answers_counted_apart_are_neither_exchanged_nor_compared():
    """A hostile mutant's answer (or the suite's after a real client ran) is counted apart: a different answer is
    no difference, and the connection's later answers are compared again."""
    tally = Tally()
    differences = []
    session = MirroredSession(_Answering(fetched(2, 1)), _Answering(fetched(1, 1)), COMPARE, differences.append,
                              tally=tally)
    session.answers_apart("hostile")
    session.request(b"{}\n")
    session.answers_apart(None)
    assert (tally.compared, tally.exchanged, tally.apart, differences) == (0, 0, {"hostile": 1}, [])
    session.request(b"{}\n")  # compared again: this one differs
    assert (tally.compared, tally.exchanged, len(differences)) == (1, 1, 1)
    assert tally.as_dict()["apart"] == {"hostile": 1}


def test_timed_fields_are_not_compared():
    """A field whose value depends on when the server's background work completes (ProtocolSpec.timed_fields)."""
    import dataclasses
    timed = dataclasses.replace(RUSTLOG, timed_fields=("FetchResponse.next_offset",))
    assert Comparator(timed, timed.primary).difference(None, fetched(2, 1), fetched(1, 1)) is None
    assert COMPARE.difference(None, fetched(2, 1), fetched(1, 1)) is not None


def test_entries_that_say_nothing_are_left_out_and_an_emptied_list_is_empty():
    """ProtocolSpec.silent_entries: Kafka lists a share-fetch partition it read with nothing to acquire, and leaves
    out one it could not lock; a partition with no records and no error compares as absent, and a topic left with
    no partition as no topic, so [] on one server equals a quiet entry on the other."""
    quiet = {"R.topics[0].id": "t", "R.topics[0].parts[0].index": 0, "R.topics[0].parts[0].error": 0,
             "R.topics[0].parts[0].records": b"", "R.topics[0].parts[0].acquired": [], "R.topics[0].parts.count": 1,
             "R.topics.count": 1, "R.throttle": 0}

    def said(flat: dict) -> dict:
        flat = without_silent(flat, "R.topics.parts", ("error", "records", "acquired"))
        return without_silent(flat, "R.topics", ("parts",))

    assert said(quiet) == {"R.topics": [], "R.throttle": 0} == said({"R.topics": [], "R.throttle": 0})
    acquired = {**quiet, "R.topics[0].parts[0].acquired[0].first": 5}
    del acquired["R.topics[0].parts[0].acquired"]
    assert said(acquired)["R.topics.count"] == 1 and said(acquired)["R.topics[0].parts[0].acquired[0].first"] == 5
    assert said({**quiet, "R.topics[0].parts[0].error": 3})["R.topics[0].parts[0].error"] == 3


class _Scripted:
    """A Pravega session stand-in that answers with the given frames, one per recv, then silence."""

    def __init__(self, *frames: bytes):
        pravega = all_specs()["pravega"].primary
        self.frames, self.framing, self.sock, self.deadline, self.endpoint = list(frames), pravega.framing, None, 1.0, \
            pravega
        self.notes: list[str] = []
        self.transcript = type("T", (), {"note": lambda _, text: self.notes.append(text)})()

    def send(self, data, decode=True):
        return True

    def recv(self, deadline=None):
        return Reply(Outcome.FRAME, self.frames.pop(0)) if self.frames else Reply(Outcome.SILENT)


def test_answers_that_name_their_request_are_compared_whatever_order_each_server_gave_them():
    """Pravega's segment store answers a request when it completes: one server may answer a later Hello before a
    segment read, the other after; and a request one server left unanswered is read past on the other's side."""
    from wirecheck.protocols.pravega import SPEC as PRAVEGA, commands

    info = commands.encode("GetStreamSegmentInfo", request_id=7, segment="s/0", delegation_token="")
    hello = commands.encode("Hello", high_version=17, low_version=5)
    absent = commands.encode("NoSuchSegment", request_id=7, segment="s/0", server_stack_trace="", offset=-1)
    target, oracle = _Scripted(absent, hello), _Scripted(hello, absent)
    differences = []
    session = MirroredSession(target, oracle, Comparator(PRAVEGA, PRAVEGA.primary), differences.append)
    session.send(info + hello)
    assert [session.recv().frame, session.recv().frame] == [absent, hello]
    assert differences == [] and session.tally.compared == 2
    # the target stays silent on the read; the oracle's answer to it is read past, the Hellos compared
    target, oracle = _Scripted(hello), _Scripted(absent, hello)
    session = MirroredSession(target, oracle, Comparator(PRAVEGA, PRAVEGA.primary), differences.append)
    session.send(info + hello)
    assert session.recv().frame == hello and differences == [] and "read past" in target.notes[0]
