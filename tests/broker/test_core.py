"""The broker core (broker/core.py, framed.py and the CLI), exercised through the RustLog personality.

Connection limit, idle and frame timeouts, ready file, clean shutdown on SIGTERM, and refusal of unknown faults.
"""

from __future__ import annotations

import json
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


def test_connection_limit():
    # Idle connections that completed a frame keep their slots (30 s idle timeout), never shed for a newcomer: one
    # more waits the frame timeout, then is closed.
    with ProcessBroker("--max-connections", "2", "--frame-timeout", "0.3") as limited:
        check_connection_limit(limited)


def check_connection_limit(limited):
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


def test_slow_frames_cannot_starve_a_fresh_client():
    """A flood of peers that each send one byte of a frame and stall: a fresh client is answered at once, and
    the connections at work keep their slots.

    The frame timeout (30 s) frees nothing during the test: the slow peers are shed because they have not
    completed a frame (oldest first, past --max-pending-connections or when the listener is full). The full
    measurement, 1,000 peers per listener, is bench/slow_connections.py.
    """
    slots, pending, flood = 32, 8, 100
    with ProcessBroker("--max-connections", str(slots), "--max-pending-connections", str(pending),
                       "--frame-timeout", "30") as broker:
        working, slow = [], []
        try:
            for _ in range(slots - pending):  # each completes a frame before the next connects
                working.append(broker.client(timeout=5))
                assert working[-1].request(PING) == PONG
            for _ in range(flood):
                peer = broker.client(timeout=5)
                peer.send_raw(b"\x00")  # the first byte of a length prefix
                slow.append(peer)
            started = time.monotonic()
            with broker.client(timeout=5) as fresh:
                assert fresh.request(PING) == PONG
            assert time.monotonic() - started < 1.0
            for client in working:  # never shed: they completed frames
                assert client.request(PING) == PONG
            shed = 0
            for peer in slow[:flood - pending]:  # the oldest were closed by the broker, none answered
                with pytest.raises(Closed):
                    peer.recv_frame()
                shed += 1
            assert shed == flood - pending
        finally:
            for peer in [*slow, *working]:
                peer.close()


@pytest.mark.parametrize("header", [b"\x00\x00\x00\x64", b"\x00\x00\x00\x64" + b"{" * 99])
def test_frame_timeout_closes_a_trickling_frame_before_the_idle_timeout(header):
    """A frame that keeps arriving, one byte at a time, is bounded by the frame timeout, not the idle timeout."""
    import socket

    with ProcessBroker("--frame-timeout", "0.5", "--idle-timeout", "30") as broker:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as sock:
            closed = False
            try:
                for byte in header:  # a byte every 0.1 s: never idle for long, yet the frame takes 10 s
                    sock.sendall(bytes([byte]))
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            if not closed:
                try:
                    closed = sock.recv(1) == b""
                except ConnectionResetError:
                    closed = True
            assert closed
        with broker.client() as other:
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
    return subprocess.run([sys.executable, "-m", "wirecheck.broker", "--protocols", "rustlog", *args],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          timeout=30)


@pytest.mark.parametrize("fault", ["rustlog.no-such-fault", "zero-length-ignored", "kafka.crc-ieee"])
def test_unknown_fault_is_refused_listing_the_valid_ones(tmp_path, fault):
    """Unknown, un-namespaced, or of a personality that is not running: refused, naming every valid fault."""
    from wirecheck.broker.rustlog import FAULTS

    result = run_cli("--rustlog-port", "0", "--fault", fault, "--ready-file", str(tmp_path / "r.json"))
    assert result.returncode != 0
    assert fault in result.stderr
    assert all(name in result.stderr for name in FAULTS)
    assert not (tmp_path / "r.json").exists()


