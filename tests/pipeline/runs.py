"""Synthetic run directories in the documented layout (docs/report-schema.md), for the pipeline tests."""

from __future__ import annotations

import json
from pathlib import Path

REFERENCE_ADDRESS = "127.0.0.1:40001"
VENDOR = "127.0.0.1:9092"


def case(run_id: str, nodeid: str, verdict: str, *, clause: str = "rustlog.framing.zero-length",
         protocol: str = "rustlog", target: str | None = VENDOR, level: str = "MUST", api: str | None = None,
         api_version: int | None = None, transcript: str | None = None, finished_at: str = "2026-11-21T23:30:05Z",
         message: str = "") -> dict:
    return {
        "schema": "wirecheck.case/1", "run_id": run_id, "case": nodeid.split("::")[-1], "nodeid": nodeid,
        "protocol": protocol, "clause": clause, "requirement": f"requirement of {clause}",
        "source": "seed §Frame Structure", "level": level, "verdict": verdict, "message": message,
        "expected": "connection closed" if verdict == "FAILED" else None,
        "actual": "Error 400, still open" if verdict == "FAILED" else None,
        "duration_s": 0.01, "target": target, "api_version": api_version, "api": api, "transcript": transcript,
        "reproduce": f"pytest '{nodeid}' --target={target}", "worker": "main", "finished_at": finished_at,
    }


def transcript(nodeid: str, port: int = 9092) -> dict:
    ping = b'{"type":"Ping"}'
    frame = len(ping).to_bytes(4, "big") + ping
    return {"schema": "wirecheck.transcript/1", "case": nodeid.split("::")[-1], "nodeid": nodeid,
            "protocol": "rustlog", "events": [
                {"t": 0.0, "conn": 1, "kind": "connect", "peer": f"127.0.0.1:{port}", "local": "127.0.0.1:53211"},
                {"t": 0.001, "conn": 1, "kind": "send", "hex": frame.hex(), "decoded": "Ping {}"},
                {"t": 0.002, "conn": 1, "kind": "recv", "hex": frame.hex(), "decoded": "Ping {} (echoed)"},
                {"t": 0.003, "conn": 1, "kind": "close", "detail": "by us"}]}


def write_run(root: Path, run_id: str, records: list[dict], *, started_at: str = "2026-11-21T23:30:00Z",
              suite_version: str = "0.1.0", targets: dict | None = None, transcripts: dict | None = None,
              workers: int = 1, finished_at: str | None | bool = True, extra: dict | None = None) -> Path:
    """Write one run directory; records are spread over ``workers`` cases-*.jsonl files like xdist would.

    ``finished_at`` True: the run finished when it started; None: it crashed (or is still running). ``extra``:
    more fields of run.json (``coverage``, ...).
    """
    run_dir = root / run_id
    (run_dir / "transcripts").mkdir(parents=True, exist_ok=True)
    if targets is None:
        targets = {"rustlog": {"address": VENDOR, "reference": False, "faults": []}}
    totals: dict[str, int] = {}
    for record in records:
        totals[record["verdict"]] = totals.get(record["verdict"], 0) + 1
    run = {"schema": "wirecheck.run/1", "run_id": run_id, "suite_version": suite_version, "started_at": started_at,
           "finished_at": started_at if finished_at is True else finished_at, "profile": "ci", "strict": False, "baseline": None, "targets": targets,
           "argv": ["suites/"], "totals": totals, **(extra or {})}
    (run_dir / "run.json").write_text(json.dumps(run, indent=2))
    names = ["main"] if workers == 1 else [f"gw{i}" for i in range(workers)]
    for i, name in enumerate(names):
        lines = [json.dumps(r) for r in records[i::len(names)]]
        (run_dir / f"cases-{name}.jsonl").write_text("".join(line + "\n" for line in lines))
    for rel, content in (transcripts or {}).items():
        (run_dir / rel).write_text(json.dumps(content))
    return run_dir


