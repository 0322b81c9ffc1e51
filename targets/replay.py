"""Play a replay file (reports/replay.py) against a target and say whether its failure reproduces.

The steps run in their recorded order: connections are opened to the recorded endpoints, the recorded bytes are
sent, and each recorded reaction of the target (an answer, a close, a reset, silence) is read again and compared
with the one on record, decoded with the protocol's layers and outside its declared volatile fields, as
``--differential`` compares two servers. The failure reproduces when every reaction matches the failing run's
(and, for a target that died, when the target no longer answers afterwards): verdict FAILED under the recorded
clause. Any reaction that differs means it does not: verdict OK, naming the first difference. A reaction of the
case's setup (marked ``setup``) may differ without that: the setup passed in the failing run, and a server in
another state may answer it otherwise (a shared topic that existed then is new now); what follows decides.

    wirecheck replay FILE|DIR --target [PROTOCOL=]HOST:PORT [--endpoint NAME=HOST:PORT ...] [--deadline S]
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from wirecheck.protocols.registry import all_specs
from wirecheck.reports.replay import REPLAY_SCHEMA
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets import probe
from wirecheck.targets.differential import Comparator, RequestQueue
from wirecheck.targets.server_chosen import ServerChosen
from wirecheck.targets.transport.outcome import Outcome, Reply
from wirecheck.targets.transport import open_session

_KINDS = {"recv": Outcome.FRAME, "closed": Outcome.CLOSED, "reset": Outcome.RESET, "silent": Outcome.SILENT,
          "partial": Outcome.UNFRAMEABLE}


class ReplayError(Exception):
    """The file cannot be replayed (unknown schema or protocol, an HTTP conversation, no address for an
    endpoint)."""


@dataclass
class Replayed:
    reproduced: bool
    detail: str
    document: dict
    #: why the conversation cannot be played standalone ("" when it can): it reuses values the server chose
    #: that the replay could not carry over, so a difference says nothing about the target
    not_replayable: str = ""

    @property
    def verdict(self) -> str:
        return "FAILED" if self.reproduced else "NOT REPLAYABLE" if self.not_replayable else "OK"

    def line(self) -> str:
        doc = self.document
        if self.reproduced:
            return f"FAILED {doc['clause']} ({doc['case']}): reproduced, {self.detail}"
        if self.not_replayable:
            return (f"NOT REPLAYABLE {doc['case']}: {self.not_replayable}; {self.detail}; re-run the case instead: "
                    f"{doc.get('reproduce') or 'its reproduce line in the run'}")
        return f"OK {doc['case']}: the failure does not reproduce: {self.detail}"


def load(path: Path) -> dict:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path}: not a readable replay file: {exc}") from None
    if not isinstance(document, dict) or document.get("schema") != REPLAY_SCHEMA:
        raise ReplayError(f"{path}: not a {REPLAY_SCHEMA} file")
    if document.get("protocol") not in all_specs():
        raise ReplayError(f"{path}: unknown protocol {document.get('protocol')!r}")
    if any("http" in step for step in document["steps"]):
        raise ReplayError(f"{path}: an HTTP conversation; replay plays framed conversations only")
    return document


def replay(document: dict, addresses: dict[str, tuple[str, int]], deadline: float | None = None,
           transcript: Transcript | None = None) -> Replayed:
    """Play ``document`` against the endpoints in ``addresses`` (endpoint name -> address; "" is the primary)."""
    spec = all_specs()[document["protocol"]]
    deadline = deadline or document["deadline"]
    transcript = transcript or Transcript(spec.name, spec.describe, spec.describe_answer)
    old, new = f"wc-{document['nonce']}-".encode(), f"wc-{secrets.token_hex(3)}-".encode()
    sessions, queues, comparators = {}, {}, {}
    # what the case sent, its names renamed: server-wide listings are compared in the entries these bytes name
    sent = b"".join(bytes.fromhex(step["send"]).replace(old, new) for step in document["steps"] if "send" in step)
    chosen = ServerChosen(spec.reseal)
    reactions = setup_differed = 0
    # a failure inside the setup itself (of the case's own clause) is judged there
    setup_only = not any("expect" in step and not step.get("setup") for step in document["steps"])
    try:
        for step in document["steps"]:
            conn = step["conn"]
            if "connect" in step:
                endpoint = spec.endpoint(step["connect"] or None)
                shared = endpoint.shares_port_with
                address = addresses.get(endpoint.name) or (addresses.get(shared) if shared else None) or \
                    (addresses.get("") if endpoint is spec.primary else None)
                if address is None:
                    raise ReplayError(f"no address for the {spec.name} endpoint {endpoint.name!r}: give --endpoint "
                                      f"{endpoint.name}=HOST:PORT")
                try:
                    sessions[conn] = open_session(address, endpoint, transcript, deadline)
                except OSError as exc:
                    return Replayed(False, f"connection {conn} to {address[0]}:{address[1]} failed: {exc}", document)
                queues[conn], comparators[conn] = RequestQueue(endpoint.framing), Comparator(spec, endpoint, sent=sent)
            elif "send" in step and conn in sessions:
                if step.get("pause"):
                    time.sleep(step["pause"])
                recorded_bytes = bytes.fromhex(step["send"])  # a renamed resource inside a batch changes its CRC
                data = chosen.apply(recorded_bytes.replace(old, new), before=recorded_bytes)
                queues[conn].sent(data)
                sessions[conn].send(data)
            elif "expect" in step and conn in sessions:
                reactions += 1
                recorded = Reply(_KINDS[step["expect"]], bytes.fromhex(step.get("hex", "")).replace(old, new))
                if recorded.outcome is Outcome.UNFRAMEABLE:
                    recorded = Reply(Outcome.UNFRAMEABLE, partial=recorded.frame)
                got = sessions[conn].recv(deadline)
                request = queues[conn].answered() if got.is_frame else None
                found = _difference(comparators[conn], request, got, recorded)
                if found is not None and step.get("setup") and not setup_only:
                    setup_differed += 1  # the case's setup, answered otherwise here: what follows decides
                    continue  # (and the two answers say nothing about which values the server chose)
                if found is not None:
                    path, ours, theirs = found
                    # after a server-chosen value changed that the replay could not carry over, the difference
                    # may be the replay's own, not the target's
                    return Replayed(False, f"reaction #{reactions} (connection {conn}) differs at {path}: "
                                           f"the target {ours!r}, the failing run {theirs!r}", document,
                                    not_replayable=chosen.uncarried_text() or _why_not_standalone(document))
                chosen.learn(comparators[conn], request, recorded, got)
            elif "shutdown" in step and conn in sessions:
                sessions[conn].end_writing()
            elif "close" in step and conn in sessions:
                sessions.pop(conn).close()
    finally:
        for session in sessions.values():
            session.close()
    if document["clause"].endswith(".robustness.survives"):  # the failure was the target's death
        primary = addresses.get("") or addresses.get(spec.primary.name)
        if primary is None:
            raise ReplayError(f"no address for the {spec.name} endpoint {spec.primary.name!r}, whose liveness the "
                              f"replay checks")
        alive, what = probe.hello_answered(primary, spec, deadline)
        if alive:
            return Replayed(False, f"all {reactions} reactions match, and the target still answers", document)
        return Replayed(True, f"all {reactions} reactions match and the target stopped answering: {what}", document)
    setup = f" ({setup_differed} in the case's setup answered otherwise)" if setup_differed else ""
    return Replayed(True, f"the target reacts as in the failing run at all {reactions} reactions{setup}", document)


def _why_not_standalone(document: dict) -> str:
    """Why the case's conversation may not replay standalone, as the case said (cannot_replay, races); "" if not."""
    if document.get("not_replayable"):
        return document["not_replayable"]
    if not document.get("raced"):
        return ""
    return ("the case ran connections at once, and the order the server saw their requests in (which its answers "
            "follow) is not recorded")


