"""The run directory: run.json, one JSON-lines file of case records per worker, transcripts.

Schema: docs/report-schema.md (``wirecheck.run/1``, ``wirecheck.case/2``, ``wirecheck.transcript/1``).
The writer is a subscriber of the runner's event stream (reports/events.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from wirecheck.reports.events import CaseRecord, RunFinished, VerdictReached

from wirecheck.reports.api_support import api_support
from wirecheck.reports.replay import replay_document
from wirecheck.reports.rootcause import by_clause
from wirecheck.reports.coverage_maps import merged
from wirecheck.protocols.clients import scenario_of
from wirecheck.protocols.transcript import Event, Transcript
from wirecheck.protocols.verdicts import Verdict

RUN_SCHEMA = "wirecheck.run/1"
CASE_SCHEMA = "wirecheck.case/2"  # /2: protocol-neutral "message" and "version" (were "api", "api_version");
# later /2 records add "attempts" and the verdicts TARGET-DOWN, BLOCKED, FLAKY (readers ignore unknown fields)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def suite_version() -> str:
    try:
        return metadata.version("wirecheck")
    except metadata.PackageNotFoundError:
        return "0+unknown"


_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def transcript_stem(nodeid: str) -> str:
    """A case's file name stem in transcripts/ (its test id, made safe for a file name)."""
    return _SLUG.sub("_", nodeid.split("::")[-1])[:120]


@dataclass
class Evidence:
    """Files a case leaves beside its transcript, written when the transcript is kept (a failing case, or
    --keep-transcripts), e.g. a real client's capture and log. Their names are chosen when they are made, so that
    the verdict can name them; the record gets ``summary`` under ``record_field`` with the written paths added."""

    record_field: str
    summary: dict
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # summary key -> (name in transcripts/, bytes)


def run_head(run_id: str, meta: dict) -> dict:
    """run.json as it is when the run starts (``run_document`` completes it at the end)."""
    return {"schema": RUN_SCHEMA, "run_id": run_id, "suite_version": suite_version(), "started_at": _now(),
            "finished_at": None, **meta, "totals": {}}