def test_list_faults_groups_the_faults_by_personality():
    from wirecheck.broker.personality import discover

    personalities = discover()
    assert {"rustlog", "kafka", "fluvio"} <= set(personalities)
    groups, current = {}, None
    for line in run_cli("--list-faults").stdout.splitlines():
        if not line.startswith(" "):
            current = line.rstrip(":")
            groups[current] = set()
        else:
            groups[current].add(line.split()[0])
    assert groups == {name: set(info.faults) for name, info in personalities.items()}
    for name, faults in groups.items():
        assert all(fault.startswith(name + ".") for fault in faults)


@pytest.mark.parametrize("option", ["data_dir", "fsync"])
def test_a_persistence_option_a_personality_cannot_honour_is_refused(option):
    """A personality that keeps its log in memory, asked for durable storage, refuses in one line instead of
    losing the data of a user who believes it is durable; the personalities that can persist are named. Every
    bundled personality persists, so the one that cannot is built here."""
    import argparse

    from wirecheck.broker.__main__ import PERSISTENCE, check_storage
    from wirecheck.broker.personality import PersonalityInfo, discover

    able = discover()["rustlog"]
    memory_only = PersonalityInfo("memory", 1, {}, type("Options", (), {}), lambda config, options: None,
                                  storage=frozenset({"retention_records"}))
    args = argparse.Namespace(data_dir=None, fsync=None, segment_records=None, retention_records=None)
    setattr(args, option, "given")
    with pytest.raises(SystemExit) as refused:
        check_storage(args, ["rustlog", "memory"], {"rustlog": able, "memory": memory_only})
    assert str(refused.value).splitlines() == [
        (f"{PERSISTENCE[option]}: the memory personality cannot honour it (storage in memory only); "
         f"run the others alone: --protocols rustlog")]


def test_help_says_which_personalities_persist():
    from wirecheck.broker.personality import discover

    help_text = " ".join(run_cli("--help").stdout.split())
    persist = sorted(name for name, info in discover().items() if "data_dir" in info.storage)
    assert persist == sorted(discover())  # no bundled personality is left in memory only
    assert f"durable storage here (default: in memory); honoured by: {', '.join(persist)}" in help_text


def test_two_brokers_cannot_share_a_port(tmp_path):
    with ProcessBroker() as broker:
        result = run_cli("--rustlog-port", str(broker.port))
        assert result.returncode != 0 and "cannot listen" in result.stderr
        assert result.stderr.strip().endswith("(the port is set by --rustlog-port)"), result.stderr
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


def test_the_broker_imports_nothing_from_the_suite():
    """ARCHITECTURE: broker/ is a second implementation; it never imports protocols, strategies or
    suites (nor the suite's harness in targets/)."""
    import ast

    for path in (ROOT / "broker").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                top = name.removeprefix("wirecheck.").split(".")[0]
                assert top not in ("protocols", "strategies", "suites", "reports", "targets"), (path, name)


def test_the_broker_names_each_listener_before_it_serves(tmp_path):
    """One stdout line per listener (protocol, endpoint, address), written before the ready file."""
    ready = tmp_path / "ready.json"
    process = subprocess.Popen([sys.executable, "-m", "wirecheck.broker", "--protocols", "rustlog,barco",
                                "--rustlog-port", "0", "--barco-port", "0", "--barco-producer-http-port", "0",
                                "--barco-consumer-port", "0", "--barco-producer-port", "0", "--ready-file",
                                str(ready)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [process.stdout.readline().strip() for _ in range(5)]
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:  # written just after the lines
            time.sleep(0.02)
        ports = json.loads(ready.read_text())
    finally:
        process.terminate()
        process.wait(timeout=10)
    expected = {f"listening: rustlog main 127.0.0.1:{ports['ports']['rustlog']}",
                f"listening: barco main 127.0.0.1:{ports['ports']['barco']}",
                *(f"listening: barco {name} 127.0.0.1:{port}" for name, port in ports["endpoints"]["barco"].items())}
    assert set(lines) == expected, lines
