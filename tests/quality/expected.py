"""What each reference-broker fault must make its suite report, read from the registry (``ProtocolSpec.faults``).

``protocols/<name>/faults.py`` holds ``FAULTS``: namespaced fault -> the clause reported FAILED. The quality runs
use --strict, so SHOULD clauses fail too. ``SCOPES`` limits a faulted run to one suite module (absent: the whole
suite); either way the run stops at the first FAILED record of the expected clause.
"""

from __future__ import annotations

from protocols.registry import all_specs

#: protocol -> its faults table (ProtocolSpec.faults, from protocols/<name>/faults.py)
EXPECTED: dict[str, dict[str, str]] = {name: dict(spec.faults) for name, spec in all_specs().items() if spec.faults}

#: fault -> the suite module (under suites/<protocol>/) that catches it, where running one module is enough.
SCOPES = {
    "fluvio.apiversions-overadvertise": "test_versions",
    "fluvio.compression-error-wrong": "test_produce",
    "fluvio.correlation-id-wrong": "test_framing",
    "fluvio.crash-on-huge-record-count": "test_produce",
    "fluvio.crc-unchecked": "test_produce",
    "fluvio.error-code-unknown-partition-wrong": "test_produce",
    "fluvio.error-payload-missing": "test_fetch",
    "fluvio.fetch-hw-off-by-one": "test_fetch",
    "fluvio.fetch-offsets-start-is-hw": "test_fetch",
    "fluvio.fetch-offsets-wrong-code": "test_fetch",
    "fluvio.isolation-strict": "test_produce",
    "fluvio.negative-size-stays-open": "test_framing",
    "fluvio.offsets-follow-record-count": "test_produce",
    "fluvio.produce-base-offset-wrong": "test_produce",
    "fluvio.produce-responses-merged": "test_produce",
    "fluvio.stream-fetch-no-updates": "test_stream",
    "fluvio.stream-id-zero": "test_stream",
    "fluvio.throttle-missing": "test_produce",
    "fluvio.unknown-key-stays-open": "test_framing",
    "fluvio.update-offsets-unknown-session-ok": "test_stream",
    **{f"fluvio.sc-{name}": "test_sc" for name in (
        "platform-version-old", "watch-not-advertised", "watch-first-not-all", "watch-epoch-stale",
        "watch-changes-missing", "create-existing-ok", "invalid-name-accepted", "delete-missing-ok",
        "unknown-label-answers-empty", "status-name-wrong")},
}
