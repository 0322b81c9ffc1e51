"""Every MUST can fail: the share of each protocol's MUST clauses that a reference-broker fault is proven to
break (the suite catches each fault under its clause: test_faults.py). The table is in docs/clauses/ and in the
README's protocol table; this test prints it and keeps each protocol from falling below where it stands."""

from __future__ import annotations

import pytest

from wirecheck.protocols.registry import all_specs
from wirecheck.reports.clause_audit import audit, summary_line

#: protocol -> the lowest MUST-with-fault share (%) accepted: raise it as faults are added, never lower it
FLOOR = {"barco": 100.0, "fluvio": 100.0, "kafka": 100.0, "pravega": 100.0, "rustlog": 100.0}


@pytest.mark.parametrize("protocol", sorted(FLOOR))
def test_must_clauses_with_a_fault(protocol, record_property):
    summary = audit(all_specs()[protocol]).summary
    line = f"{protocol}: {summary_line(summary)}"
    record_property("must_with_a_fault", line)
    print(line)
    assert summary.must_with_fault_percent >= FLOOR[protocol], line
