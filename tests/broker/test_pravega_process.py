"""The Pravega personality through the CLI: independence from the suite's code, durability under --data-dir, and
the auth cases against a broker that requires a token."""

from __future__ import annotations

import ast
import socket
import struct
import uuid
from pathlib import Path

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.targets.launcher import launch
from wirecheck.broker import pravega
from tests.quality.harness import run_suite


def test_package_imports_nothing_from_the_suite():
    """ARCHITECTURE: broker/ never imports protocols, strategies or suites."""
    for path in Path(pravega.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.removeprefix("wirecheck.").split(".")[0] not in ("protocols", "strategies", "suites"), (path.name, name)


class Client:
    def __init__(self, address):
        self.sock = socket.create_connection(address, timeout=5)

    def call(self, name: str, **values) -> cmd.Decoded:
        self.sock.sendall(cmd.encode(name, values))
        header = self._read(8)
        return cmd.decode(header + self._read(struct.unpack(">ii", header)[1]))

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "connection closed"
            data += chunk
        return data


def test_state_survives_a_restart(tmp_path):
    writer, seg, table = uuid.uuid4(), "scope/durable/0", "scope/durable/table"
    broker = launch(["pravega"], extra_args=["--data-dir", str(tmp_path / "data")], workdir=tmp_path / "one")
    try:
        c = Client(broker.address("pravega"))
        c.call("CreateSegment", request_id=1, segment=seg, target_rate=0, scale_type=0, delegation_token="")
        c.call("SetupAppend", request_id=2, writer_id=writer, segment=seg, delegation_token="")
        data = cmd.event(b"kept") + cmd.event(b"too")
        c.call("AppendBlockEnd", writer_id=writer, size_of_whole_events=len(data), data=data, num_events=2,
               last_event_number=2, request_id=3)
        c.call("TruncateSegment", request_id=4, segment=seg, truncation_offset=12, delegation_token="")
        c.call("CreateTableSegment", request_id=5, segment=table, delegation_token="")
        (version,) = c.call("UpdateTableEntries", request_id=6, segment=table, delegation_token="",
                            entries=[(b"k", cmd.NO_VERSION, b"v")])["updated_versions"]
    finally:
        broker.stop()
    broker = launch(["pravega"], extra_args=["--data-dir", str(tmp_path / "data")], workdir=tmp_path / "two")
    try:
        c = Client(broker.address("pravega"))
        info = c.call("GetStreamSegmentInfo", request_id=7, segment=seg, delegation_token="")
        assert (info["write_offset"], info["start_offset"]) == (len(data), 12)
        assert c.call("SetupAppend", request_id=8, writer_id=writer, segment=seg,
                      delegation_token="")["last_event_number"] == 2
        read = c.call("ReadSegment", segment=seg, offset=12, suggested_length=100, delegation_token="", request_id=9)
        assert read["data"] == cmd.event(b"too")
        entries = c.call("ReadTable", request_id=10, segment=table, delegation_token="",
                         keys=[(b"k", cmd.NO_VERSION)])["entries"]
        assert entries == [(b"k", version, b"v")]
    finally:
        broker.stop()


def test_auth_cases_pass_against_a_broker_requiring_a_token(tmp_path):
    broker = launch(["pravega"], extra_args=["--pravega-auth-token", "s3cret"], workdir=tmp_path / "broker")
    try:
        host, port = broker.address("pravega")
        run = run_suite("pravega/test_auth.py", tmp_path / "reports",
                        extra=["--target", f"pravega={host}:{port}", "--target-option", "pravega.token=s3cret"])
    finally:
        broker.stop()
    assert run.returncode == 0, run.output
    assert set(run.by_verdict()) == {"OK"}, run.by_verdict()


def test_a_parked_read_outlives_the_idle_timeout(tmp_path):
    broker = launch(["pravega"], extra_args=["--idle-timeout", "0.5"], workdir=tmp_path / "broker")
    try:
        reader, writer = Client(broker.address("pravega")), Client(broker.address("pravega"))
        writer.call("CreateSegment", request_id=1, segment="s/idle/0", target_rate=0, scale_type=0,
                    delegation_token="")
        reader.sock.sendall(cmd.encode("ReadSegment", segment="s/idle/0", offset=0, suggested_length=100,
                                       delegation_token="", request_id=2))
        import time

        time.sleep(1.5)  # three idle timeouts: the writer's idle connection is gone, the reader's is not
        writer, w = Client(broker.address("pravega")), uuid.uuid4()
        writer.call("SetupAppend", request_id=3, writer_id=w, segment="s/idle/0", delegation_token="")
        writer.call("AppendBlockEnd", writer_id=w, size_of_whole_events=13, data=cmd.event(b"hello"), num_events=1,
                    last_event_number=1, request_id=4)
        header = reader._read(8)
        answer = cmd.decode(header + reader._read(struct.unpack(">ii", header)[1]))
        assert (answer.name, answer["request_id"], answer["data"]) == ("SegmentRead", 2, cmd.event(b"hello"))
    finally:
        broker.stop()


def test_provisioned_segments_exist_at_start(tmp_path):
    # --pravega-segments / --pravega-tables: an operator's segments, there before any client connects.
    broker = launch(protocols=["pravega"], workdir=tmp_path,
                    extra_args=["--pravega-segments", "ops/orders/0.#epoch.0,ops/events/0",
                                "--pravega-tables", "ops/_tables/state"])
    try:
        client = Client(broker.address("pravega"))
        for name in ("ops/orders/0.#epoch.0", "ops/events/0"):
            info = client.call("GetStreamSegmentInfo", request_id=1, segment=name, delegation_token="")
            assert (info.name, info["write_offset"], info["is_sealed"]) == ("StreamSegmentInfo", 0, False)
        table = client.call("GetTableSegmentInfo", request_id=2, segment="ops/_tables/state", delegation_token="")
        assert table.name == "TableSegmentInfo"
        assert client.call("CreateSegment", request_id=3, segment="ops/events/0", target_rate=0, scale_type=0,
                           delegation_token="").name == "SegmentAlreadyExists"
    finally:
        broker.stop()
