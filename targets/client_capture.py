"""A real client's loopback traffic, captured while it runs and kept to the client's own connections.

tcpdump (a real capture tool: CI installs it) listens on ``lo`` with a filter on the target's ports, from before a
client scenario's first client run until the scenario ends. Other cases (another xdist worker) may talk to the same
ports meanwhile, so only the client's own connections are kept:

- where the protocol's capture module tells a request's client id (``client_id(frame)``, e.g. Kafka's request
  header), each scenario gives its client runs a unique one (``job["client_id"]``), and a connection is the
  client's when one of its requests carries it, alone or as ``<id>/<role>`` ("by client id");
- elsewhere, the connections opened during the capture (their handshake was captured) from a source port none of
  the case's own sessions used ("by source port"): another worker's connections to the same port in that time
  are then kept too, which the record says.

What is kept goes beside the case's transcript (reports.records.Evidence): the filtered pcap, the client's frames
decoded by the protocol's describers (a ``wirecheck.transcript/1`` document) and the client's whole log. A capture
is evidence, never a verdict: where tcpdump is missing or may not capture, the client runs all the same and the
record says why nothing was captured. It is bounded: CAPTURE_LIMIT bytes of raw capture, then it stops and says so.
"""

from __future__ import annotations

import importlib
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wirecheck.protocols.clients import ClientDefect, scenario_of
from wirecheck.protocols.spec import Endpoint, describe_bytes
from wirecheck.protocols.transcript import Event
from wirecheck.reports.pcap import pcap_records
from wirecheck.reports.pipeline.captures.flows import Flow, read_capture, tcp_records
from wirecheck.reports.records import Evidence
from wirecheck.targets.differential import RequestQueue

if TYPE_CHECKING:
    from wirecheck.targets.runner.target import Target

TCPDUMP = "tcpdump"
INSTALL = "apt-get install tcpdump"
CAPTURE_LIMIT = 64 * 1024 * 1024  # bytes of raw capture (all connections to the ports) kept per scenario
LOG_LIMIT = 16 * 1024 * 1024  # characters of one client run's log kept
MAX_EVENTS = 5000  # events of the decoded client transcript (the first ones; the pcap has every packet)
START_LIMIT = 10.0  # seconds tcpdump may take to open the interface
FLUSH_LIMIT = 10.0  # seconds for the end marker to come through the capture (it follows every earlier packet)
STOP_LIMIT = 5.0
#: the kernel ring tcpdump reads from (KiB), and no --immediate-mode: the ring is handed over in blocks, which
#: immediate mode retires a packet or two each, so a burst met a full ring while tcpdump waited for a shared core
#: (measured on a loaded 2-core machine, 300 connections of 2 kB, ~2,400 packets: 300-1,900 dropped with
#: --immediate-mode, at 2 MiB or 32 MiB; none without it). The price: the end marker comes with its block, within
#: tcpdump's 1 s block timeout
BUFFER_KIB = 32768
#: datagrams after the end marker, one each PADDING_PAUSE seconds until it comes through: they fill the ring block
#: that holds it (512 KiB at tcpdump's default snapshot length), which tcpdump gets at once instead of after its
#: 1 s timeout (measured: a stop in 0.06 s instead of 0.99 s)
PADDING, PADDINGS, PADDING_PAUSE = 60_000, 64, 0.01
RECORD_FIELD = "client_capture"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


