"""The API support table of a target: per message, the versions it advertised and the versions the suite found
working, from the per-version cases (``version_matrix``); for a protocol without per-version cases, each message
or command the suite exercised and whether its cases passed.

Decisions (docs/report-schema.md, ``api_support``):
- A per-version case runs only at a version the target advertised (ApiVersions-style negotiation; it is
  UNIMPLEMENTED otherwise), so a version is **advertised** when its worst verdict is an executed one,
  **working** when that verdict is OK or NON-STRICT, **failing** when it is any other executed verdict,
  **not advertised** when UNIMPLEMENTED and **untested** when the case did not run (NOT-RUN, TARGET-DOWN,
  BLOCKED).
- A protocol none of whose records name a version (Pravega, Barco and RustLog have no version negotiation; Fluvio
  checks its advertised versions inside single cases) gets one row per message the cases name as a parameter
  (``message_type``) and, for the other cases, one row per clause area (``<protocol>.<area>.<rule>``): what the
  suite exercised, with how many of its cases passed. Real-client cases are left out: they have their own table.
"""

from __future__ import annotations

from wirecheck.protocols.verdicts import Verdict, worst

#: Verdicts of a version the suite found working (held outright: not one expected to fail, nor a flaky one).
WORKING = (Verdict.OK, Verdict.NON_STRICT)


def version_matrix(records) -> dict[tuple[str, str], dict[int, str]]:
    """(protocol, message) -> {version: verdict} for the per-version cases; several records of one version
    (parametrized cases, two clauses checked per version) give the worst verdict."""
    seen: dict[tuple[str, str], dict[int, list[str]]] = {}
    for record in records:
        if record.get("message_type") is not None and record.get("version") is not None:
            key = (record["protocol"], str(record["message_type"]))
            seen.setdefault(key, {}).setdefault(record["version"], []).append(record["verdict"])
    return {key: {version: worst(verdicts) for version, verdicts in cells.items()} for key, cells in seen.items()}


def support_of(cells: dict[int, str]) -> dict[str, list[int]]:
    """{version: verdict} of one message -> its versions sorted into advertised, working, failing, not advertised
    and untested."""
    def versions(keep) -> list[int]:
        return sorted(v for v, verdict in cells.items() if keep(verdict))

    def ran(verdict: str) -> bool:  # an unknown verdict ran too
        return Verdict.named(verdict).executed

    return {"advertised": versions(ran), "working": versions(lambda v: Verdict.named(v) in WORKING),
            "failing": versions(lambda v: ran(v) and Verdict.named(v) not in WORKING),
            "not_advertised": versions(lambda v: v == "UNIMPLEMENTED"),
            "untested": versions(lambda v: not ran(v) and Verdict.named(v) is not Verdict.UNIMPLEMENTED)}


def api_support(records) -> list[dict]:
    """One row per protocol and message: ``{"protocol", "message", "by", "verdict", "passed", "executed"}`` and,
    for a message with per-version cases, the version lists of ``support_of``. ``by``: ``version`` (per-version
    cases), ``message`` (cases naming the message without a version) or ``area`` (a clause area)."""
    records = [r for r in records if not _is_client_case(r)]
    matrix = version_matrix(records)
    versioned = {protocol for protocol, _ in matrix}
    groups: dict[tuple[str, str], list[str]] = {}
    by: dict[tuple[str, str], str] = {}
    for record in records:
        protocol, message = record["protocol"], record.get("message_type")
        if message is not None:
            key = (protocol, str(message))
            by[key] = "version" if key in matrix else "message"
        elif protocol in versioned:
            continue  # a protocol with per-version cases: its rows are its messages (Kafka: every API key)
        else:
            key = (protocol, _area(record["clause"]))
            by.setdefault(key, "area")
        groups.setdefault(key, []).append(record["verdict"])
    rows = []
    for key in sorted(groups):
        verdicts = groups[key]
        row = {"protocol": key[0], "message": key[1], "by": by[key], "verdict": worst(verdicts),
               "passed": sum(Verdict.named(v).passing for v in verdicts),
               "executed": sum(Verdict.named(v).executed for v in verdicts)}
        if key in matrix:
            row.update(support_of(matrix[key]))
        rows.append(row)
    return rows


def ranges(versions: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2,5,7-8"; "-" for none."""
    spans: list[list[int]] = []
    for v in sorted(versions):
        if spans and v == spans[-1][1] + 1:
            spans[-1][1] = v
        else:
            spans.append([v, v])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans) or "-"


def _is_client_case(record: dict) -> bool:
    parts = str(record.get("case", "")).split(".")
    return len(parts) == 4 and parts[1] == "clients"


def _area(clause: str) -> str:
    parts = clause.split(".")
    return parts[1] if len(parts) >= 3 else "-"
