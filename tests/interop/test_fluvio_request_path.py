"""What the real Fluvio client sends, as the reference broker logs it (``--fluvio-request-log``): after the
client scenarios of the suite (suites/fluvio/test_clients.py, run here through the same driver), the client
used the whole SC + SPU path of the notes (§9), which suites/fluvio/README.md tabulates. The scenarios themselves
are suite cases (``fluvio.clients.fluvio-python.*``); this is about the broker's request log and that table."""

from __future__ import annotations

import base64
import json
import sys

import pytest

from wirecheck.targets.clients import run_client
from wirecheck.targets.launcher import launch

pytest.importorskip("fluvio", reason="the fluvio client (interop extra)")

pytestmark = pytest.mark.interop

DRIVER = [sys.executable, "-m", "wirecheck.suites.fluvio.clients.fluvio_driver"]
# (listener, api key) the client must have sent once the scenarios ran (notes §9 steps 2-7).
EXPECTED_PATH = {("sc", 18), ("sc", 1004), ("sc", 1001), ("sc", 1002), ("sc", 1003),
                 ("spu", 18), ("spu", 0), ("spu", 1002), ("spu", 1003), ("spu", 1005),
                 ("spu", 1006), ("spu", 1007), ("spu", 1008)}
#: the topic the client writes to, created through the SC before it runs (the suite does so with its SC client)
CREATE = """import sys, fluvio
config = fluvio.FluvioConfig.new(sys.argv[1]); config.disable_tls()
fluvio.FluvioAdmin.connect_with_config(config).create_topic(sys.argv[2])"""


def drive(sc: str, home, job: dict) -> None:
    run = run_client(DRIVER, json.dumps({"sc": sc, **job}), timeout=60, env={"HOME": str(home)})
    assert run.returncode == 0 and run.output and "waiting_for" not in run.output, run.summary()


def test_client_used_the_sc_and_spu_path(tmp_path):
    request_log = tmp_path / "requests.log"
    broker = launch(["fluvio"], workdir=tmp_path / "broker", extra_args=["--fluvio-request-log", str(request_log)])
    try:
        host, port = broker.address("fluvio", "sc")
        sc = f"{host}:{port}"
        value = base64.b64encode(b"path").decode()
        drive(sc, tmp_path, {"action": "topic-admin", "topic": "admin", "missing": "never-created"})
        created = run_client([sys.executable, "-c", CREATE, sc, "path"], timeout=30)
        assert created.returncode == 0, created.summary()
        drive(sc, tmp_path, {"action": "produce-consume", "topic": "path", "from_offset": 1, "from_end": 1,
                             "records": [{"key": value, "value": value}] * 2})
        drive(sc, tmp_path, {"action": "consumer-offsets", "topic": "path", "values": ["a", "b", "c", "d"],
                             "consumer": "reader"})
        seen = {(listener, int(key)) for listener, key, _version in
                (line.split() for line in request_log.read_text().splitlines())}
        assert EXPECTED_PATH <= seen, f"missing {sorted(EXPECTED_PATH - seen)}; seen {sorted(seen)}"
        assert broker.alive, f"broker {broker.exit_status()}:\n{broker.log_tail()}"
    finally:
        broker.stop()
