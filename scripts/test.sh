#!/usr/bin/env bash
# The test command: wirecheck's own tests and, beside them, the static gates (scripts/lint.sh) and the Spark pipeline
# tests (one process: one JVM), then every conformance suite against the bundled reference broker. Exit 0 only if every part ran tests and passed;
# pytest's exit code 5 (no tests collected) counts as a failure.
set -u
cd "$(dirname "$0")/.."
status=0

run() {
  echo "+ $*"
  "$@"
  local rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "FAILED: no tests collected by: $*" >&2
    status=1
  elif [ "$rc" -ne 0 ]; then
    echo "FAILED (exit $rc): $*" >&2
    status=1
  fi
}

# The static gates (ruff, vulture, basedpyright: scripts/lint.sh, about 45 s of one core) run beside the self-tests
# rather than before them; their output follows the self-tests'.
lint_log="$(mktemp)"
(run bash scripts/lint.sh; exit "$status") >"$lint_log" 2>&1 &
lint=$!

# The pipeline tests share one JVM and mostly wait on it (and on the JVMs they start), so they run beside the
# self-tests: the two together take about the time of the longer one, not the sum. Their output follows.
pipeline=""
pipeline_log="$(mktemp)"
if python -c "import pyspark" 2>/dev/null; then
  (run python -m pytest -p no:xdist tests/pipeline; exit "$status") >"$pipeline_log" 2>&1 &
  pipeline=$!
elif [ "${WIRECHECK_REQUIRE_PIPELINE:-0}" = "1" ]; then
  echo "FAILED: pyspark is not installed (pip install -e '.[pipeline]')" >&2
  status=1
else
  echo "pipeline tests not run: pyspark is not installed (pip install -e '.[pipeline]'; needs Java 17+)"
fi
run python -m pytest -n 2 tests --ignore=tests/pipeline
wait "$lint" || status=1
cat "$lint_log"
rm -f "$lint_log"
if [ -n "$pipeline" ]; then
  wait "$pipeline" || status=1
  cat "$pipeline_log"
fi
rm -f "$pipeline_log"
# The suites run in a random order (seeded and printed, so a failing order can be replayed with
# WIRECHECK_ORDER_SEED=N): every case must pass alone, in any order, under -n 2.
seed="${WIRECHECK_ORDER_SEED:-$RANDOM}"
echo "suite order seed: $seed"
run python -m pytest -n 2 suites --random-order-bucket=global --random-order-seed="$seed"
# The Kafka suite against Apache Kafka itself (--upstream starts it on loopback): 0 FAILED; its expected divergences
# (targets/upstream/expectations/) are XFAIL with their sources, listed in the summary
run python -m pytest -n 2 suites/kafka --upstream kafka --random-order-bucket=global --random-order-seed="$seed"
# ... and the Pravega suite against Pravega standalone
run python -m pytest -n 2 suites/pravega --upstream pravega --random-order-bucket=global --random-order-seed="$seed"
# The suites against configured servers (scripts/configured.py) run inside the self-tests, twice against one broker
# in a random order: tests/quality/test_configured.py.
exit "$status"