class Tcpdump:
    """tcpdump on ``lo`` writing a pcap to our pipe. Its end is marked: a UDP datagram carrying a random token to a
    port of our own, inside the filter; once the token has come through, every packet captured before it has."""

    def __init__(self, ports: set[int], limit: int = CAPTURE_LIMIT, command: str | None = None):
        self.ports, self.limit, self.command = sorted(ports), limit, command or TCPDUMP
        self.data = bytearray()
        self.capped = False
        self.marker_seen = False  # the end marker came through: every packet before it was captured
        self.stderr: list[str] = []
        self._proc: subprocess.Popen | None = None
        self._listening = False  # tcpdump said "listening on lo": it captures from here on
        self._decided = threading.Event()
        self._marked = threading.Event()
        self._token = secrets.token_bytes(16)
        self._marker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # receives the end marker (never read)
        self._marker.bind(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []

    def start(self) -> str | None:
        """None once tcpdump captures, else why it does not (the capture is then not made)."""
        path = shutil.which(self.command)
        if path is None:
            self._marker.close()
            return f"{self.command} is not installed here ({INSTALL})"
        marker_port = self._marker.getsockname()[1]
        expression = " or ".join([f"tcp port {port}" for port in self.ports] + [f"udp dst port {marker_port}"])
        try:
            self._proc = subprocess.Popen([path, "-i", "lo", "-n", "-U", "-B", str(BUFFER_KIB),
                                           "-w", "-", expression],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            self._marker.close()
            return f"{self.command} did not start: {exc}"
        self._threads = [threading.Thread(target=self._read_capture, daemon=True),
                         threading.Thread(target=self._read_messages, daemon=True)]
        for thread in self._threads:
            thread.start()
        self._decided.wait(START_LIMIT)  # tcpdump said it is listening, or its stderr ended
        if not self._listening:
            self._end()
            said = " ".join(line.strip() for line in self.stderr if line.strip())[:500]
            return f"{self.command} did not capture on lo: {said or 'no word from it'}"
        return None

    def _read_capture(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        tail = b""
        while chunk := os.read(self._proc.stdout.fileno(), 65536):
            if self.marker_seen or self.capped:
                continue  # drained until tcpdump ends: after the end marker come only its padding datagrams
            found = (tail + chunk).find(self._token)
            if found >= 0:  # keep up to the marker's end (its datagram is the token alone)
                chunk = chunk[:found + len(self._token) - len(tail)]
            tail = (tail + chunk)[-len(self._token):]
            room = self.limit - len(self.data)
            self.data += chunk[:room]
            if len(chunk) > room:
                self.capped = True
                self._proc.send_signal(signal.SIGTERM)
            if found >= 0 or self.capped:
                self.marker_seen = found >= 0
                self._marked.set()  # nothing after this is kept: no need to wait any longer
        self._marked.set()  # tcpdump's output ended: nothing more will come

    def _read_messages(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.stderr.append(line)
            if "listening on" in line:
                self._listening = True
                self._decided.set()
        self._decided.set()  # tcpdump ended: start() stops waiting

    def stop(self) -> list[str]:
        """Stop after every packet up to now was captured; what to know about the capture."""
        notes, ended_early = [], False
        if not self.capped:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                sender.sendto(self._token, self._marker.getsockname())
                for _ in range(PADDINGS):  # fill the marker's block: it is handed over now, not at the timeout
                    if self._marked.wait(PADDING_PAUSE):
                        break
                    sender.sendto(bytes(PADDING), self._marker.getsockname())
            marked = self._marked.wait(FLUSH_LIMIT)
            ended_early = marked and not self.marker_seen and not self.capped
            if not marked:
                notes.append(f"the capture's end marker did not come through tcpdump within {FLUSH_LIMIT:.0f} s: "
                             "its last packets may be missing")
        self._end()
        if ended_early:  # said after _end: its last words are read by then
            said = " ".join(line.strip() for line in self.stderr[-3:])[:300]
            notes.append(f"tcpdump ended during the capture ({said or 'without a word'}): packets after that are "
                         "missing")
        if self.capped:
            notes.append(f"capture stopped at its limit of {self.limit} bytes: later packets were not kept")
        dropped = [line.strip() for line in self.stderr if "dropped by kernel" in line and not line.startswith("0 ")]
        notes += [f"tcpdump: {line}" for line in dropped]
        return notes

    def _end(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_LIMIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for thread in self._threads:
            thread.join(STOP_LIMIT)
        self._marker.close()


@dataclass
class Kept:
    """The client's connections in a capture, and how they were told from the others."""

    flows: list[Flow]
    how: str  # "client id" or "source port"
    seen: int  # connections to the target's ports in the capture, the case's own sessions' left out
    others: list[str] = field(default_factory=list)  # why each other one was not the client's (the first few)


OTHERS_SHOWN = 20


def _frames(endpoint: Endpoint | None, data: bytes) -> tuple[list[bytes], bytes]:
    """Whole frames of a stream and the bytes after them; a stream without framing is one chunk."""
    if endpoint is None or endpoint.framing is None:
        return ([data] if data else []), b""
    frames, used, _problem = endpoint.framing.split(data, 1 << 31)
    return frames, data[used:]


def client_flows(capture: bytes, endpoints: dict[int, Endpoint | None], client_id: str | None, id_of,
                 own_ports: set[int]) -> Kept:
    """The client's connections among those to the target's ports (``endpoints``: server port -> endpoint).
    ``id_of(frame)``: the client id a request names (the protocol's hook), used with ``client_id``; without them
    the connections opened during the capture from ports not in ``own_ports`` (the case's own sessions)."""
    flows = [flow for flow in read_capture(capture, set(endpoints)).flows
             if flow.server[1] in endpoints and flow.client[1] not in own_ports]
    kept, others = [], []
    for flow in flows:
        if client_id is not None and id_of is not None:
            frames, _ = _frames(endpoints[flow.server[1]], flow.to_server.assemble()[0])
            named = {name for frame in frames if (name := _safe_id(id_of, frame)) is not None}
            why = None if any(is_named(name, client_id) for name in named) else \
                f"names client id {', '.join(sorted(named))[:200]}" if named else \
                f"names no client id in {len(frames)} request(s)" if frames else "sent no request"
            if why is not None and not flow.handshake:
                why += " (opened before the capture)"
        else:
            why = None if flow.handshake else "opened before the capture"
        if why is None:
            kept.append(flow)
        elif len(others) < OTHERS_SHOWN:
            others.append(f"{flow.name}: {why}")
    return Kept(kept, "client id" if client_id is not None and id_of is not None else "source port", len(flows),
                others)


def is_named(name: str, client_id: str) -> bool:
    """Does a request's client id name the scenario's: the id itself, or ``<id>/<role>`` (a driver running
    several clients that must tell them apart, e.g. a producer's requests from a consumer's)?"""
    return name == client_id or name.startswith(client_id + "/")


def _safe_id(id_of, frame: bytes) -> str | None:
    try:
        return id_of(frame)
    except Exception:  # a hook that trips on a stranger's bytes does not claim them
        return None


def _key(a: tuple[str, int], b: tuple[str, int]) -> tuple:
    return (a, b) if a < b else (b, a)


def filtered_pcap(capture: bytes, flows: list[Flow]) -> tuple[bytes, int]:
    """(a pcap of the packets of ``flows`` only, as captured, and their count)."""
    wanted = {_key(flow.client, flow.server) for flow in flows}
    kept, linktypes = [], set()  # one link type: a tcpdump capture is of one interface
    for linktype, raw, wirelen, when, segment in tcp_records(capture):
        if segment is not None and _key((segment[0], segment[2]), (segment[1], segment[3])) in wanted:
            kept.append((when, raw, wirelen))
            linktypes.add(linktype)
    return pcap_records(min(linktypes, default=1), kept), len(kept)


def _timed_frames(conn: int, endpoint: Endpoint | None, direction, incoming: bool) -> list[tuple[float, Event]]:
    """A direction's frames as transcript events at the time the last byte of each was captured; a stream
    without framing (HTTP), its bytes as the segments brought them."""
    data, _problems = direction.assemble()
    arrivals = direction.arrivals()
    framed = endpoint is not None and endpoint.framing is not None
    if framed:
        frames, rest = _frames(endpoint, data)
        pieces = [(frame, True) for frame in frames] + ([(rest, False)] if rest else [])
    else:
        ends = sorted({min(end, len(data)) for end, _ in arrivals})
        pieces = [(data[start:end], False) for start, end in zip([0] + ends, ends) if end > start]
    events, end, index = [], 0, 0
    for piece, whole in pieces:
        end += len(piece)
        while index < len(arrivals) - 1 and arrivals[index][0] < end:
            index += 1
        kind = ("recv" if whole or not framed else "partial") if incoming else "send"
        events.append((arrivals[index][1] if arrivals else 0.0,
                       Event(0.0, conn, kind, piece, decode=whole,
                             detail="bytes of an incomplete frame" if framed and not whole else "")))
    return events


def client_transcript(protocol: str, case_id: str, flows: list[Flow], endpoints: dict[int, Endpoint | None],
                      about: dict) -> dict:
    """The client's connections as a ``wirecheck.transcript/1`` document, each frame decoded by its endpoint's
    describers (requests and answers), ``t`` in seconds from the first packet; ``about``: the capture's summary.

    Describers may pair an answer with the request described last under its correlation id (Kafka's do), and
    connections reuse those ids: each connection is described on its own, in its order, and then merged in time."""
    timed: list[tuple[float, int, int, Event, Endpoint | None]] = []  # (when, phase, conn, event, endpoint)
    for conn, flow in enumerate(flows, 1):
        endpoint = endpoints.get(flow.server[1])
        timed.append((flow.first_time, 0, conn, Event(0.0, conn, "connect", local="%s:%d" % flow.client,
                                                      peer="%s:%d" % flow.server,
                                                      endpoint=endpoint.name if endpoint else ""), endpoint))
        frames = (_timed_frames(conn, endpoint, flow.to_server, False)
                  + _timed_frames(conn, endpoint, flow.to_client, True))
        timed += [(when, 1, conn, event, endpoint) for when, event in frames]
        last = max([flow.first_time] + [when for when, _ in frames])
        if flow.to_client.rst or flow.to_server.rst:
            ends = ["reset"]
        else:
            ends = ["closed"] * flow.to_client.fin + ["close"] * flow.to_server.fin
        timed += [(last, 2, conn, Event(0.0, conn, kind), endpoint) for kind in ends]
    timed.sort(key=lambda item: item[:3])
    kept = timed[:MAX_EVENTS]  # the first events in time: an answer kept has its request kept
    start = kept[0][0] if kept else 0.0
    described: dict[int, dict] = {}
    for index, (when, _, _, event, endpoint) in sorted(enumerate(kept), key=lambda item: item[1][2]):  # by conn
        event.t = when - start
        describe = endpoint.describe if endpoint else describe_bytes
        if endpoint is not None and event.incoming and endpoint.describe_answer is not None:
            describe = endpoint.describe_answer
        described[index] = event.to_dict(describe)
    return {"schema": "wirecheck.transcript/1", "case": case_id, "nodeid": case_id, "protocol": protocol,
            "dropped_events": len(timed) - len(kept), "events": [described[i] for i in range(len(kept))],
            "client_capture": about}


@dataclass
class ClientLog:
    argv: tuple[str, ...]
    returncode: int | None
    seconds: float
    stderr: str

    def text(self) -> str:
        ended = "stopped at its time limit" if self.returncode is None else f"exit status {self.returncode}"
        log = self.stderr if len(self.stderr) <= LOG_LIMIT else \
            self.stderr[:LOG_LIMIT] + f"\n[... {len(self.stderr) - LOG_LIMIT} more characters not kept]\n"
        return f"=== {' '.join(self.argv)} ({ended}, {self.seconds:.1f} s) ===\n{log}" + \
            ("" if log.endswith("\n") or not log else "\n")


@dataclass
class ScenarioCapture:
    """One client scenario's capture: started before its first client run, ended with the case."""

    target: Target
    client_id: str | None = None
    base: str = ""  # the artifacts' file name without its suffix
    logs: list[ClientLog] = field(default_factory=list)
    why_not: str | None = None  # why nothing was captured
    _tcpdump: Tcpdump | None = None
    _started: bool = False
    _finished: bool = False
    #: the client's connections with their endpoints, once the capture ended (:meth:`finish`)
    _client_flows: list[tuple[Endpoint | None, Flow]] = field(default_factory=list)

    @classmethod
    def for_case(cls, target) -> "ScenarioCapture":
        unique = target.unique("client")
        capture = cls(target, base=f"{target.case_id}.{unique}")
        if callable(getattr(_capture_module(target.spec), "client_id", None)):
            capture.client_id = unique
        return capture

    @property
    def endpoints(self) -> dict[int, Endpoint | None]:
        """Server port -> endpoint, for every endpoint address the case knows on loopback."""
        target = self.target
        known = {target.spec.primary.name: target.address, **getattr(target.info, "endpoints", {})}
        ports = {}
        for name, (host, port) in known.items():
            if is_loopback(host):
                try:
                    ports.setdefault(port, target.spec.endpoint(name))
                except KeyError:  # a side listener that is no endpoint of the spec: captured, not decoded
                    ports.setdefault(port, None)
        return ports

    @property
    def files(self) -> dict[str, str]:
        """Where the artifacts will be, relative to the run directory (when the case's transcript is kept)."""
        return {"pcap": f"transcripts/{self.base}.pcap", "transcript": f"transcripts/{self.base}.json",
                "log": f"transcripts/{self.base}.log"}

    @property
    def ran(self) -> bool:
        """Has a client run in this scenario (and the capture been tried)?"""
        return self._started

    def before_run(self) -> None:
        """Start capturing (once, before the scenario's first client run)."""
        if self._started:
            return
        self._started = True
        if not is_loopback(self.target.address[0]):
            self.why_not = "the target is not on this machine's loopback (only lo is captured)"
            return
        self._tcpdump = Tcpdump(set(self.endpoints))
        self.why_not = self._tcpdump.start()
        if self.why_not is not None:
            self._tcpdump = None
        self.target.transcript.note(f"client capture: {self.why_not or 'tcpdump captures lo'}"
                                    + (f" (client id {self.client_id})" if self.client_id else ""))

    def where(self) -> str:
        """For a failing verdict: where the client's traffic and log are, or why there is no capture."""
        names = self.files
        if self.why_not is not None:
            return (f"the client's traffic was not captured: {self.why_not}; its whole log: {names['log']} (in the "
                    "run directory)")
        return (f"the client's traffic: {names['pcap']}, decoded: {names['transcript']}, its whole log: "
                f"{names['log']} (in the run directory)")

    def finish(self) -> None:
        """Stop capturing; keep the artifacts with the case (written if its transcript is kept). Once."""
        if not self._started or self._finished:
            return
        self._finished = True
        summary: dict = {"client_id": self.client_id, "runs": len(self.logs), "captured": False}
        files = {"log": (f"{self.base}.log", "".join(log.text() for log in self.logs).encode())}
        tcpdump, self._tcpdump = self._tcpdump, None
        if tcpdump is None:
            summary["not_captured"] = self.why_not
        else:
            notes = tcpdump.stop()
            try:
                summary.update(self._kept(bytes(tcpdump.data), notes, files))
            except Exception as exc:  # evidence, never a verdict: a capture that cannot be read is said so
                summary["not_captured"] = f"the capture could not be read: {type(exc).__name__}: {exc}"
                self.target.transcript.note(f"client capture: {summary['not_captured']}")
        self.target.keep_evidence(Evidence(RECORD_FIELD, summary, files))

    def _kept(self, capture: bytes, notes: list[str], files: dict) -> dict:
        endpoints = self.endpoints
        own = {port for event in self.target.transcript.events
               if event.kind == "connect" and (port := _port(event.local)) is not None}
        id_of = getattr(_capture_module(self.target.spec), "client_id", None)
        kept = client_flows(capture, endpoints, self.client_id, id_of, own)
        self._client_flows = [(endpoints[flow.server[1]], flow) for flow in kept.flows]
        pcap, packets = filtered_pcap(capture, kept.flows)
        if kept.how == "source port":
            notes.append("connections told by source port: another case's connections opened to the same ports "
                         "during the capture would be kept too")
        if not kept.flows:
            notes.append(f"none of the {kept.seen} connection(s) to the target's ports was the client's"
                         + (f" (none carried client id {self.client_id})" if kept.how == "client id" else ""))
        for flow in kept.flows:
            for side, direction in (("client", flow.to_server), ("target", flow.to_client)):
                notes += [f"{flow.name}, {side}'s bytes: {problem}" for problem in direction.assemble()[1]]
        summary = {"client_id": self.client_id, "captured": True, "by": kept.how, "connections": len(kept.flows),
                   "connections_to_target": kept.seen, "not_the_clients": kept.others, "packets": packets,
                   "capture_bytes": len(capture), "ports": sorted(endpoints), "notes": notes}
        document = client_transcript(self.target.spec.name, self.target.case_id, kept.flows, endpoints, summary)
        files["pcap"] = (f"{self.base}.pcap", pcap)
        files["transcript"] = (f"{self.base}.json", json.dumps(document).encode())
        self.target.transcript.note(f"client capture: {len(kept.flows)} connection(s) of the client kept by "
                                    f"{kept.how} of {kept.seen} to the target's ports, {packets} packets"
                                    + "".join(f"; {note}" for note in notes))
        return summary


    def defect_shown(self) -> tuple[ClientDefect, str] | None:
        """A known defect of the scenario's client version (``ProtocolSpec.client_defects``) that the client's
        captured traffic shows, with where it shows; None when there is none (or nothing was captured)."""
        scenario, version = scenario_of(self.target.case_id), self.target.fact_of("client_version")
        exchanges = None
        for defect in self.target.spec.client_defects:
            if scenario is not None and defect.affects(scenario[1], version):
                if exchanges is None:
                    exchanges = [pair for endpoint, flow in self._client_flows for pair in exchanges_of(endpoint, flow)]
                evidence = defect.shown_by(exchanges)
                if evidence:
                    return defect, evidence
        return None


def exchanges_of(endpoint: Endpoint | None, flow: Flow) -> list[tuple[bytes, bytes]]:
    """A connection's (request, answer) frames, paired as differential mode pairs them (RequestQueue)."""
    if endpoint is None or endpoint.framing is None:
        return []
    requests = RequestQueue(endpoint.framing, endpoint.answers_request)
    requests.sent(flow.to_server.assemble()[0])
    answers, _ = _frames(endpoint, flow.to_client.assemble()[0])
    return [(request, answer) for answer in answers if (request := requests.answered(answer)) is not None]


def _port(address: str) -> int | None:
    try:
        return int(address.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return None


def _capture_module(spec):
    return importlib.import_module(spec.capture.module) if spec.capture is not None else None
