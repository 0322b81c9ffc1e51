"""One file, one flow at a time: reassembled streams -> protocol -> frames -> findings, as plain rows.

Rows are tuples in the order of ``job.VIOLATION``/``job.FLOW``/``job.FILE`` so the Spark job can build its
tables without Python-side schema inference. Nothing here raises on bad input: every problem becomes a row.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass

from wirecheck.protocols.capture import Finding
from wirecheck.reports.pipeline.captures.detect import capture_module, detect
from wirecheck.reports.pipeline.captures.flows import Flow, read_capture

@dataclass
class FlowStreams:
    """What stage 1 hands to stage 2: a flow's identity and its two streams (picklable)."""

    file: str
    flow: str
    server_port: int
    client_bytes: bytes
    server_bytes: bytes
    state: str  # "complete", "half" (no handshake captured), "reset", "open" (no FIN/RST seen)
    problems: list[str]


def _state(flow: Flow) -> str:
    if flow.to_server.rst or flow.to_client.rst:
        return "reset"
    if not flow.handshake:
        return "half"
    if flow.to_server.fin and flow.to_client.fin:
        return "complete"
    return "open"


def read_file(path: str, server_ports: set[int], content: bytes | None = None) -> tuple[tuple, list[FlowStreams]]:
    """Stage 1: (file row, flows) of one capture file; ``content``: its bytes, as Spark read them."""
    capture = read_capture(_local(path) if content is None else io.BytesIO(content), server_ports)
    out = []
    for flow in capture.flows:
        client, client_problems = flow.to_server.assemble()
        server, server_problems = flow.to_client.assemble()
        problems = [f"client: {p}" for p in client_problems] + [f"server: {p}" for p in server_problems]
        if not flow.handshake:
            problems.append("connection started before the capture (no SYN): frames may be misaligned")
        out.append(FlowStreams(path, flow.name, flow.server[1], client, server, _state(flow), problems))
    file_row = (path, capture.packets, len(capture.flows), not capture.problems, "; ".join(capture.problems))
    return file_row, out


def _local(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def _level(protocol: str, clause_id: str) -> str:
    from wirecheck.reports.pipeline.catalogue import load_catalogue

    catalogue = load_catalogue(protocol)
    if catalogue is not None and clause_id in catalogue:
        return catalogue[clause_id].level.value
    return "MUST"


def _split(spec, data: bytes, side: str, problems: list[str]) -> tuple[list[bytes], list[Finding]]:
    frames, used, problem = spec.framing.split(data, spec.max_body)
    findings = []
    if problem:
        clause = spec.capture.unframeable_clause if spec.capture else f"{spec.name}.robustness.survives"
        findings.append(Finding(clause, side, len(frames), f"unframeable length: {problem}",
                                bytes(data[used:used + 64])))
    elif used < len(data):
        problems.append(f"{side}: {len(data) - used} bytes of an incomplete frame at the end")
    module = capture_module(spec.name)
    if module is not None and hasattr(module, "screen"):
        frames, screened = module.screen(frames, side)
        findings += screened
    return frames, findings


@functools.lru_cache(maxsize=None)
def _specs() -> dict:
    from wirecheck.protocols.registry import all_specs

    return all_specs()


def analyze_flow(streams: FlowStreams, ports: dict[int, str]) -> tuple[tuple, list[tuple]]:
    """Stage 2: (flow row, violation rows) of one flow."""
    protocol, how = detect(streams.server_port, streams.client_bytes, ports)
    problems = list(streams.problems)
    violations: list[Finding] = []
    client_frames, server_frames = [], []
    spec = _specs().get(protocol) if protocol else None
    if spec is None:
        problems.append("unknown protocol: not checked" if protocol is None else f"no spec for {protocol}")
    else:
        client_frames, found = _split(spec, streams.client_bytes, "client", problems)
        violations += found
        server_frames, found = _split(spec, streams.server_bytes, "server", problems)
        violations += found
        module = capture_module(protocol)
        if module is not None:
            try:
                violations += module.check(client_frames, server_frames)
            except Exception as exc:  # a checker bug costs this flow's checks, never the job
                problems.append(f"checker failed: {type(exc).__name__}: {exc}")
    rows = [(streams.file, streams.flow, protocol, f.side, f.frame_index, f.clause, _level(protocol, f.clause),
             f.message, f.hex) for f in violations]
    flow_row = (streams.file, streams.flow, protocol, how, streams.state, len(client_frames), len(server_frames),
                len(streams.client_bytes) + len(streams.server_bytes), len(rows), "; ".join(problems))
    return flow_row, rows
