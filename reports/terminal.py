"""What the terminal summary shows, gathered from the runner's event stream: SHOULD-level divergences that
did not fail the run, verdict totals, the per-version matrix (advertised equals implemented), the API support
table (reports/api_support.py) and the real-client matrix."""

from __future__ import annotations

from wirecheck.reports.api_support import api_support, ranges, version_matrix
from wirecheck.reports.events import RunFinished
from wirecheck.protocols.verdicts import ANSWERED_OTHERWISE, Verdict
from wirecheck.reports.records import client_matrix, differential_totals, replay_command
from wirecheck.reports.rootcause import by_clause

GROUPS_SHOWN = 40


def _mark(verdict: str) -> str:
    """A verdict's cell in a matrix (one this version does not know as itself)."""
    try:
        return Verdict(verdict).mark
    except ValueError:
        return verdict


class TerminalSummary:
    """Kept from the controller's RunFinished (every worker's records, merged and revised) and written into
    pytest's terminal summary."""

    def __init__(self):
        self.finished: RunFinished | None = None

    def handle(self, event) -> None:
        if isinstance(event, RunFinished) and event.controller:
            self.finished = event

    def write(self, terminal) -> None:
        """``terminal``: pytest's terminal reporter."""
        finished = self.finished
        if finished is None:
            return
        records = finished.records
        non_strict = [r for r in records if r["verdict"] == Verdict.NON_STRICT.value]
        if non_strict:
            terminal.section("wirecheck NON-STRICT (SHOULD-level divergences)")
            for record in non_strict:
                terminal.line(f"{record['case']} ({record['nodeid']}): {record['message']}")
        matrix = version_matrix(records)
        ran = {protocol for (protocol, _), cells in matrix.items() if set(cells.values()) != {"NOT-RUN"}}
        matrix = {key: cells for key, cells in matrix.items() if key[0] in ran}  # only the suites that ran
        if matrix:
            terminal.section("wirecheck version matrix (ok, ns = NON-STRICT, -- = not advertised, FAIL)")
            for (protocol, message), cells in sorted(matrix.items()):
                row = " ".join(f"v{v}:{_mark(cells[v])}" for v in sorted(cells))
                terminal.line(f"{protocol} {message:<18} {row}")
        document = finished.document or {}
        if document.get("headline"):
            terminal.write_line(f"wirecheck: {document['headline']}", red=True, bold=True)
        if finished.nothing_ran:  # the same line as when a named target answers like another protocol (exit 4 too)
            terminal.write_line(finished.nothing_ran, red=True)
        support = [row for row in api_support(records) if row["executed"] or row.get("advertised")]
        if support:  # only the protocols whose suite ran
            terminal.section("wirecheck API support (advertised, working and failing versions; cases passed)")
            for line in support_lines(support):
                terminal.line(line)
        clients = client_matrix(records)
        if clients:
            terminal.section("wirecheck client matrix (real clients against the target)")
            for row in clients:
                cells = " ".join(f"{scenario}:{_mark(verdict)}" for scenario, verdict in sorted(row["scenarios"].items()))
                terminal.line(f"{row['protocol']} {row['client']:<16} {str(row['version'] or '?'):<34} {cells}")
        groups = by_clause(records)
        if groups:
            terminal.section("wirecheck failures by clause (one root cause a line)")
            for group in groups[:GROUPS_SHOWN]:
                terminal.line(group.line())
                for case, params in group.cases.items():
                    terminal.line(f"    {case}" + (f" [{len(params)}: {', '.join(params[:6])}"
                                                    f"{', ...' if len(params) > 6 else ''}]" if len(params) > 1 else ""))
                example = group.example or {}
                if example.get("reproduce"):
                    terminal.line(f"    reproduce: {example['reproduce']}")
                replay = replay_command(finished.run_dir, document, example) if finished.run_dir else None
                if replay:
                    terminal.line(f"    replay:    {replay}")
            if len(groups) > GROUPS_SHOWN:
                terminal.line(f"... and {len(groups) - GROUPS_SHOWN} more clauses (run.json: failures_by_clause)")
        expected = [r for r in records if r.get("verdict") == Verdict.XFAIL.value]
        if expected:
            terminal.section("wirecheck expected divergences (XFAIL: the baseline's, the upstream server's own, or a "
                             "client's own known defect)")
            for record in expected:
                terminal.line(f"{record['case']} ({record['nodeid']}): {record.get('message', '')}"[:600])
        otherwise = [r for r in records if r.get("verdict") == Verdict.OK.value
                     and str(r.get("message", "")).startswith(ANSWERED_OTHERWISE)]
        if otherwise:
            terminal.write_line(f"wirecheck differential: {len(otherwise)} case(s) passed but {ANSWERED_OTHERWISE} "
                                f"(their records say where; --strict fails them as DIVERGENT)", yellow=True)
        compared = differential_totals(records)
        if compared is not None:
            terminal.write_line(f"wirecheck differential: compared {compared['compared']} of {compared['exchanged']} "
                                f"answers ({compared['percent']}%); {compared['cases_compared_in_part']} of "
                                f"{compared['cases']} case(s) compared only part of theirs (their records say why)",
                                yellow=compared["compared"] < compared["exchanged"])
            for why, count in sorted(compared.get("apart", {}).items()):
                terminal.write_line(f"wirecheck differential: {count} answers counted apart, not exchanged with both "
                                    f"servers: {why}")
        totals = document.get("totals") or {}
        if totals:
            terminal.write_line("wirecheck verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(totals.items())))
            terminal.write_line(f"wirecheck records: {finished.run_dir}")


def support_lines(rows: list[dict]) -> list[str]:
    """The API support table, compact: a line per message with versions, a line per protocol for the rest."""
    lines, unversioned = [], {}
    for row in rows:
        if "advertised" in row:
            failing = f"  FAIL {ranges(row['failing'])}" if row["failing"] else ""
            lines.append(f"{row['protocol']} {row['message']:<24} advertised {ranges(row['advertised']):<10} "
                         f"working {ranges(row['working'])}{failing}")
        else:
            mark = "" if row["passed"] == row["executed"] else "!"
            unversioned.setdefault(row["protocol"], []).append(
                f"{row['message']} {row['passed']}/{row['executed']}{mark}")
    lines += [f"{protocol} " + ", ".join(cells) for protocol, cells in sorted(unversioned.items())]
    return lines
