"""The differential comparator: answers decoded with the layers, volatile fields ignored, the first difference on
a connection named by its field path and the clause that covers it, and recorded (not raised: the case's own
checks judge the target); --strict turns a recorded difference into DIVERGENT."""

from __future__ import annotations


from wirecheck.protocols.clauses import Level
from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.rustlog.layers import encode_frame
from wirecheck.protocols.verdicts import Differs, Verdict
from wirecheck.targets.differential import Comparator, MirroredSession, flatten, own_entries
from wirecheck.targets.runner.verdicts import classify
from wirecheck.targets.session import Outcome, Reply

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


def test_divergent_fails_the_run_under_a_must_clause_or_strict():
    should = Differs(RUSTLOG.catalogue["rustlog.differential.same-answer"], "Error.details", "x", "y")
    must = Differs(RUSTLOG.catalogue["rustlog.fetch.next-offset"], "FetchResponse.next_offset", "1", "2")
    assert should.clause.level is Level.SHOULD and must.clause.level is Level.MUST
    assert classify(should, "call", None, strict=False).outcome == "passed"
    assert classify(should, "call", None, strict=True).outcome is None  # pytest's own: failed
    assert classify(must, "call", None, strict=False).outcome is None
    assert {classify(d, "call", None, strict=s).verdict for d in (should, must) for s in (False, True)} == \
        {Verdict.DIVERGENT}


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
