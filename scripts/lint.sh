#!/usr/bin/env bash
# Static gates (scripts/test.sh runs them first): ruff with the rule set in pyproject.toml, vulture for code
# nothing uses, and basedpyright (scripts/typecheck.py: every import resolves, the shared engine type-checks). Names that only a framework or a string reaches (scapy's field hooks, pytest's hooks and
# pytestmark, gRPC's servicer methods, protocol constants kept as facts) are listed, each with why, in
# scripts/vulture_whitelist.py; the generated gRPC and protobuf modules are not ours to trim.
set -u
cd "$(dirname "$0")/.."
status=0
ruff check --quiet . || status=1
vulture --min-confidence 60 protocols strategies targets reports suites broker wirecheck/*.py tests bench scripts conftest.py \
  scripts/vulture_whitelist.py --exclude "*_pb2.py,*_pb2_grpc.py,node_modules,wirecheck-reports" \
  --ignore-names "pytest_*,test_*,pytestmark" \
  --ignore-decorators "@pytest.fixture,@pytest.hookimpl,@rule,@invariant,@initialize,@precondition,@st.composite,@property,@*.setter,@case" \
  || status=1
python scripts/typecheck.py || status=1
exit "$status"
