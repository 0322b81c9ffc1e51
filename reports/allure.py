"""Allure: labels when a case starts, the transcript attached when it is kept, and a verdict the run's end revised
written into the case's result file (a subscriber of the runner's event stream; labels and attachments need
allure-pytest, installed as a core dependency).

allure-pytest writes a case's result file (``<uuid>-result.json`` in ``--alluredir``) as the case ends, in whichever
process ran it; a carried failure is known only once every case is recorded, so its status is changed in that file
then. Each case's result carries its node id as the label ``NODEID_LABEL`` to be found by.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from wirecheck.reports.events import CaseStarted, RunFinished, VerdictReached, VerdictRevised

try:
    import allure
except ImportError:  # pragma: no cover - allure-pytest is a core dependency, but the suite runs without it
    allure = None

#: the label naming the pytest node id of a case's Allure result
NODEID_LABEL = "wirecheck_nodeid"


class AllureReporter:
    def __init__(self, results: Path | None = None):
        self.results = results  # --alluredir: where the results are (None: Allure is not written)
        #: when the run began (Allure's milliseconds): the directory may hold earlier runs' results, left as they are
        self.since = int(time.time() * 1000)
        self._revised: dict[str, VerdictRevised] = {}

    def handle(self, event) -> None:
        if isinstance(event, VerdictRevised):
            self._revised[event.nodeid] = event
        elif isinstance(event, RunFinished) and event.controller and self._revised:
            self._rewrite()
        if allure is None:
            return
        if isinstance(event, CaseStarted):
            allure.dynamic.label("case", event.case_id)
            allure.dynamic.label(NODEID_LABEL, event.nodeid)
            allure.dynamic.label("clause_level", event.clause.level.value)
            allure.dynamic.feature(event.protocol)
            allure.dynamic.description(f"{event.clause.requirement}\n\nSource: {event.clause.source}")
        elif isinstance(event, VerdictReached) and event.case.transcript is not None and event.case.transcript.events:
            allure.attach(event.case.transcript.render(limit=400), name=f"{event.case.case_id} transcript",
                          attachment_type=allure.attachment_type.TEXT)

    def _rewrite(self) -> None:
        """Each revised case's result file takes the Allure status of its new verdict, with the reason."""
        if self.results is None or not self.results.is_dir():
            return
        for path in self.results.glob("*-result.json"):
            try:
                result = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # not a result allure-pytest wrote whole: left as it is
            nodeid = next((label.get("value") for label in result.get("labels", [])
                           if label.get("name") == NODEID_LABEL), None)
            revised = self._revised.get(nodeid) if nodeid is not None else None
            if revised is None or result.get("start", 0) < self.since:
                continue
            result["status"] = revised.now.allure
            result["statusDetails"] = {"message": f"{revised.now.value}: {revised.message}"}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
            tmp.replace(path)
