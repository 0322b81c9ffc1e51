"""Session: every way a peer can react is classified, within the deadline, and recorded."""

import socket
import struct
import threading
import time

import pytest

from wirecheck.protocols.rustlog import SPEC
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.session import Session
from wirecheck.targets.transport.outcome import Outcome


class OneShotServer:
    """Accepts one connection on 127.0.0.1 and runs ``behave(conn)`` on it."""

    def __init__(self, behave):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = self.sock.getsockname()
        self.thread = threading.Thread(target=self._run, args=(behave,), daemon=True)
        self.thread.start()

    def _run(self, behave):
        conn, _ = self.sock.accept()
        conn.recv(65536)
        behave(conn)

    def close(self):
        self.sock.close()


def _reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


BEHAVIOURS = {
    "answer": (lambda c: c.sendall(b"\x00\x00\x00\x0f" + b'{"type":"Pong"}'), Outcome.FRAME),
    "close": (lambda c: c.close(), Outcome.CLOSED),
    "reset": (_reset, Outcome.RESET),
    "silent": (lambda c: time.sleep(1.0), Outcome.SILENT),
    "unframeable": (lambda c: (c.sendall(b"\xff\xff\xff\xff{}"), time.sleep(1)), Outcome.UNFRAMEABLE),
    "half-frame": (lambda c: (c.sendall(b"\x00\x00\x00\x10{\"type\""), time.sleep(1)), Outcome.SILENT),
}


@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_outcome_is_classified_within_the_deadline(name):
    behave, expected = BEHAVIOURS[name]
    server = OneShotServer(behave)
    transcript = Transcript("rustlog", SPEC.describe)
    session = Session(server.address, SPEC, transcript, deadline=0.3)
    started = time.monotonic()
    reply = session.request(b"\x00\x00\x00\x0f" + b'{"type":"Ping"}')
    assert time.monotonic() - started < 0.9
    assert reply.outcome is expected, reply
    if name == "half-frame":
        assert reply.partial.startswith(b"\x00\x00\x00\x10")
    kinds = [e.kind for e in transcript.events]
    assert kinds[:2] == ["connect", "send"]
    session.close()
    server.close()


def test_two_frames_in_one_segment_are_split():
    pong = b"\x00\x00\x00\x0f" + b'{"type":"Pong"}'
    server = OneShotServer(lambda c: (c.sendall(pong + pong), time.sleep(0.5)))
    session = Session(server.address, SPEC, Transcript("rustlog"), deadline=0.3)
    session.send(b"x")
    assert session.recv().frame == pong
    assert session.recv().frame == pong
    assert session.recv().outcome is Outcome.SILENT
    session.close()
    server.close()


def test_transcript_renders_hex_and_decoded_frames():
    transcript = Transcript("rustlog", SPEC.describe)
    transcript.add(1, "send", b"\x00\x00\x00\x0f" + b'{"type":"Ping"}')
    text = transcript.render()
    assert '{"type":"Ping"}' in text and "00 00 00 0f 7b" in text
    event = transcript.to_dict("c", "n")["events"][0]
    assert event["hex"].startswith("0000000f") and event["len"] == 19


def test_session_accepts_an_endpoint_and_refuses_a_non_framed_one():
    from wirecheck.protocols.spec import Endpoint

    pong = b"\x00\x00\x00\x0f" + b'{"type":"Pong"}'
    server = OneShotServer(lambda c: (c.sendall(pong), time.sleep(0.5)))
    with Session(server.address, SPEC.endpoint("broker"), Transcript("rustlog"), deadline=0.3) as session:
        assert session.request(b"x").frame == pong
    server.close()
    with pytest.raises(ValueError, match="http1"):
        Session(server.address, Endpoint("consumer", 80, transport="http1"), Transcript("t"))


def test_expect_end_skips_frames_until_the_peer_closes():
    pong = b"\x00\x00\x00\x0f" + b'{"type":"Pong"}'
    server = OneShotServer(lambda c: (c.sendall(pong + pong), time.sleep(0.1), c.close()))
    transcript = Transcript("rustlog")
    with Session(server.address, SPEC, transcript, deadline=1) as session:
        session.send(b"x")
        reply = session.expect_end()
    assert reply.outcome is Outcome.CLOSED and reply.frame == pong
    assert [e.kind for e in transcript.events][-4:] == ["recv", "recv", "closed", "close"]
    server.close()


def test_check_loopback():
    from wirecheck.targets.session import check_loopback

    check_loopback("127.0.0.1")
    with pytest.raises(ValueError):
        check_loopback("192.0.2.1")
