"""The run directory: run.json, one JSON-lines file of case records per worker, transcripts.

Schema: docs/report-schema.md (``wirecheck.run/1``, ``wirecheck.case/2``, ``wirecheck.transcript/1``).
The writer is a subscriber of the runner's event stream (reports/events.py).
"""

from __future__ import annotations

from wirecheck.reports.events import RunFinished, VerdictReached

import datetime as dt
import json
import re
import shlex
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from wirecheck.reports.api_support import api_support, version_matrix
from wirecheck.reports.replay import replay_document
from wirecheck.reports.rootcause import by_clause
from wirecheck.reports.coverage_maps import merged
from wirecheck.protocols.clients import scenario_of
from wirecheck.protocols.transcript import Event, Transcript

RUN_SCHEMA = "wirecheck.run/1"
CASE_SCHEMA = "wirecheck.case/2"  # /2: protocol-neutral "message" and "version" (were "api", "api_version");
# later /2 records add "attempts" and the verdicts TARGET-DOWN, BLOCKED, FLAKY (readers ignore unknown fields)


#: verdicts of cases that passed or never talked to the target: no replay file
NO_REPLAY = ("OK", "NOT-RUN", "UNIMPLEMENTED", "TARGET-DOWN")


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


class RunWriter:
    """Writes nothing until the first case record: a pytest run without conformance cases leaves no directory."""

    def __init__(self, root: Path, run_id: str, worker: str, meta: dict, pcap: bool = False):
        self.run_id = run_id
        self.pcap = pcap  # also write each kept transcript as a pcap
        self.worker = worker
        self.run_dir = root.resolve() / run_id
        self.cases_path = self.run_dir / f"cases-{worker}.jsonl"
        self._run = {"schema": RUN_SCHEMA, "run_id": run_id, "suite_version": suite_version(),
                     "started_at": _now(), "finished_at": None, **meta, "totals": {}}
        self._slugs: Counter = Counter()
        self._started = False
        #: what replay files need from the run (the name nonce, the deadline); None: no replay files
        self.replay_context: dict | None = None

    # -- the event stream

    def handle(self, event) -> None:
        if isinstance(event, VerdictReached):
            self.write_case(self.case_record(event))
        elif isinstance(event, RunFinished) and event.controller:
            self.write_run_end(event.exit_status)

    def case_record(self, event) -> dict:
        state, div = event.case, event.divergence
        clause = div.clause if div is not None else state.clause
        transcript_path = None
        if event.keep_transcript and (state.transcript.events or state.attempts):
            transcript_path = self.write_transcript(state.case_id, state.nodeid, state.transcript, pcap=self.pcap,
                                                    attempts=state.attempts)
        record = {
            "case": state.case_id,
            "nodeid": state.nodeid,
            "protocol": state.spec.name,
            "clause": clause.id,
            "requirement": clause.requirement,
            "source": clause.source,
            "level": clause.level.value,
            "verdict": event.verdict.value,
            "message": event.message,
            "expected": div.expected if div else None,
            "actual": div.actual if div else None,
            "duration_s": round(time.monotonic() - state.started, 6),
            "target": state.info.text if state.info else None,
            "message_type": _param(event.params.get(state.spec.message_param)),
            "version": event.params.get(state.spec.version_param),
            "transcript": transcript_path,
            "reproduce": event.reproduce,
            "worker": self.worker,
            "attempts": len(state.attempts) + 1,
        }
        for evidence in getattr(state, "evidence", ()):
            kept = self.write_evidence(evidence) if transcript_path is not None else {}
            record.setdefault(evidence.record_field, []).append({**evidence.summary, **kept})
        if event.blocking is not None:
            record["blocked_by"] = blocked_by(event.blocking)
        if state.facts:
            record["facts"] = dict(state.facts)
        if getattr(state, "coverage", None):  # a bulk case: the reaction states it drove the target into
            record["coverage"] = dict(state.coverage)
        if getattr(state, "tally", None) is not None:  # --differential: answers compared of answers exchanged
            record["differential"] = state.tally.as_dict()
        if transcript_path is not None and event.verdict.value not in NO_REPLAY:
            record["replay"] = self.write_replay(record, state.transcript, transcript_path)
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

    def write_run_end(self, exit_status: int | None = None) -> None:
        """Called by the controlling process: final totals, if any case ran in any worker."""
        if not self.run_dir.exists():
            return
        records = list(self.records())
        self._run.update(finished_at=_now(), exit_status=exit_status, totals=self.totals(), headline=self.headline(),
                         failures_by_clause=[group.to_dict() for group in by_clause(records)],
                         clients=client_matrix(records), api_support=api_support(records))
        covered = coverage_by_protocol(records)
        if covered:
            self._run["coverage"] = covered
        compared = differential_totals(records)
        if compared is not None:
            self._run["differential"] = compared
        self._write_run()

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

    def records(self):
        """Every worker's case records so far."""
        if not self.run_dir.exists():
            return
        for path in sorted(self.run_dir.glob("cases-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)

    def rewrite(self, records: list[dict]) -> None:
        """Replace every worker's case records with ``records`` (the controller, once every worker is done)."""
        by_worker: dict[str, list[dict]] = {}
        for record in records:
            by_worker.setdefault(record.get("worker") or self.worker, []).append(record)
        for path in self.run_dir.glob("cases-*.jsonl"):
            mine = by_worker.pop(path.stem.removeprefix("cases-"), [])
            tmp = path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(json.dumps(record) + "\n" for record in mine), encoding="utf-8")
            tmp.replace(path)

    def replay_command(self, record: dict) -> str | None:
        """``wirecheck replay FILE --target P=HOST:PORT`` for a case with a replay file, when its target outlives
        the run (a reference broker the run started is gone: re-run the case with its ``reproduce`` line)."""
        targets = self._run.get("targets") or {}
        target = targets.get(record.get("protocol")) or targets.get("*") or {}
        if not record.get("replay") or not record.get("target") or target.get("reference", True):
            return None
        return shlex.join(["wirecheck", "replay", str(self.run_dir / record["replay"]), "--target",
                           f"{record['protocol']}={record['target']}"])

    def totals(self) -> dict[str, int]:
        """Verdict counts over every worker's records."""
        return dict(Counter(record["verdict"] for record in self.records()))

    def headline(self) -> str | None:
        """The run in one line when targets died: "target died at case X after frame Y; N cases not run"."""
        not_run = Counter(record["message"] for record in self.records() if record["verdict"] == "TARGET-DOWN")
        return "; ".join(f"{why}; {n} case{'s' if n > 1 else ''} not run" for why, n in not_run.items()) or None

    def version_matrix(self) -> dict[tuple[str, str], dict[int, str]]:
        """(protocol, message) -> {version: verdict} for the per-version cases of versioned protocols."""
        return version_matrix(self.records())


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


def _param(value):
    """The message a per-version case sends, as text (an API name or a numeric key alike)."""
    return None if value is None else str(value)
