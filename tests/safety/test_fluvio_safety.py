"""The Fluvio safety workload's pieces: the SC's SPU objects rewritten to name a proxy listener (the real client then
produces and consumes through the proxy), and what its histories can and cannot show (the long runs under faults,
clean and with fluvio.safety-unsynced-tail-lost: BENCHMARKS.md "Safety")."""

import json
import subprocess
import sys

import pytest

from wirecheck.reports.safety import checker
from wirecheck.targets.safety import fluvio as workload
from wirecheck.targets.safety.proxy import FaultProxy

CLIENT = """
import json, sys
import fluvio
from wirecheck.targets.safety.fluvio import FluvioWorkload
from wirecheck.targets.safety.run import Run
import logging, os, random, time
from pathlib import Path
w = FluvioWorkload(sys.argv[1], sys.argv[2], Run(Path(os.devnull), time.monotonic()), random.Random(0),
                   logging.getLogger("t"))
w._create_topic(20)
client = w.connect()
ok = w._send(0, client, {})
reads = w._poll(1, client, dict.fromkeys(range(4), 0))
print(json.dumps({"sent": ok, "reads": reads}), flush=True)
"""


@pytest.mark.interop
def test_the_client_reaches_the_spu_only_through_the_proxy(tmp_path):
    pytest.importorskip("fluvio")
    from wirecheck.targets.launcher import launch

    broker = launch(["fluvio"], workdir=tmp_path / "broker")
    sc = broker.address("fluvio", "sc")
    spu = broker.address("fluvio")
    assert sc is not None and spu is not None
    proxy = FaultProxy(sc)
    proxy.rewriter = lambda: workload.address_rewriter(sc, proxy.address())
    try:
        proxy.start()
        done = subprocess.run([sys.executable, "-c", CLIENT, f"127.0.0.1:{proxy.port}", "safety-rewrite"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        seen = json.loads(done.stdout.splitlines()[-1])
        assert seen["sent"] and sum(map(len, seen["reads"].values())) >= 1, seen
        # the SPU's address was only ever learnt from a rewritten answer, which named a proxy listener
        assert set(proxy._forwarded) == {spu}, proxy._forwarded
    finally:
        proxy.stop()
        broker.stop()


def _op(index, type_, process, f, value, time, **extra):
    return {"index": index, "type": type_, "process": process, "time": time, "f": f, "value": value, **extra}


def test_a_lost_acknowledged_record_and_a_reused_offset_are_named():
    """A history as the workload records it after an SPU lost its last batch at a restart: the acknowledged value at
    offset 1 was never read, and offset 1 was handed out again."""
    key = "t/0"
    ops = [
        _op(0, "invoke", 1, "send", [["send", key, 10], ["send", key, 11]], 0.0),
        _op(1, "ok", 1, "send", [["send", key, [0, 10]], ["send", key, [1, 11]]], 0.1),
        _op(2, "invoke", 1, "send", [["send", key, 12]], 0.2),
        _op(3, "ok", 1, "send", [["send", key, [1, 12]]], 0.3),
        _op(4, "invoke", 2, "send", [["send", key, 13]], 0.4),
        _op(5, "ok", 2, "send", [["send", key, [2, 13]]], 0.5),
        _op(6, "invoke", 3, "assign", [key], 0.6),
        _op(7, "ok", 3, "assign", [key], 0.6),
        _op(8, "invoke", 3, "poll", [["poll"]], 0.7),
        _op(9, "ok", 3, "poll", [["poll", {key: [[0, 10], [1, 12], [2, 13]]}]], 0.8),
    ]
    result = checker.check(ops, workload.UNJUDGED)
    # Fluvio's sends carry offsets, so the send order is judged too: offset 1 again after 1 is no progress
    assert result.anomaly_counts == {"inconsistent-offsets": 1, "lost-write": 1, "nonmonotonic-send": 1,
                                     "nonmonotonic-send-realtime": 1}, result.anomaly_counts
    assert result.anomalies["lost-write"][0]["value"] == 11


def test_fluvio_leaves_only_the_transaction_kinds_unjudged():
    assert set(workload.UNJUDGED) == {"aborted-read", "precommitted-read"}
    assert set(workload.UNJUDGED) <= set(checker.KINDS)
