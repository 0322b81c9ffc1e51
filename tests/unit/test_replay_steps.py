"""Replay files keep what a conversation needs to be played again: the half-close a case made (a frame that never
completes ends there, and a server that answers only at EOF answers only then), and which reactions belong to the
case's setup (a server in another state may answer those otherwise: the failure is judged by what follows)."""

from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from wirecheck.protocols.registry import all_specs
from wirecheck.reports.replay import SETUP_END_NOTE, SETUP_NOTE, replay_document
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.replay import replay

SPEC = all_specs()["rustlog"]
RECORD = {"protocol": "rustlog", "case": "c", "nodeid": "n", "clause": "rustlog.request.invalid-fields",
          "verdict": "FAILED", "message": "m", "expected": "e", "actual": "a"}


def frame(obj: dict) -> bytes:
    payload = json.dumps(obj).encode()
    return struct.pack(">I", len(payload)) + payload


class Server:
    """Answers each frame of its one connection with ``answers`` in order, as it arrives, except the last: that
    one only once the peer half-closed (as a server that reads a body until EOF)."""

    def __init__(self, answers: list[dict]):
        self.answers = answers
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = self.sock.getsockname()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data, answers = b"", list(self.answers)
            while chunk := conn.recv(65536):
                data += chunk
                while len(answers) > 1 and len(data) >= 4 and len(data) >= 4 + struct.unpack(">I", data[:4])[0]:
                    data = data[4 + struct.unpack(">I", data[:4])[0]:]
                    conn.sendall(frame(answers.pop(0)))
            conn.sendall(frame(answers.pop(0)))

    def close(self) -> None:
        self.sock.close()


def conversation(setup_answer: dict) -> dict:
    """A case's transcript: a setup CreateTopic inside its precondition, then the request the failure is about,
    then the half-close that lets the server see the end."""
    transcript = Transcript("rustlog")
    transcript.add(1, "connect", endpoint="")
    transcript.note(f"{SETUP_NOTE} topic exists")
    transcript.add(1, "send", frame({"type": "CreateTopic", "topic": "t", "partition_count": 1}))
    transcript.add(1, "recv", frame(setup_answer))
    transcript.note(SETUP_END_NOTE)
    transcript.add(1, "send", frame({"type": "CreateTopic", "topic": "t", "partition_count": 1.0}))
    transcript.add(1, "shutdown")
    transcript.add(1, "recv", frame({"type": "Error", "code": 409, "message": "exists"}))
    return replay_document(RECORD, transcript, "abc", 1.0)


def test_the_file_marks_setup_reactions_and_keeps_the_half_close():
    steps = conversation({"type": "Error", "code": 409, "message": "exists"})["steps"]
    expects = [step for step in steps if "expect" in step]
    assert [bool(step.get("setup")) for step in expects] == [True, False]
    assert {"conn": 1, "shutdown": True} in steps
    assert steps.index({"conn": 1, "shutdown": True}) < steps.index(expects[1])


@pytest.mark.parametrize("setup_answer", [{"type": "CreateTopicResponse"},
                                          {"type": "Error", "code": 409, "message": "exists"}])
def test_a_setup_answered_otherwise_does_not_hide_the_failure(setup_answer):
    """The server answers only after the half-close (without it the replay would meet silence), and its setup
    answer differs from the failing run's: the failure still reproduces."""
    server = Server([setup_answer, {"type": "Error", "code": 409, "message": "exists"}])
    try:
        done = replay(conversation({"type": "Error", "code": 409, "message": "exists"}), {"": server.address}, 2.0)
    finally:
        server.close()
    assert done.verdict == "FAILED", done.line()


def test_a_different_answer_after_the_setup_still_says_it_does_not_reproduce():
    server = Server([{"type": "CreateTopicResponse"}, {"type": "Error", "code": 400, "message": "bad"}])
    try:
        done = replay(conversation({"type": "Error", "code": 409, "message": "exists"}), {"": server.address}, 2.0)
    finally:
        server.close()
    assert done.verdict == "OK" and "reaction #2" in done.detail, done.line()
