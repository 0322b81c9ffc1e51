"""Allure: labels when a case starts, the transcript attached when it is kept (a subscriber of the runner's
event stream; does nothing when allure-pytest is not installed)."""

from __future__ import annotations

from wirecheck.reports.events import CaseStarted, VerdictReached

try:
    import allure
except ImportError:  # pragma: no cover - allure-pytest is a core dependency, but the suite runs without it
    allure = None


class AllureReporter:
    def handle(self, event) -> None:
        if allure is None:
            return
        if isinstance(event, CaseStarted):
            state = event.case
            allure.dynamic.label("case", state.case_id)
            allure.dynamic.label("clause_level", state.clause.level.value)
            allure.dynamic.feature(state.spec.name)
            allure.dynamic.description(f"{state.clause.requirement}\n\nSource: {state.clause.source}")
        elif isinstance(event, VerdictReached) and event.keep_transcript and event.case.transcript.events:
            allure.attach(event.case.transcript.render(limit=400), name=f"{event.case.case_id} transcript",
                          attachment_type=allure.attachment_type.TEXT)
