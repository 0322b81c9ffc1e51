"""The CI gate: exit non-zero on any regression, or when the run under test executed no case.

A run that executed nothing (no records, or only NOT-RUN/UNIMPLEMENTED) must not pass silently: h2spec's
"No matched tests found" exit 0 and tlsfuzzer's ``good == 0`` check are the models (shared/notes/anchors.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from wirecheck.reports.pipeline import conformance, warehouse

OK, FAILED, USAGE, BROKEN = 0, 1, 2, 3


@dataclass
class GateResult:
    run_id: str | None
    executed: int
    regressions: list[dict] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return FAILED if (self.executed == 0 or self.regressions) else OK

    def lines(self) -> list[str]:
        out = [f"run {self.run_id}: {self.executed} case(s) executed, {len(self.regressions)} regression(s)"]
        if self.executed == 0:
            out.append("FAIL: the run executed no case")
        for r in self.regressions:
            out.append(f"REGRESSION ({r['verdict']}) {r['target']} {r['nodeid']} [{r['clause']}]: "
                       f"{r['baseline_verdict']} in {r['baseline_run_id']}, {r['verdict']} now: {r['message']}")
        return out


def gate(spark: SparkSession, warehouse_path: str, run_id: str | None = None,
         baseline_run_id: str | None = None) -> GateResult:
    cases = warehouse.load_cases(spark, warehouse_path)
    run_id = run_id or _latest_run(spark, warehouse_path) or conformance.latest_run_id(cases)
    if run_id is None:
        return GateResult(None, 0)
    executed = conformance.executed_count(cases, run_id)
    rows = [r.asDict() for r in conformance.regressions(cases, run_id, baseline_run_id).collect()]
    return GateResult(run_id, executed, rows)


def _latest_run(spark: SparkSession, warehouse_path: str) -> str | None:
    """The newest run by run.json, so that a run with no case record at all is still the one gated."""
    runs = warehouse.load_runs(spark, warehouse_path)
    if runs is None:
        return None
    row = runs.orderBy(runs.started_ts.desc_nulls_last(), runs.run_id.desc()).select("run_id").first()
    return None if row is None else row.run_id
