"""A vendor's baseline: known failures, each tied to a case, with a reason and an optional expiry.

File format (JSON)::

    {"schema": "wirecheck.baseline/1",
     "entries": [{"case": "rustlog.fetch.beyond-hw", "reason": "ticket #123: we answer 416",
                  "expires": "2027-03-01"}]}

``case`` may be a case ID or a glob (``rustlog.fetch.*``). A listed case that fails is XFAIL; one that passes is
XPASS, which fails the run so that stale entries are removed. Expired entries no longer apply.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class BaselineEntry:
    case: str
    reason: str
    expires: dt.date | None = None


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
                entries.append(BaselineEntry(e["case"], e["reason"], expires))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise pytest.UsageError(f"--baseline {path}: {exc}") from None
        return cls(path, entries)

    def entry_for(self, case_id: str, today: dt.date | None = None) -> BaselineEntry | None:
        today = today or dt.date.today()
        for entry in self.entries:
            if entry.expires is not None and entry.expires < today:
                continue
            if fnmatch.fnmatchcase(case_id, entry.case):
                return entry
        return None
