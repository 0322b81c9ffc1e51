"""``--tls-cert/--tls-key``: every listener of the broker speaks TLS.

The certificate is self-signed, made for each run by the ``openssl`` command line into a temporary directory
(nothing is committed); the clients are Python's ssl module, verifying it as their only trusted root.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys

import pytest

from wirecheck.targets.launcher import launch
from tests.broker.fluvio_support import api_versions_body, decode_api_versions, request
from tests.broker.rustlog_support import ROOT, encode

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
DEADLINE = 5.0


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture(scope="module")
def broker(certificate, tmp_path_factory):
    cert, key = certificate
    running = launch(extra_args=["--tls-cert", str(cert), "--tls-key", str(key)],
                     workdir=tmp_path_factory.mktemp("broker"))
    try:
        yield running
    finally:
        running.stop()


def tls_connect(port: int, cafile) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(cafile))
    raw = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def exactly(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "closed"
        data += chunk
    return data


def frame_answer(sock) -> bytes:
    (size,) = struct.unpack(">i", exactly(sock, 4))
    return exactly(sock, size)


def test_every_listener_speaks_tls(broker, certificate):
    assert set(broker.ports) >= {"rustlog", "kafka", "fluvio"}
    cert, _ = certificate
    with tls_connect(broker.ports["rustlog"], cert) as sock:
        sock.sendall(encode({"type": "Ping"}))
        assert json.loads(frame_answer(sock)) == {"type": "Pong"}
    with tls_connect(broker.ports["kafka"], cert) as sock:
        sock.sendall(struct.pack(">ihhih", 10, 18, 0, 7, -1))  # ApiVersions v0, correlation id 7, null client id
        correlation_id, error = struct.unpack_from(">ih", frame_answer(sock))
        assert (correlation_id, error) == (7, 0)
    with tls_connect(broker.ports["fluvio"], cert) as sock:
        sock.sendall(request(18, 0, 9, api_versions_body()))
        answer = frame_answer(sock)
        assert struct.unpack_from(">i", answer)[0] == 9
        assert decode_api_versions(answer[4:])[0] == 0


def test_plaintext_client_gets_no_answer_and_the_broker_keeps_serving(broker, certificate):
    cert, _ = certificate
    with socket.create_connection(("127.0.0.1", broker.ports["rustlog"]), timeout=DEADLINE) as plain:
        plain.sendall(encode({"type": "Ping"}))
        try:
            reply = plain.recv(1 << 16)
        except ConnectionResetError:
            reply = b""
        assert b"Pong" not in reply  # a TLS alert at most, then the close
    with tls_connect(broker.ports["rustlog"], cert) as sock:
        sock.sendall(encode({"type": "Ping"}))
        assert json.loads(frame_answer(sock)) == {"type": "Pong"}


def test_a_client_that_does_not_trust_the_certificate_refuses_it(broker):
    context = ssl.create_default_context()  # the system roots only
    with socket.create_connection(("127.0.0.1", broker.ports["kafka"]), timeout=DEADLINE) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="127.0.0.1")


@pytest.mark.parametrize("args", [["--tls-cert", "cert.pem"], ["--tls-cert", "missing.pem", "--tls-key", "x.pem"]])
def test_incomplete_or_unreadable_tls_settings_are_refused(tmp_path, args):
    result = subprocess.run([sys.executable, "-m", "wirecheck.broker", "--protocols", "rustlog", "--rustlog-port",
                             "0", *args], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "tls" in result.stderr.lower()