class RunWriter:
    """Writes nothing until the first case record: a pytest run without conformance cases leaves no directory.
    ``head``: run.json as the run starts (``run_head``)."""

    def __init__(self, root: Path, head: dict, worker: str, pcap: bool = False):
        self.run_id = head["run_id"]
        self.pcap = pcap  # also write each kept transcript as a pcap
        self.worker = worker
        self.run_dir = root.resolve() / self.run_id
        self.cases_path = self.run_dir / f"cases-{worker}.jsonl"
        self._run = head
        self._slugs: Counter = Counter()
        self._started = False
        #: what replay files need from the run (the name nonce, the deadline); None: no replay files
        self.replay_context: dict | None = None

    # -- the event stream

    def handle(self, event) -> None:
        if isinstance(event, VerdictReached):
            self.write_case(self.case_record(event.case))
        elif isinstance(event, RunFinished) and event.controller and event.document is not None:
            if event.revised:
                self.rewrite(event.records)
            self._run = dict(event.document)
            self._write_run()

    def case_record(self, case: CaseRecord) -> dict:
        div = case.divergence
        clause = div.clause if div is not None else case.clause
        transcript_path = None
        if case.transcript is not None:
            transcript_path = self.write_transcript(case.case_id, case.nodeid, case.transcript, pcap=self.pcap,
                                                    attempts=case.attempts)
        record = {
            "case": case.case_id,
            "nodeid": case.nodeid,
            "protocol": case.protocol,
            "clause": clause.id,
            "requirement": clause.requirement,
            "source": clause.source,
            "level": clause.level.value,
            "verdict": case.verdict.value,
            "message": case.message,
            "expected": div.expected if div else None,
            "actual": div.actual if div else None,
            "duration_s": case.duration_s,
            "target": case.target,
            "message_type": case.message_type,
            "version": case.version,
            "transcript": transcript_path,
            "reproduce": case.reproduce,
            "worker": self.worker,
            "attempts": len(case.attempts) + 1,
        }
        for evidence in case.evidence:
            kept = self.write_evidence(evidence) if transcript_path is not None else {}
            record.setdefault(evidence.record_field, []).append({**evidence.summary, **kept})
        if case.blocking is not None:
            record["blocked_by"] = blocked_by(case.blocking)
        if case.facts:
            record["facts"] = dict(case.facts)
        if case.coverage:  # a bulk case: the reaction states it drove the target into
            record["coverage"] = dict(case.coverage)
        if case.differential is not None:  # --differential: answers compared of answers exchanged
            record["differential"] = dict(case.differential)
        if case.transcript is not None and transcript_path is not None and case.verdict.kept:
            record["replay"] = self.write_replay(record, case.transcript, transcript_path)
        return record

    def write_evidence(self, evidence: Evidence) -> dict:
        """Write the evidence's files into transcripts/; their paths relative to the run directory, by key."""
        self._ensure_started()
        written = {}
        for key, (name, data) in evidence.files.items():
            path = self.run_dir / "transcripts" / name
            path.write_bytes(data)
            written[key] = str(path.relative_to(self.run_dir))
        return written

    def write_replay(self, record: dict, transcript: Transcript, transcript_path: str) -> str | None:
        """The case's replay file beside its transcript (``replays/<same name>.json``); its relative path."""
        if self.replay_context is None:
            return None
        document = replay_document(record, transcript, **self.replay_context)
        if document is None:
            return None
        path = self.run_dir / "replays" / Path(transcript_path).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document))
        return str(path.relative_to(self.run_dir))

    def _ensure_started(self) -> None:
        if self._started:
            return
        (self.run_dir / "transcripts").mkdir(parents=True, exist_ok=True)
        if not (self.run_dir / "run.json").exists():
            self._write_run()
        self._started = True

    def _write_run(self) -> None:
        tmp = self.run_dir / f"run.json.{self.worker}.tmp"
        tmp.write_text(json.dumps(self._run, indent=2))
        tmp.replace(self.run_dir / "run.json")

    def write_case(self, record: dict) -> None:
        self._ensure_started()
        line = {"schema": CASE_SCHEMA, "run_id": self.run_id, **record, "finished_at": _now()}
        with open(self.cases_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def write_transcript(self, case_id: str, nodeid: str, transcript: Transcript, pcap: bool = False,
                         attempts: Sequence[tuple[str, Sequence[Event]]] = ()) -> str:
        """Write the transcript (and, if asked, a pcap of it: ~0.1 s each with scapy); returns its relative path.
        ``attempts``: (outcome, events) of the earlier runs of a re-run case (--confirm), kept beside the last."""
        self._ensure_started()
        stem = transcript_stem(nodeid)
        self._slugs[stem] += 1
        name = f"{self.worker}-{stem}-{self._slugs[stem]}"
        data = transcript.to_dict(case_id, nodeid)
        if attempts:
            data["attempts"] = [{"attempt": n, "outcome": outcome,
                                 "events": [e.to_dict(transcript.describe) for e in events]}
                                for n, (outcome, events) in enumerate(attempts, 1)]
        path = self.run_dir / "transcripts" / f"{name}.json"
        path.write_text(json.dumps(data))
        if pcap:
            from wirecheck.reports.pcap import write_pcap

            write_pcap(data, path.with_suffix(".pcap"))
        return str(path.relative_to(self.run_dir))

    def rewrite(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Replace every worker's case records with ``records`` (the controller, once every worker is done)."""
        by_worker: dict[str, list[Mapping[str, Any]]] = {}
        for record in records:
            by_worker.setdefault(record.get("worker") or self.worker, []).append(record)
        for path in self.run_dir.glob("cases-*.jsonl"):
            mine = by_worker.pop(path.stem.removeprefix("cases-"), [])
            tmp = path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(json.dumps(dict(record)) + "\n" for record in mine), encoding="utf-8")
            tmp.replace(path)


def read_records(run_dir: Path) -> list[dict]:
    """Every worker's case records (the controller merges them once, at the run's end)."""
    if not run_dir.exists():
        return []
    records = []
    for path in sorted(run_dir.glob("cases-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def totals(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Verdict counts."""
    return dict(Counter(record["verdict"] for record in records))


def headline(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The run in one line when targets died: "target died at case X after frame Y; N cases not run"."""
    not_run = Counter(record["message"] for record in records if record["verdict"] == Verdict.TARGET_DOWN.value)
    return "; ".join(f"{why}; {n} case{'s' if n > 1 else ''} not run" for why, n in not_run.items()) or None


def run_document(head: Mapping[str, Any], records: Sequence[Mapping[str, Any]], exit_status: int | None) -> dict:
    """run.json at the run's end: ``head`` with the totals, the headline and the summaries of ``records``."""
    document = dict(head, finished_at=_now(), exit_status=exit_status, totals=totals(records),
                    headline=headline(records), failures_by_clause=[group.to_dict() for group in by_clause(records)],
                    clients=client_matrix(records), api_support=api_support(records))
    covered = coverage_by_protocol(records)
    if covered:
        document["coverage"] = covered
    compared = differential_totals(records)
    if compared is not None:
        document["differential"] = compared
    return document


def replay_command(run_dir: Path, document: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    """``wirecheck replay FILE --target P=HOST:PORT`` for a case with a replay file, when its target outlives
    the run (a reference broker the run started is gone: re-run the case with its ``reproduce`` line)."""
    targets = document.get("targets") or {}
    target = targets.get(record.get("protocol")) or targets.get("*") or {}
    if not record.get("replay") or not record.get("target") or target.get("reference", True):
        return None
    return shlex.join(["wirecheck", "replay", str(run_dir / record["replay"]), "--target",
                       f"{record['protocol']}={record['target']}"])


def coverage_by_protocol(records) -> dict:
    """protocol -> the state-coverage map of its bulk cases, merged (strategies/coverage.py)."""
    maps: dict[str, list[dict]] = {}
    for record in records:
        for protocol, one in (record.get("coverage") or {}).items():
            maps.setdefault(protocol, []).append(one)
    return {protocol: merged(found) for protocol, found in sorted(maps.items())}


def differential_totals(records) -> dict | None:
    """--differential: answers compared against answers exchanged over the run, and the cases that compared only
    part of theirs; None when no case was mirrored."""
    tallies = [(record["case"], record["differential"]) for record in records if record.get("differential")]
    if not tallies:
        return None
    compared, exchanged = (sum(tally[key] for _, tally in tallies) for key in ("compared", "exchanged"))
    apart: dict[str, int] = {}  # answers no equality judges (Tally.apart), by why
    for _, tally in tallies:
        for why, count in (tally.get("apart") or {}).items():
            apart[why] = apart.get(why, 0) + count
    return {"compared": compared, "exchanged": exchanged, "apart": apart,
            "percent": round(100 * compared / exchanged, 1) if exchanged else 100.0,
            "cases": len(tallies), "cases_compared_in_part": sum(t["compared"] < t["exchanged"] for _, t in tallies)}


def client_matrix(records) -> list[dict]:
    """The real-client cases (``<protocol>.clients.<client>.<scenario>``) as one row per protocol and client:
    its version (the case's ``client_version`` fact) and each scenario's verdict."""
    rows: dict[tuple[str, str], dict] = {}
    for record in records:
        parts = scenario_of(record["case"])
        if parts is None:
            continue
        protocol, client, scenario = parts
        row = rows.setdefault((protocol, client), {"protocol": protocol, "client": client, "version": None,
                                                   "scenarios": {}})
        row["version"] = (record.get("facts") or {}).get("client_version") or row["version"]
        row["scenarios"][scenario] = record["verdict"]
    return [rows[key] for key in sorted(rows)]


def blocked_by(div) -> dict:
    """What blocked a case: the clause that broke (whole, so that the case can carry it) and what was seen."""
    return {"clause": div.clause.id, "requirement": div.clause.requirement, "source": div.clause.source,
            "level": div.clause.level.value, "expected": div.expected, "actual": div.actual}
