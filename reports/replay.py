"""Replay files (``wirecheck.replay/1``): a case that did not pass, as the exact bytes it sent and what came back,
so that the conversation can be played again against any target without the suite, Hypothesis or the seed
(``wirecheck replay FILE --target HOST:PORT``; a directory of them is a regression corpus, ``--corpus DIR``).

Built from the case's transcript: the steps keep the order in which they happened across connections. Resource
names the run generated (``wc-<nonce>-...``) are rewritten with a fresh nonce on replay, so a file can be played
against the same server again. Format: docs/report-schema.md.
"""

from __future__ import annotations

REPLAY_SCHEMA = "wirecheck.replay/1"
#: transcript events that are a reaction of the target (what a replay expects again)
REACTIONS = ("recv", "partial", "closed", "reset", "silent")
LIVENESS_NOTE = "liveness probe"  # the note the runner writes before its probe (targets/runner/run.py)


#: the note target.races writes: connections raced, so the order the server saw is not in the transcript
RACED_NOTE = "connections raced"
#: the notes target.precondition writes around a case's setup (targets/runner/target.py): the reactions between them
#: are marked "setup" in the file; the setup passed in the failing run, and a replay against a server in another
#: state (a shared topic that already existed then and is new now) may see it answered otherwise
SETUP_NOTE, SETUP_END_NOTE = "precondition:", "precondition done"
#: the note target.cannot_replay writes: a later request answers a value the server chose (a SCRAM proof of the
#: server's nonce), which the replay cannot compute anew
UNREPLAYABLE_NOTE = "not replayable:"
PAUSE_KEPT = 0.05  # a gap before a send at least this long is played again (a header split across segments)
PAUSE_MAX = 2.0


def replay_document(record: dict, transcript, nonce: str, deadline: float) -> dict | None:
    """The replay file of a case record and its transcript; None when the case sent nothing."""
    steps, endpoints, raced, setup, unreplayable = [], {}, False, False, ""
    events = list(transcript.events)
    for index, event in enumerate(events):
        if event.kind == "note" and event.detail.startswith(LIVENESS_NOTE):
            break  # what follows is the harness's liveness probe, not the case's conversation
        raced = raced or (event.kind == "note" and event.detail.startswith(RACED_NOTE))
        if event.kind == "note" and event.detail.startswith(UNREPLAYABLE_NOTE) and not unreplayable:
            unreplayable = event.detail[len(UNREPLAYABLE_NOTE):].strip()
        if event.kind == "note" and event.detail.startswith((SETUP_NOTE, SETUP_END_NOTE)):
            setup = event.detail.startswith(SETUP_NOTE)
        following = events[index + 1] if index + 1 < len(events) else None
        if event.kind == "partial" and following is not None and following.conn == event.conn and \
                following.kind in ("closed", "reset", "silent"):
            continue  # the bytes of an incomplete frame, then how it ended: one reaction, judged by how it ended
        if event.kind == "connect":
            endpoints[event.conn] = event.endpoint
            steps.append({"conn": event.conn, "connect": event.endpoint})
        elif event.kind == "send":
            step = {"conn": event.conn, "send": event.data.hex()}
            pause = event.t - events[index - 1].t if index else 0.0
            if pause >= PAUSE_KEPT:  # the case waited before sending (e.g. to split a frame across TCP segments)
                step["pause"] = round(min(pause, PAUSE_MAX), 3)
            steps.append(step)
        elif event.kind in REACTIONS:
            step = {"conn": event.conn, "expect": event.kind}
            if setup:
                step["setup"] = True
            if event.data:
                step["hex"] = event.data.hex()
            steps.append(step)
        elif event.kind in ("close",):
            steps.append({"conn": event.conn, "close": True})
        elif event.kind == "shutdown":
            steps.append({"conn": event.conn, "shutdown": True})
        elif event.kind in ("http-request", "http-response", "malformed"):
            steps.append({"conn": event.conn, "http": event.kind})
    if not any("send" in step for step in steps):
        return None
    return {
        "schema": REPLAY_SCHEMA,
        "protocol": record["protocol"],
        "case": record["case"],
        "nodeid": record["nodeid"],
        "clause": record["clause"],
        "verdict": record["verdict"],
        "message": record["message"],
        "expected": record["expected"],
        "actual": record["actual"],
        "deadline": deadline,
        "nonce": nonce,
        "dropped_events": transcript.dropped,  # earlier steps the transcript did not keep (a long bulk case)
        "raced": raced,  # connections ran at once: the order the server saw them in is not re-created
        "not_replayable": unreplayable,  # why a difference may be the replay's own (target.cannot_replay)
        "steps": steps,
    }
