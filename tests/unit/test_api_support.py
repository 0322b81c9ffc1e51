"""The API support table of one run (reports/api_support.py): per Kafka API key the versions advertised and
working, built from the per-version matrix; per message or clause area for protocols without versions; shown in
run.json, the terminal and summary.html."""

from __future__ import annotations

from wirecheck.reports.api_support import api_support, ranges, support_of, version_matrix
from wirecheck.reports.summary_page import _api_support
from wirecheck.reports.terminal import support_lines


def record(case, verdict, protocol="kafka", clause=None, message_type=None, version=None):
    return {"case": case, "protocol": protocol, "clause": clause or case, "verdict": verdict,
            "message_type": message_type, "version": version}


def kafka(api, version, verdict, clause="kafka.api-versions.advertised-implemented"):
    return record(clause, verdict, clause=clause, message_type=api, version=version)


RECORDS = [
    kafka("Fetch", 0, "OK"), kafka("Fetch", 1, "NON-STRICT"), kafka("Fetch", 2, "FAILED"),
    kafka("Fetch", 3, "UNIMPLEMENTED"), kafka("Fetch", 4, "TARGET-DOWN"),
    # two clauses checked at one version: the worst verdict is the version's
    kafka("Metadata", 5, "OK"), kafka("Metadata", 5, "FAILED", clause="kafka.encoding.response-shape"),
    kafka("Metadata", 6, "OK"),
    record("kafka.fetch.records", "OK"),  # a Kafka case naming no message: not a row of its own
    record("kafka.configs.validate-only", "OK", message_type="AlterConfigs"),  # a message without versions
    record("kafka.clients.kcat.produce-consume", "FAILED", clause="kafka.produce.x"),  # real clients: own table
    record("pravega.append.conditional", "OK", protocol="pravega", message_type="ConditionalAppend"),
    record("pravega.append.conditional", "FAILED", protocol="pravega", message_type="ConditionalAppend"),
    record("pravega.hello.version", "OK", protocol="pravega"),
    record("rustlog.fetch.beyond-hw", "OK", protocol="rustlog"),
    record("rustlog.fetch.at-hw", "XFAIL", protocol="rustlog"),
    record("rustlog.ping.echo", "NOT-RUN", protocol="rustlog"),
]


def test_the_version_matrix_keeps_the_worst_verdict_of_a_version():
    matrix = version_matrix(RECORDS)
    assert matrix[("kafka", "Metadata")] == {5: "FAILED", 6: "OK"}
    assert matrix[("kafka", "Fetch")][1] == "NON-STRICT" and ("pravega", "ConditionalAppend") not in matrix


def test_a_versions_verdict_says_advertised_working_failing_or_untested():
    assert support_of({0: "OK", 1: "NON-STRICT", 2: "FAILED", 3: "UNIMPLEMENTED", 4: "TARGET-DOWN", 5: "XFAIL",
                       6: "BLOCKED", 7: "SOMETHING-NEW"}) == {
        "advertised": [0, 1, 2, 5, 7], "working": [0, 1], "failing": [2, 5, 7], "not_advertised": [3],
        "untested": [4, 6]}


def test_kafka_rows_are_api_keys_and_unversioned_protocols_list_messages_and_areas():
    rows = {(r["protocol"], r["message"]): r for r in api_support(RECORDS)}
    assert sorted(rows) == [("kafka", "AlterConfigs"), ("kafka", "Fetch"), ("kafka", "Metadata"),
                            ("pravega", "ConditionalAppend"), ("pravega", "hello"), ("rustlog", "fetch"),
                            ("rustlog", "ping")]
    fetch = rows[("kafka", "Fetch")]
    assert (fetch["by"], fetch["advertised"], fetch["working"], fetch["failing"]) == ("version", [0, 1, 2], [0, 1], [2])
    assert (fetch["not_advertised"], fetch["untested"], fetch["verdict"]) == ([3], [4], "FAILED")
    assert rows[("kafka", "Metadata")]["working"] == [6] and rows[("kafka", "Metadata")]["failing"] == [5]
    assert rows[("kafka", "AlterConfigs")] == {"protocol": "kafka", "message": "AlterConfigs", "by": "message",
                                               "verdict": "OK", "passed": 1, "executed": 1}
    append = rows[("pravega", "ConditionalAppend")]
    assert (append["by"], append["passed"], append["executed"], append["verdict"]) == ("message", 1, 2, "FAILED")
    assert rows[("rustlog", "fetch")]["by"] == "area" and rows[("rustlog", "fetch")]["passed"] == 2
    assert rows[("rustlog", "ping")]["executed"] == 0


def test_version_ranges_are_compact():
    assert ranges([7, 0, 1, 2, 5, 8]) == "0-2,5,7-8" and ranges([]) == "-" and ranges([3]) == "3"


def test_the_terminal_shows_a_line_per_api_and_one_per_unversioned_protocol():
    lines = support_lines([r for r in api_support(RECORDS) if r["executed"] or r.get("advertised")])
    fetch = next(line for line in lines if line.startswith("kafka Fetch"))
    assert "advertised 0-2" in fetch and "working 0-1" in fetch and fetch.endswith("FAIL 2")
    assert "pravega ConditionalAppend 1/2!, hello 1/1" in lines
    assert "rustlog fetch 2/2" in lines  # ping did not run: left out


def test_summary_html_has_the_api_support_table_with_failing_versions_marked():
    html = _api_support(api_support(RECORDS))
    assert html.startswith("<h2>API support</h2>")
    assert "<td>kafka</td><td>Fetch</td><td>version</td><td>0-2</td><td>0-1</td><td class='bad'>2</td>" in html
    assert "<td>rustlog</td><td>ping</td>" not in html and _api_support([]) == ""
