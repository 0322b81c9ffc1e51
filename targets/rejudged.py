"""pytest's own record of cases the run's end re-judged: a client scenario that pytest saw fail, BLOCKED once the
run knew a clause it depends on FAILED (reports.rootcause.reattribute); a case pytest saw BLOCKED (skipped) that
carries the failure of a clause no case of its own reported (reports.rootcause.carry), FAILED.

pytest reported the case when it ran, maybe before the clause's own case ran (random order, xdist workers), so
its terminal statistics (the "N failed" line, the FAILURES section) and the JUnit XML (written at the session's
end) still hold a failure. They are changed here to the verdict the run's records hold: skipped, with the
``BLOCKED: ...`` reason, as a case BLOCKED while it ran is shown. Must run before junitxml's own session-finish
hook (the plugin's is ``tryfirst``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from _pytest import junitxml


def show_blocked(config, records: list[dict]) -> None:
    """Show each of ``records`` (re-judged case records) as BLOCKED in the terminal's statistics and the JUnit
    XML."""
    reasons = {record["nodeid"]: f"BLOCKED: {record['message']}" for record in records}
    _terminal(config, reasons)
    _junit(config, reasons)


def show_carried(config, records: list[dict]) -> None:
    """Show each of ``records`` (carriers whose carried verdict fails the run) as failed in the terminal's statistics
    and the JUnit XML: a CI that reads either sees the failure the exit code reports."""
    reasons = {record["nodeid"]: record["message"] for record in records}
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        kept = []
        for report in terminal.stats.get("skipped", []):
            reason = reasons.get(report.nodeid)
            if reason is None:
                kept.append(report)
                continue
            report.outcome, report.longrepr = "failed", f"FAILED (carried) {reason}"
            terminal.stats.setdefault("failed", []).append(report)
        terminal.stats["skipped"] = kept
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is None:
        return
    wanted = {_name(xml, nodeid): reason for nodeid, reason in reasons.items()}
    for reporter in xml.node_reporters_ordered:
        testcase = reporter.to_xml()
        reason = wanted.get((testcase.get("classname"), testcase.get("name")))
        skipped = testcase.find("skipped")
        if reason is None or skipped is None:
            continue
        testcase.remove(skipped)
        failure = ET.Element("failure", message=junitxml.bin_xml_escape(f"FAILED (carried) {reason}"[:1000]))
        failure.text = junitxml.bin_xml_escape(reason)
        testcase.insert(0, failure)
        xml.stats["skipped"] -= 1
        xml.stats["failure"] += 1


def _terminal(config, reasons: dict[str, str]) -> None:
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return
    kept = []
    for report in terminal.stats.get("failed", []):
        reason = reasons.get(report.nodeid)
        if reason is None or report.when != "call":
            kept.append(report)
            continue
        path, line = report.location[0], report.location[1] or 0
        report.outcome, report.longrepr = "skipped", (path, line, reason)
        terminal.stats.setdefault("skipped", []).append(report)
    terminal.stats["failed"] = kept


def _junit(config, reasons: dict[str, str]) -> None:
    """A finished testcase element keeps its name and classname (the node id, mangled as junitxml does): its
    ``failure`` becomes a ``skipped`` with the reason, and the suite's counts follow."""
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is None:
        return
    wanted = {_name(xml, nodeid): reason for nodeid, reason in reasons.items()}
    for reporter in xml.node_reporters_ordered:
        testcase = reporter.to_xml()
        reason = wanted.get((testcase.get("classname"), testcase.get("name")))
        failure = testcase.find("failure")
        if reason is None or failure is None:
            continue
        testcase.remove(failure)
        skipped = ET.Element("skipped", type="pytest.skip", message=junitxml.bin_xml_escape(reason[:1000]))
        skipped.text = junitxml.bin_xml_escape(reason)
        testcase.insert(0, skipped)
        xml.stats["failure"] -= 1
        xml.stats["skipped"] += 1


def _name(xml, nodeid: str) -> tuple[str, str]:
    names = junitxml.mangle_test_address(nodeid)
    classnames = ([xml.prefix] if xml.prefix else []) + names[:-1]
    return ".".join(classnames), junitxml.bin_xml_escape(names[-1])
