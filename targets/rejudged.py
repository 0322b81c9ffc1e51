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
    _terminal(config, reasons, "failed", "skipped")
    _junit(config, reasons, "failure", "skipped")


def show_carried(config, records: list[dict]) -> None:
    """Show each of ``records`` (carriers whose carried verdict fails the run) as failed in the terminal's statistics
    and the JUnit XML: a CI that reads either sees the failure the exit code reports."""
    reasons = {record["nodeid"]: f"FAILED (carried) {record['message']}" for record in records}
    _terminal(config, reasons, "skipped", "failed")
    _junit(config, reasons, "skipped", "failure")


def _terminal(config, reasons: dict[str, str], was: str, now: str) -> None:
    """Move the terminal's report of each case in ``reasons`` from outcome ``was`` to ``now`` (a failure: of its
    call phase), with the reason as pytest shows that outcome."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return
    kept = []
    for report in terminal.stats.get(was, []):
        reason = reasons.get(report.nodeid)
        if reason is None or (was == "failed" and report.when != "call"):
            kept.append(report)
            continue
        path, line = report.location[0], report.location[1] or 0
        report.outcome, report.longrepr = now, (path, line, reason) if now == "skipped" else reason
        terminal.stats.setdefault(now, []).append(report)
    terminal.stats[was] = kept


#: the attributes of junitxml's element for an outcome besides its message (its tag is the suite count's key)
_ATTRIBUTES = {"failure": {}, "skipped": {"type": "pytest.skip"}}


def _junit(config, reasons: dict[str, str], was: str, now: str) -> None:
    """A finished testcase element keeps its name and classname (the node id, mangled as junitxml does): its ``was``
    element (failure or skipped) becomes a ``now`` one with the reason, and the suite's counts follow."""
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is None:
        return
    wanted = {_name(xml, nodeid): reason for nodeid, reason in reasons.items()}
    for reporter in xml.node_reporters_ordered:
        testcase = reporter.to_xml()
        reason = wanted.get((testcase.get("classname"), testcase.get("name")))
        old = testcase.find(was)
        if reason is None or old is None:
            continue
        testcase.remove(old)
        element = ET.Element(now, message=junitxml.bin_xml_escape(reason[:1000]), **_ATTRIBUTES[now])
        element.text = junitxml.bin_xml_escape(reason)
        testcase.insert(0, element)
        xml.stats[was] -= 1
        xml.stats[now] += 1


def _name(xml, nodeid: str) -> tuple[str, str]:
    names = junitxml.mangle_test_address(nodeid)
    classnames = ([xml.prefix] if xml.prefix else []) + names[:-1]
    return ".".join(classnames), junitxml.bin_xml_escape(names[-1])
