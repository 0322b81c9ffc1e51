#!/bin/sh
# wirecheck's nightly recipe (docs/ci.md): what a vendor's CI runs once its server is up. Every command line
# below also appears, unchanged, in the GitHub Actions and GitLab CI examples of docs/ci.md; a test runs this
# script against the reference broker and checks that the examples still match it.
#
# Settings, from the environment:
#   WIRECHECK_TARGET    required: PROTOCOL=HOST:PORT of the server under test, e.g. kafka=127.0.0.1:9092
#   WIRECHECK_SUITES    which suites (default: all; e.g. "kafka")
#   WIRECHECK_PROFILE   fuzz budget: nightly (default: 1,000 examples, 200,000 mutants, --confirm 2) or ci
#   WIRECHECK_BASELINE  known-failures file (optional; README "Baseline file")
#   WIRECHECK_OUT       where everything goes (default wirecheck-out): runs/ (keep between nights: the
#                       warehouse is rebuilt from it incrementally), warehouse/, site/, allure/
#   WIRECHECK_SAFETY_TIME  seconds of a safety run under faults after the suites (optional; for a protocol with a
#                       safety workload: `wirecheck safety --help` lists them); WIRECHECK_RESTART: the shell
#                       command that restarts your server (kill and start) during it, every 20 s
# Exit status: 1 when a case failed that the baseline does not list, or when the gate finds a regression
# against the previous night (or the run executed nothing); 3 when a pipeline step could not do its work (no Java,
# an unreadable run or warehouse): a broken step is never reported as a verdict.
set -u
: "${WIRECHECK_TARGET:?set WIRECHECK_TARGET=PROTOCOL=HOST:PORT}"
WIRECHECK_SUITES="${WIRECHECK_SUITES:-}"
WIRECHECK_PROFILE="${WIRECHECK_PROFILE:-nightly}"
WIRECHECK_OUT="${WIRECHECK_OUT:-wirecheck-out}"
status=0

# 1. The suites against the server; the Allure results and each run's summary.html are the artifacts.
wirecheck run $WIRECHECK_SUITES --target "$WIRECHECK_TARGET" --fuzz="$WIRECHECK_PROFILE" ${WIRECHECK_BASELINE:+--baseline "$WIRECHECK_BASELINE"} --report-dir "$WIRECHECK_OUT/runs" --alluredir "$WIRECHECK_OUT/allure" -n 2 || status=1
# 2. Optional: a long safety run (real clients under restarts and network faults; README "Safety under faults").
#    Its directory goes beside the suites' runs, so the warehouse and the report take it too. Any anomaly fails the
#    night, as does a safety run that could not run (exit 3) or was misused (exit 4).
if [ -n "${WIRECHECK_SAFETY_TIME:-}" ]; then
  wirecheck safety "${WIRECHECK_TARGET%%=*}" --target "$WIRECHECK_TARGET" --time "$WIRECHECK_SAFETY_TIME" ${WIRECHECK_RESTART:+--target-restart "$WIRECHECK_RESTART"} --report-dir "$WIRECHECK_OUT/runs/safety-$(date -u +%Y%m%dT%H%M%SZ)" || status=1
fi
# 3. Every run into the warehouse (runs already there are skipped), then the HTML report with its charts.
wirecheck pipeline ingest "$WIRECHECK_OUT/runs/*" --warehouse "$WIRECHECK_OUT/warehouse" || exit 3
wirecheck pipeline report --warehouse "$WIRECHECK_OUT/warehouse" --out "$WIRECHECK_OUT/site" || exit 3
# 4. The gate: tonight's run against the previous one of the same target.
wirecheck pipeline gate --warehouse "$WIRECHECK_OUT/warehouse" || status=$?  # 1: regression; 3: could not gate
exit "$status"
