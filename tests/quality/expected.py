"""What each reference-broker fault must make its suite report, read from each protocol's ``faults.py``.

``protocols/<name>/faults.py`` holds ``FAULTS``: namespaced fault -> the clause reported FAILED. The quality runs
use --strict, so SHOULD clauses fail too. ``SCOPES`` limits a faulted run to one suite module (absent: the whole
suite); either way the run stops at the first FAILED record of the expected clause.
"""

from __future__ import annotations

import importlib
import pkgutil

import protocols


def _tables() -> dict[str, dict[str, str]]:
    """protocol -> its FAULTS table, for every protocol package that has a faults module."""
    tables = {}
    for module in pkgutil.iter_modules(protocols.__path__):
        if not module.ispkg:
            continue
        try:
            faults = importlib.import_module(f"protocols.{module.name}.faults")
        except ModuleNotFoundError:
            continue
        tables[module.name] = faults.FAULTS
    return tables


EXPECTED: dict[str, dict[str, str]] = _tables()

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
}
