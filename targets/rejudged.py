"""pytest's own record of a case whose verdict the run's end revised (reports/events.py VerdictRevised): its terminal
statistics (the "N failed" line, the short summary) and the JUnit XML show the revised verdict's pytest outcome
(protocols.verdicts.Verdict), with the revision's reason, as a case judged so while it ran is shown.

pytest reported the case when it ran, maybe before the run knew what it carries or depends on (random order,
xdist workers). A subscriber of the runner's event stream; the revisions come from the plugin's session-finish
hook, which runs before junitxml's own (``tryfirst``), so that the JUnit file is written with them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from _pytest import junitxml

from wirecheck.reports.events import VerdictRevised

#: pytest outcome -> the terminal statistics' key of a case's report with that outcome
_STATS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "xfailed": "xfailed"}
#: pytest outcome -> the JUnit testcase's element (tag, its attributes besides the message); passed: none
_JUNIT = {"failed": ("failure", {}), "skipped": ("skipped", {"type": "pytest.skip"}),
          "xfailed": ("skipped", {"type": "pytest.xfail"})}


class PytestOutcomes:
    def __init__(self, config, strict: bool):
        self.config = config
        self.strict = strict

    def handle(self, event) -> None:
        if not isinstance(event, VerdictRevised):
            return
        was, now = event.was.pytest_outcome(self.strict), event.now.pytest_outcome(self.strict)
        reason = f"{event.now.value}{' (carried)' if event.was.value == 'BLOCKED' else ''}: {event.message}"
        if was != now:
            _terminal(self.config, event.nodeid, was, now, reason)
            _junit(self.config, event.nodeid, was, now, reason)


def _terminal(config, nodeid: str, was: str, now: str, reason: str) -> None:
    """Move the terminal's report of the case from outcome ``was`` to ``now`` (a failure: of its call phase), with
    the reason as pytest shows that outcome."""
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return
    kept = []
    for report in terminal.stats.get(_STATS[was], []):
        if report.nodeid != nodeid or (was == "failed" and report.when != "call"):
            kept.append(report)
            continue
        path, line = report.location[0], report.location[1] or 0
        report.outcome, report.longrepr = "skipped" if now == "xfailed" else now, None
        if now == "skipped":
            report.longrepr = (path, line, reason)
        elif now == "xfailed":
            report.wasxfail = reason
        elif now == "failed":
            report.longrepr = reason
        terminal.stats.setdefault(_STATS[now], []).append(report)
    terminal.stats[_STATS[was]] = kept


def _junit(config, nodeid: str, was: str, now: str, reason: str) -> None:
    """The case's finished testcase element (found by its name and classname: the node id, mangled as junitxml
    does) trades its ``was`` element for a ``now`` one with the reason, and the suite's counts follow."""
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is None:
        return
    wanted = _name(xml, nodeid)
    for reporter in xml.node_reporters_ordered:
        testcase = reporter.to_xml()  # a finished case's element, kept by junitxml until it writes the file
        if (testcase.get("classname"), testcase.get("name")) != wanted:
            continue
        if was in _JUNIT:
            old = testcase.find(_JUNIT[was][0])
            if old is None:
                continue  # not the phase pytest reported the case in (a setup error is not a call failure)
            testcase.remove(old)
            xml.stats[_JUNIT[was][0]] -= 1
        else:
            xml.stats["passed"] -= 1
        if now in _JUNIT:
            tag, attributes = _JUNIT[now]
            element = ET.Element(tag, message=junitxml.bin_xml_escape(reason[:1000]), **attributes)
            element.text = junitxml.bin_xml_escape(reason)
            testcase.insert(0, element)
            xml.stats[tag] += 1
        else:
            xml.stats["passed"] += 1


def _name(xml, nodeid: str) -> tuple[str, str]:
    names = junitxml.mangle_test_address(nodeid)
    classnames = ([xml.prefix] if xml.prefix else []) + names[:-1]
    return ".".join(classnames), junitxml.bin_xml_escape(names[-1])
