"""Every output of a run says the same thing: pytest's terminal counts, the JUnit XML, the Allure results, run.json,
summary.html and the case records agree on each case's verdict and on the number of failures, in a run whose end
revises a verdict (a failure carried into a case that was BLOCKED while it ran: reports.rootcause.carry), in one
process and with pytest-xdist's two workers (the carried case's report then comes from a worker).

Each output's view of a case is mapped through the one verdict table (protocols.verdicts.Verdict: the pytest
outcome, the Allure status, the warning mark), so a case the records call FAILED and JUnit calls skipped fails
here, and so does a count that one output makes differently."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from html import unescape
from pathlib import Path

import pytest
from _pytest.junitxml import mangle_test_address

from tests.quality.harness import run_suite
from wirecheck.protocols.verdicts import Verdict
from wirecheck.reports.allure import NODEID_LABEL

FAULT = "kafka.describe-configs-named-keys-close"
CLAUSE = "kafka.configs.requested-keys"
#: the synonyms cases read configs back by name (the clause owning that never runs here: one carries its failure,
#: the other stays BLOCKED); the rest of the selection passes, fails or is refused on its own
SELECTION = "synonyms or describe_broker or unknown or static"


def _junit(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    """(classname, name) of each testcase -> its pytest outcome as JUnit shows it; the suite's counts."""
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    shown = {}
    for case in suite.findall("testcase"):
        skipped = case.find("skipped")
        if case.find("failure") is not None:
            outcome = "failed"
        elif case.find("error") is not None:
            outcome = "error"
        elif skipped is not None:
            outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            outcome = "passed"
        shown[(case.get("classname"), case.get("name"))] = outcome
    return shown, {key: int(suite.get(key) or 0) for key in ("failures", "errors", "skipped", "tests")}


def _terminal_counts(output: str) -> dict[str, int]:
    """pytest's last line: "1 failed, 3 passed, 2 skipped in 4.2s" -> {"failed": 1, "passed": 3, ...}."""
    line = [line for line in output.splitlines() if re.search(r"\d+ \w+.* in [\d.]+s", line)][-1]
    return {word: int(count) for count, word in re.findall(r"(\d+) (\w+)", line.split(" in ")[0])}


@pytest.mark.parametrize("workers", [None, "2"], ids=["one-process", "xdist-2"])
def test_every_output_shows_the_same_verdicts_and_failures(tmp_path, workers):
    junit, allure = tmp_path / "junit.xml", tmp_path / "allure"
    run = run_suite("kafka/test_configs.py", tmp_path / "reports", faults=[FAULT],
                    extra=["-k", SELECTION, "-p", "no:randomly", "--junitxml", str(junit), "--alluredir", str(allure),
                           *(["-n", workers] if workers else ["-p", "no:xdist"])])
    records = {record["nodeid"]: Verdict(record["verdict"]) for record in run.records}
    carried = [r for r in run.records if r.get("carried")]
    assert [(r["verdict"], r["clause"]) for r in carried] == [("FAILED", CLAUSE)], run.by_verdict()
    outcomes = {nodeid: verdict.pytest_outcome(strict=True) for nodeid, verdict in records.items()}
    failures = sum(outcome == "failed" for outcome in outcomes.values())
    assert failures >= 1 and set(outcomes.values()) >= {"failed", "passed", "skipped"}, run.by_verdict()
    assert run.returncode == 1, run.tail()

    # run.json: the same totals, the exit code the run ended with
    run_dir = next((tmp_path / "reports").iterdir())
    document = json.loads((run_dir / "run.json").read_text())
    totals = Counter(verdict.value for verdict in records.values())
    assert document["totals"] == totals and document["exit_status"] == run.returncode

    # the terminal: pytest's counts and wirecheck's verdict line
    counts = _terminal_counts(run.output)
    assert counts.get("failed", 0) == failures, run.tail()[-1500:]
    for outcome in ("passed", "skipped", "xfailed"):
        assert counts.get(outcome, 0) == sum(o == outcome for o in outcomes.values()), (outcome, run.tail()[-1500:])
    line = next(line for line in run.output.splitlines() if line.startswith("wirecheck verdicts: "))
    assert dict((v, int(n)) for n, v in re.findall(r"(\d+) ([A-Z-]+)", line)) == totals

    # JUnit: each case's element, and the suite's counts
    shown, suite = _junit(junit)
    expected = {}
    for nodeid, outcome in outcomes.items():
        names = mangle_test_address(nodeid)
        expected[(".".join(names[:-1]), names[-1])] = outcome
    assert shown == expected
    assert suite["failures"] == failures and suite["errors"] == 0
    assert suite["skipped"] == sum(o in ("skipped", "xfailed") for o in outcomes.values())
    assert any(CLAUSE in (element.get("message") or "") for element in ET.parse(junit).iter("failure"))

    # Allure: one result per case, its status the verdict's
    statuses = {}
    for path in allure.glob("*-result.json"):
        result = json.loads(path.read_text())
        nodeid = next(label["value"] for label in result["labels"] if label["name"] == NODEID_LABEL)
        statuses[nodeid] = result["status"]
    assert statuses == {nodeid: verdict.allure for nodeid, verdict in records.items()}
    assert sum(status in ("failed", "broken") for status in statuses.values()) == failures

    # summary.html: the totals table, and each case it lists as not passed with its verdict
    page = unescape((run_dir / "summary.html").read_text())
    table = page.split("<h2>Totals</h2>", 1)[1].split("</table>", 1)[0]
    assert {v: int(n) for v, n in re.findall(r"<td[^>]*>([A-Z-]+)</td><td>(\d+)</td>", table)} == totals
    listed = dict(re.findall(r"<small>([^<]+)</small></h3><table><tr><th>verdict</th><td>([A-Z-]+)</td>", page))
    assert listed == {nodeid: verdict.value for nodeid, verdict in records.items()
                      if verdict.marked and verdict is not Verdict.TARGET_DOWN}
    assert "<strong>FAIL</strong>" in page