FRAMING = "suites/rustlog/test_framing.py"
ZERO, OVERSIZE, UTF8 = "rustlog.framing.zero-length", "rustlog.framing.oversize", "rustlog.framing.invalid-utf8"
FETCH = "rustlog.fetch.records"
BLOCKED_BY = "precondition produce failed on rustlog.produce.offsets: Error 500"


def kcat(run_id: str, verdict: str = "OK", version: str = "1.7.1") -> dict:
    """A real-client case record (``<protocol>.clients.<client>.<scenario>``) with the client's version."""
    record = case(run_id, "suites/kafka/test_clients.py::test_produce_consume[kcat]", verdict, protocol="kafka",
                  clause="kafka.clients.kcat.produce-consume", target=REFERENCE_ADDRESS)
    return {**record, "case": "kafka.clients.kcat.produce-consume", "facts": {"client_version": version}}


def write_history(root: Path) -> None:
    """r1 and r2 against a vendor RustLog; r3 against the reference Kafka broker; r4 executed nothing.

    - zero-length: r1 OK; r2 two parameters, OK and NON-STRICT (worst wins: NON-STRICT; pass rate 3/3)
    - oversize: r1 OK, r2 FAILED (a regression, and flaky: mixed verdicts for one suite version)
    - invalid-utf8: r1 FAILED, r2 OK (pass rate 1/2, flaky, not a regression)
    - fetch.records: BLOCKED in r1 and r2 (its precondition, a produce, failed: the clause was never reached)
    - r3: Kafka Produce v3 OK, v9 FAILED; a barco record (no catalogue for barco exists); a real client (kcat)
    """
    def blocked(run_id):
        return case(run_id, "suites/rustlog/test_fetch.py::test_records", "BLOCKED", clause=FETCH,
                    message=BLOCKED_BY)

    write_run(root, "r1", [case("r1", f"{FRAMING}::test_zero[a]", "OK", clause=ZERO),
                           case("r1", f"{FRAMING}::test_oversize", "OK", clause=OVERSIZE),
                           case("r1", f"{FRAMING}::test_utf8", "FAILED", clause=UTF8), blocked("r1")],
              started_at="2026-11-20T10:00:00Z")
    write_run(root, "r2", [case("r2", f"{FRAMING}::test_zero[a]", "OK", clause=ZERO),
                           case("r2", f"{FRAMING}::test_zero[b]", "NON-STRICT", clause=ZERO, level="SHOULD"),
                           case("r2", f"{FRAMING}::test_oversize", "FAILED", clause=OVERSIZE,
                                message="stayed open after an oversize frame",
                                transcript="transcripts/oversize.json"),
                           case("r2", f"{FRAMING}::test_utf8", "OK", clause=UTF8), blocked("r2")],
              started_at="2026-11-21T10:00:00Z", workers=2,
              transcripts={"transcripts/oversize.json": transcript(f"{FRAMING}::test_oversize")})
    kafka = {"kafka": {"address": REFERENCE_ADDRESS, "reference": True, "faults": []},
             "barco": {"address": "127.0.0.1:40002", "reference": True, "faults": []}}
    write_run(root, "r3", [case("r3", "suites/kafka/test_produce.py::test_v[3]", "OK", protocol="kafka",
                                clause="kafka.framing.size-prefix", target=REFERENCE_ADDRESS, api="Produce",
                                api_version=3),
                           case("r3", "suites/kafka/test_produce.py::test_v[9]", "FAILED", protocol="kafka",
                                clause="kafka.framing.size-prefix", target=REFERENCE_ADDRESS, api="Produce",
                                api_version=9),
                           case("r3", "suites/barco/test_x.py::test_x", "OK", protocol="barco",
                                clause="barco.framing.x", target="127.0.0.1:40002"), kcat("r3")],
              started_at="2026-11-21T11:00:00Z", targets=kafka)
    write_run(root, "r4", [case("r4", f"{FRAMING}::test_zero[a]", "NOT-RUN", clause=ZERO, target=None)],
              started_at="2026-11-21T12:00:00Z")
