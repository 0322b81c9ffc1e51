"""The Pravega safety workload's pieces: the controller's getURI answers rewritten inside its HTTP/2 stream to name a
proxy listener (the real client then writes, commits a transaction and reads through the proxy), and what its
histories can and cannot show (the long runs under faults, clean and with pravega.safety-unsynced-tail-lost:
BENCHMARKS.md "Safety")."""

import json
import subprocess
import sys

import pytest

from wirecheck.reports.safety import checker
from wirecheck.targets.safety import pravega as workload
from wirecheck.targets.safety.proxy import FaultProxy

CLIENT = """
import json, logging, os, random, sys, time
from pathlib import Path
from wirecheck.targets.safety.pravega import PravegaWorkload, _transaction_writer
from wirecheck.targets.safety.run import Run
w = PravegaWorkload(sys.argv[1], sys.argv[2], Run(Path(os.devnull), time.monotonic()), random.Random(3),
                    logging.getLogger("t"))
w._create_stream(20)
manager = w.manager()
sent = w._send(0, manager.create_writer(w.scope, "events"))
committed = w._transaction(1, _transaction_writer(w.scope, 1, manager))
reader, values = w._reader(2), []
for _ in range(40):
    for pairs in (reader.poll() or {}).values():
        values += [value for _, value in pairs]
    if len(values) >= 2:
        break
reader.close()
print(json.dumps({"sent": sent, "committed": committed, "values": values}), flush=True)
sys.stdout.flush()
os._exit(0)  # the binding's runtime threads abort a finalizing interpreter
"""


