"""Which verdicts count as executed and as passing, and which one wins when several meet (the worst).

Plain Python: the run writer, the terminal and the Spark pipeline (reports/pipeline/schema.py re-exports these)
judge verdicts by the same table. Definitions: reports/pipeline/SCHEMA.md.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Verdicts that mean the case ran against a target and produced an answer about it.
EXECUTED = ("OK", "NON-STRICT", "FAILED", "ERROR", "XFAIL", "XPASS", "FLAKY", "DIVERGENT")
#: Verdicts counted as passing in pass rates: the case held, or failed only as the vendor said it would, or
#: failed once and passed when run again (FLAKY: counted among the flaky cases too).
PASSING = ("OK", "NON-STRICT", "XFAIL", "FLAKY")
#: Verdicts a report shows without a warning mark: nothing for its reader to act on (the case held, could not
#: apply, or failed as the vendor said it would). FLAKY and BLOCKED are marked although they pass or fail nothing.
UNMARKED = ("OK", "NON-STRICT", "NOT-RUN", "UNIMPLEMENTED", "XFAIL")
#: Severity, to pick one verdict when several records of one clause meet in one run (the worst wins).
#: Each value is distinct: the worst severity is mapped back to its verdict.
SEVERITY = {
    "NOT-RUN": 0,
    "TARGET-DOWN": 1,
    "UNIMPLEMENTED": 2,
    "BLOCKED": 3,
    "OK": 4,
    "XFAIL": 5,
    "FLAKY": 6,
    "NON-STRICT": 7,
    "DIVERGENT": 8,  # answered otherwise than the reference broker (--differential)
    "XPASS": 9,
    "ERROR": 10,
    "FAILED": 11,
}

_VERDICT_OF_SEVERITY = {rank: verdict for verdict, rank in SEVERITY.items()}
#: The severity of a verdict this version does not know: it is suspect, like an ERROR.
UNKNOWN_SEVERITY = SEVERITY["ERROR"]


def worst(verdicts: Iterable[str]) -> str:
    """The most severe of ``verdicts`` (an unknown verdict counts as an ERROR)."""
    return _VERDICT_OF_SEVERITY[max(SEVERITY.get(v, UNKNOWN_SEVERITY) for v in verdicts)]
