"""TLS on a framed session: verified against a CA, refused without it, and the transcript keeps the plaintext."""

import socket
import ssl
import threading

import pytest

from wirecheck.protocols.rustlog import SPEC
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.session import Session
from wirecheck.targets.transport.outcome import Outcome
from wirecheck.targets.transport import client_context
from tests.tls_support import make_certificates

PING = b"\x00\x00\x00\x0f" + b'{"type":"Ping"}'
PONG = b"\x00\x00\x00\x0f" + b'{"type":"Pong"}'


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("tls"))


class TlsPongServer:
    """Accepts TLS connections on 127.0.0.1; answers the first frame of each with a Pong."""

    def __init__(self, context: ssl.SSLContext):
        self.context = context
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = self.sock.getsockname()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    if conn.recv(65536):
                        conn.sendall(PONG)
                    conn.recv(1)  # until the client closes
            except (ssl.SSLError, OSError):
                continue

    def close(self):
        self.sock.close()


def test_tls_session_exchanges_plaintext_frames(certificates):
    server = TlsPongServer(certificates.server_context())
    transcript = Transcript("rustlog", SPEC.describe)
    with Session(server.address, SPEC.primary, transcript, deadline=2, tls=client_context(certificates.ca_file)) as s:
        reply = s.request(PING)
    server.close()
    assert reply.outcome is Outcome.FRAME and reply.frame == PONG
    connect, send, recv = list(transcript.events)[:3]
    assert connect.kind == "connect" and connect.detail.startswith("TLSv1.")
    assert (send.kind, send.data, recv.kind, recv.data) == ("send", PING, "recv", PONG)


def test_tls_refuses_an_untrusted_certificate(certificates):
    server = TlsPongServer(certificates.server_context())
    with pytest.raises(ssl.SSLCertVerificationError):
        Session(server.address, SPEC, Transcript("rustlog"), tls=client_context(None))
    # verify=False accepts it: for self-signed test targets only
    with Session(server.address, SPEC, Transcript("rustlog"), tls=client_context(None, verify=False)) as session:
        assert session.request(PING).frame == PONG
    server.close()


def test_tls_name_must_match_the_server_hostname(certificates):
    server = TlsPongServer(certificates.server_context())
    context = client_context(certificates.ca_file)
    with pytest.raises(ssl.SSLCertVerificationError):
        Session(server.address, SPEC, Transcript("rustlog"), tls=context, server_hostname="broker.example")
    with Session(server.address, SPEC, Transcript("rustlog"), tls=context, server_hostname="localhost") as session:
        assert session.request(PING).frame == PONG
    server.close()