@pytest.mark.interop
def test_the_client_reaches_the_segment_store_only_through_the_proxy(tmp_path):
    pytest.importorskip("pravega_client")
    from wirecheck.targets.launcher import launch

    broker = launch(["pravega"], workdir=tmp_path / "broker")
    controller, store = broker.address("pravega-controller"), broker.address("pravega")
    assert controller is not None and store is not None
    proxy = FaultProxy(controller)
    proxy.rewriter = lambda: workload.address_rewriter(controller, proxy.address())
    try:
        proxy.start()
        done = subprocess.run([sys.executable, "-c", CLIENT, f"127.0.0.1:{proxy.port}", "safety-rewrite"],
                              capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr[-2000:]
        seen = json.loads(done.stdout.splitlines()[-1])
        assert seen["sent"] and seen["committed"] is not None and len(seen["values"]) >= 2, seen
        # the store's address was only ever learnt from a rewritten getURI answer, which named a proxy listener
        assert set(proxy._forwarded) == {store}, proxy._forwarded
    finally:
        proxy.stop()
        broker.stop()


def _op(index, type_, process, f, value, time, **extra):
    return {"index": index, "type": type_, "process": process, "time": time, "f": f, "value": value, **extra}


def test_without_send_offsets_a_lost_event_is_unseen_and_reads_are_still_judged():
    """A history as the workload records it after a segment lost its last entry at a restart: writers acknowledged
    three events (no offsets), the reader saw the first, then a later event at the lost one's offset, then an aborted
    transaction's event."""
    key = "s/events/k0"
    ops = [
        _op(0, "invoke", 1, "send", [["send", key, 10], ["send", key, 11]], 0.0),
        _op(1, "ok", 1, "send", [["send", key, [None, 10]], ["send", key, [None, 11]]], 0.1),
        _op(2, "invoke", 1, "send", [["send", key, 12]], 0.2),
        _op(3, "ok", 1, "send", [["send", key, [None, 12]]], 0.3),
        _op(4, "invoke", 2, "txn", [["send", key, 13]], 0.3),
        _op(5, "fail", 2, "txn", [["send", key, [None, 13]]], 0.35, abort=True),
        _op(6, "invoke", 3, "assign", [key], 0.4),
        _op(7, "ok", 3, "assign", [key], 0.4),
        _op(8, "invoke", 3, "poll", [["poll"]], 0.5),
        _op(9, "ok", 3, "poll", [["poll", {key: [[0, 10], [13, 11]]}]], 0.6),
        _op(10, "invoke", 4, "assign", [key], 0.7),
        _op(11, "ok", 4, "assign", [key], 0.7),
        _op(12, "invoke", 4, "poll", [["poll"]], 0.8),
        _op(13, "ok", 4, "poll", [["poll", {key: [[0, 10], [13, 12], [26, 13]]}]], 0.9),
    ]
    result = checker.check(ops, workload.UNJUDGED)
    # 11 and 12 were both read at offset 13; the aborted 13 was read; nothing was lost for good
    assert result.anomaly_counts == {"inconsistent-offsets": 1, "aborted-read": 1}, result.anomaly_counts
    lost = [_op(0, "invoke", 1, "send", [["send", key, 20]], 0.0),
            _op(1, "ok", 1, "send", [["send", key, [None, 20]]], 0.1),
            _op(2, "invoke", 1, "send", [["send", key, 21]], 0.2),
            _op(3, "ok", 1, "send", [["send", key, [None, 21]]], 0.3),
            _op(4, "invoke", 3, "poll", [["poll"]], 0.5),
            _op(5, "ok", 3, "poll", [["poll", {key: [[9, 21]]}]], 0.6)]
    # 20 sits below 21 in the log, but no writer is told an offset: unseen, never lost-write
    assert checker.check(lost, workload.UNJUDGED).anomaly_counts == {"unseen": 1}


def test_pravega_leaves_only_the_send_offset_kinds_unjudged():
    assert set(workload.UNJUDGED) == {"nonmonotonic-send", "int-nonmonotonic-send", "nonmonotonic-send-realtime",
                                      "lost-write"}
    assert set(workload.UNJUDGED) <= set(checker.KINDS)


class _Forwarder:
    """A stand-in for the proxy's address: every server it is asked about is behind port 40001."""

    def __init__(self):
        self.asked = []

    def forward(self, address):
        self.asked.append(address)
        return ("127.0.0.1", 40001)


def _exchange(rewriter, method: str, answer_frames: list[bytes]) -> bytes:
    import hpack

    from wirecheck.targets.safety import pravega_address as pa

    block = hpack.Encoder().encode([(":method", "POST"), (":path", f"/io.pravega.Controller/{method}")])
    rewriter.request(pa.PREFACE + pa._frame(pa.HEADERS, pa.END_HEADERS, 1, block))
    return b"".join(rewriter.response(frame) for frame in answer_frames)


def _node_uri(host: bytes, port: int) -> bytes:
    from wirecheck.targets.safety import pravega_address as pa

    return b"\x0a" + bytes([len(host)]) + host + b"\x10" + pa._put_varint(port)


def test_a_get_uri_answer_split_over_frames_names_the_proxy_and_keeps_its_flow_control_size():
    from wirecheck.targets.safety import pravega_address as pa

    proxy = _Forwarder()
    rewriter = pa.PravegaAddressRewriter(("127.0.0.1", 9090), proxy)
    message = _node_uri(b"segmentstore.example", 12345)
    grpc = _grpc_message(message)
    out = _exchange(rewriter, "getURI", [pa._frame(pa.DATA, 0, 1, grpc[:7]), pa._frame(pa.DATA, 0, 1, grpc[7:])])
    assert proxy.asked == [("segmentstore.example", 12345)]
    frames = list(pa._frames(bytearray(out)))
    assert len(frames) == 1 and sum(len(f[3]) for f in frames) == len(grpc)  # padded back to what the server sent
    kind, flags, stream, payload = frames[0]
    body = pa._unpadded(flags, payload)
    assert pa._fields(body[5:]) == [(1, 2, b"127.0.0.1"), (2, 0, 40001)]


def test_an_answer_that_does_not_parse_passes_unchanged():
    from wirecheck.targets.safety import pravega_address as pa

    rewriter = pa.PravegaAddressRewriter(("127.0.0.1", 9090), _Forwarder())
    compressed = b"\x01" + len(b"xyz").to_bytes(4, "big") + b"xyz"
    frames = [pa._frame(pa.DATA, 0, 1, compressed[:4]), pa._frame(pa.DATA, pa.END_STREAM, 1, compressed[4:])]
    out = _exchange(rewriter, "getURI", frames)
    assert b"".join(p for *_, p in pa._frames(bytearray(out))) == compressed
    assert rewriter.passthrough and rewriter.response(b"later") == b"later"


def _grpc_message(message: bytes) -> bytes:
    return b"\x00" + len(message).to_bytes(4, "big") + message