def _difference(comparator: Comparator, request: bytes | None, got: Reply, recorded: Reply):
    if recorded.outcome is Outcome.UNFRAMEABLE or got.outcome is Outcome.UNFRAMEABLE:
        same = got.outcome is recorded.outcome and got.partial[:len(recorded.partial)] == recorded.partial
        return None if same else ("outcome", str(got), str(recorded))
    return comparator.difference(request, got, recorded)


def replay_files(path: Path) -> list[Path]:
    """A replay file, or every ``*.json`` replay file under a directory (a corpus), in name order."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*.json") if p.is_file())
    return [path]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wirecheck replay", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a replay file, or a directory of them")
    parser.add_argument("--target", required=True, metavar="[PROTOCOL=]HOST:PORT",
                        help="the server to replay against (its primary endpoint)")
    parser.add_argument("--endpoint", action="append", default=[], metavar="NAME=HOST:PORT",
                        help="the address of another endpoint of the protocol (e.g. sc=127.0.0.1:9003)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds to wait for each reaction (default: the failing run's)")
    args = parser.parse_args(argv)
    try:
        addresses = {"": probe.parse_address(args.target.rpartition("=")[2])}
        for text in args.endpoint:
            name, _, address = text.partition("=")
            addresses[name] = probe.parse_address(address)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    files = replay_files(args.path)
    if not files:
        parser.error(f"{args.path}: no replay files")
    reproduced = problems = 0
    for path in files:
        try:
            result = replay(load(path), addresses, args.deadline)
        except ReplayError as exc:
            print(f"ERROR {exc}")
            problems += 1
            continue
        print(f"{path}: {result.line()}")
        reproduced += result.reproduced
        problems += bool(result.not_replayable) and not result.reproduced
    print(f"{len(files)} replayed: {reproduced} reproduced, {len(files) - reproduced - problems} not, "
          f"{problems} could not be replayed")
    return 1 if reproduced else (4 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
