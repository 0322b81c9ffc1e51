"""The broker core (targets/reference/core.py and the CLI), exercised through the RustLog personality.

Connection limit, idle timeout, ready file, clean shutdown on SIGTERM, and refusal of unknown faults.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.broker.rustlog_support import ROOT, Client, Closed, ProcessBroker, encode

PING, PONG = {"type": "Ping"}, {"type": "Pong"}


@pytest.fixture(scope="module")
def limited():
    with ProcessBroker("--max-connections", "2", "--idle-timeout", "0.5") as broker:
        yield broker


def test_ready_file_names_pid_host_and_port(limited):
    assert limited.info["pid"] == limited.process.pid
    assert limited.info["host"] == "127.0.0.1"
    assert isinstance(limited.port, int) and limited.port > 0
    assert not (limited.workdir / "ready.tmp").exists()


def test_connection_limit(limited):
    first, second = limited.client(), limited.client()
    try:
        assert first.request(PING) == PONG and second.request(PING) == PONG
        with limited.client() as third:  # accepted by the kernel, then closed by the core
            with pytest.raises((Closed, BrokenPipeError, ConnectionResetError)):
                third.request(PING)
        first.close()
        deadline = time.monotonic() + 5
        while True:  # the slot frees once the core has seen the close
            try:
                with limited.client() as fourth:
                    assert fourth.request(PING) == PONG
                break
            except (Closed, BrokenPipeError, ConnectionResetError):
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("sent", [b"", b"\x00\x00", b"\x00\x00\x00\x10{"])
def test_idle_timeout_closes_silent_and_partial_connections(limited, sent):
    with limited.client() as idle:
        idle.send_raw(sent)
        started = time.monotonic()
        with pytest.raises(Closed):
            idle.recv_frame()
        assert 0.3 < time.monotonic() - started < 4
    with limited.client() as other:
        assert other.request(PING) == PONG


def test_sigterm_shuts_down_cleanly_with_open_connections():
    with ProcessBroker() as broker:
        busy, partial = broker.client(), broker.client()
        assert busy.request(PING) == PONG
        partial.send_raw(encode(PING)[:3])
        started = time.monotonic()
        assert broker.terminate(timeout=10) == 0
        assert time.monotonic() - started < 5
        for client in (busy, partial):
            with pytest.raises(Closed):
                client.recv_frame()
            client.close()
        assert "Traceback" not in broker.log_text()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "targets.reference", "--protocols", "rustlog", *args],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          timeout=30)


def test_unknown_fault_is_refused(tmp_path):
    result = run_cli("--rustlog-port", "0", "--fault", "no-such-fault", "--ready-file", str(tmp_path / "r.json"))
    assert result.returncode != 0
    assert "no-such-fault" in result.stderr
    assert not (tmp_path / "r.json").exists()


def test_list_faults_names_every_rustlog_fault():
    from targets.reference.rustlog import FAULTS

    result = run_cli("--list-faults")
    listed = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("rustlog")}
    assert listed == set(FAULTS)


def test_two_brokers_cannot_share_a_port(tmp_path):
    with ProcessBroker() as broker:
        result = run_cli("--rustlog-port", str(broker.port))
        assert result.returncode != 0 and "cannot listen" in result.stderr
        with Client(broker.port) as client:
            assert client.request(PING) == PONG


def test_peer_that_never_reads_is_dropped_after_the_idle_timeout():
    import base64
    import socket

    with ProcessBroker("--idle-timeout", "0.5") as broker, broker.client() as writer:
        writer.request({"type": "CreateTopic", "topic": "t", "partition_count": 1})
        record = base64.b64encode(b"x" * 7_000_000).decode()
        writer.request({"type": "Produce", "topic": "t", "partition": 0, "records": [record]})
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as lazy:
            fetch = encode({"type": "Fetch", "group_id": "", "topic": "t", "partition": 0, "offset": 0,
                            "max_bytes": 10**9})
            lazy.sendall(fetch)  # ~9 MB come back; this peer never reads them
            time.sleep(1.0)
            drained, closed = 0, False
            try:
                while drained < 20_000_000:
                    chunk = lazy.recv(1 << 20)
                    if not chunk:
                        closed = True
                        break
                    drained += len(chunk)
            except ConnectionResetError:
                closed = True
            # The broker gave up part-way (what the kernels had buffered still arrives, then the close).
            assert closed and drained < 9_000_000, drained
        with broker.client() as other:
            assert other.request(PING) == PONG
