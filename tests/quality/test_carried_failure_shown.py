"""A failure carried into a blocked case (reports.rootcause.carry: no case of the blocking clause ran) fails the run,
and pytest's own reports say so too: the terminal's "1 failed" line and the JUnit XML's failure, with the clause,
where the case was shown skipped while it ran. A CI reading JUnit must not see a red build with no failed test."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tests.quality.harness import run_suite

FAULT = "kafka.describe-configs-named-keys-close"
CLAUSE = "kafka.configs.requested-keys"


def test_a_carried_failure_is_a_failure_in_the_terminal_and_junit(tmp_path):
    junit = tmp_path / "junit.xml"
    # only the synonyms cases run: each reads configs back by name, and the clause owning that never runs here
    run = run_suite("kafka/test_configs.py", tmp_path / "reports", faults=[FAULT],
                    extra=["-k", "synonyms", "-p", "no:randomly", "--junitxml", str(junit)])
    assert run.returncode == 1, run.tail()
    carried = [r for r in run.records if r.get("carried")]
    assert [(r["verdict"], r["clause"]) for r in carried] == [("FAILED", CLAUSE)], run.by_verdict()
    assert re.search(r"^(?:=+ )?1 failed, 1 skipped\b", run.output, re.MULTILINE), run.tail()[-800:]
    suite = ET.parse(junit).getroot().find("testsuite")
    failures = suite.findall("testcase/failure")
    assert int(suite.get("failures")) == len(failures) == 1 and int(suite.get("skipped")) == 1
    assert CLAUSE in failures[0].get("message")
