"""A vendor's baseline: known failures, each tied to a case, with a reason and an optional expiry.

File format (JSON)::

    {"schema": "wirecheck.baseline/1",
     "entries": [{"case": "rustlog.fetch.beyond-hw", "reason": "ticket #123: we answer 416",
                  "expires": "2027-03-01"}]}

``case`` may be a case ID or a glob (``rustlog.fetch.*``). A listed case that fails is XFAIL; one that passes is
XPASS, which fails the run so that stale entries are removed. Expired entries no longer apply. An entry may also
name the ``clause`` whose failure it expects (then a failure under another clause stays a failure), the ``test``
(the test's name with its parameters, exactly, where one parameter of a case diverges) and the ``source`` that
documents it; ``intermittent`` marks a race the server loses only sometimes (a pass is then not XPASS) (a ticket, an upstream issue or source line): the expected divergences of an
upstream server (targets/upstream/expectations/) are entries of this kind.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path


class BaselineError(ValueError):
    """A baseline file that cannot be read (its path and what is wrong; the runner reports it as a usage error)."""


@dataclass(frozen=True)
class BaselineEntry:
    case: str
    reason: str
    expires: dt.date | None = None
    clause: str | None = None  # the clause whose failure is expected; None: any failure of the case
    source: str = ""  # where the divergence is documented
    test: str | None = None  # the test's name with its parameters, exactly ("test_x[overlapping]"); None: any
    intermittent: bool = False  # a race the server loses only sometimes: passing is not XPASS

    def describe(self) -> str:
        return self.reason + (f" ({self.source})" if self.source else "")


class Baseline:
    def __init__(self, path: Path, entries: list[BaselineEntry]):
        self.path = path
        self.entries = entries

    @classmethod
    def load(cls, path_text: str) -> "Baseline":
        path = Path(path_text)
        try:
            data = json.loads(path.read_text())
            raw = data["entries"]
            entries = []
            for i, e in enumerate(raw):
                if not isinstance(e.get("case"), str) or not isinstance(e.get("reason"), str) or not e["reason"]:
                    raise ValueError(f"entry {i} needs a string 'case' and a non-empty 'reason'")
                expires = dt.date.fromisoformat(e["expires"]) if e.get("expires") else None
                for key in ("clause", "source", "test"):
                    if key in e and not isinstance(e[key], str):
                        raise ValueError(f"entry {i}: {key!r} must be a string")
                if not isinstance(e.get("intermittent", False), bool):
                    raise ValueError(f"entry {i}: 'intermittent' must be true or false")
                entries.append(BaselineEntry(e["case"], e["reason"], expires, e.get("clause"), e.get("source", ""),
                                             e.get("test"), e.get("intermittent", False)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BaselineError(f"{path}: {exc}") from None
        return cls(path, entries)

    def entry_for(self, case_id: str, today: dt.date | None = None, clause: str | None = None,
                  test: str | None = None) -> BaselineEntry | None:
        """The entry listing ``case_id`` (and, where the entry names them, the failed ``clause`` and the ``test``
        with its parameters)."""
        today = today or dt.date.today()
        for entry in self.entries:
            if entry.expires is not None and entry.expires < today:
                continue
            if entry.clause is not None and clause is not None and entry.clause != clause:
                continue
            if entry.test is not None and test is not None and test != entry.test:
                continue
            if fnmatch.fnmatchcase(case_id, entry.case):
                return entry
        return None

    def merged(self, other: "Baseline") -> "Baseline":
        """This baseline's entries, then ``other``'s (a user's baseline beside an upstream server's expectations)."""
        return Baseline(self.path, [*self.entries, *other.entries])
