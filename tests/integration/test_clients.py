"""Running a real client (targets/clients.py): a hung client is stopped whole at its time limit and says how it
ended with its own last log lines; a driver's last JSON line is its result; the client matrix (reports/records.py)
is one row per client with its version and each scenario's verdict."""

from __future__ import annotations

import sys
import time

from wirecheck.reports.records import client_matrix
from wirecheck.targets.clients import last_json, run_client


def test_a_hung_client_and_what_it_started_are_stopped_at_the_time_limit():
    # the client starts a child that would outlive it: the process group goes with it
    script = ("import subprocess, sys, time; print('starting', file=sys.stderr, flush=True); "
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)")
    started = time.monotonic()
    run = run_client([sys.executable, "-c", script], timeout=1.0)
    assert run.timed_out and time.monotonic() - started < 10
    assert "still running after" in run.summary() and "starting" in run.summary()


def test_a_driver_result_is_its_last_json_line_and_waiting_is_said():
    run = run_client([sys.executable, "-c", "print('noise'); print('{\"waiting_for\": \"records (3 of 10)\"}')"])
    assert run.output == {"waiting_for": "records (3 of 10)"} and run.returncode == 0
    assert "waiting for records (3 of 10)" in run.summary()
    assert last_json("not json\n{broken") is None


def test_the_client_matrix_has_a_row_per_client_with_its_version():
    records = [{"case": "kafka.clients.kcat.produce-consume", "verdict": "OK", "facts": {"client_version": "1.7.1"}},
               {"case": "kafka.clients.kcat.compression", "verdict": "FAILED"},
               {"case": "kafka.fetch.records", "verdict": "OK"}]
    assert client_matrix(records) == [{"protocol": "kafka", "client": "kcat", "version": "1.7.1",
                                       "scenarios": {"produce-consume": "OK", "compression": "FAILED"}}]
