"""``--fuzz-workers N``: a suite's bulk case split over N processes, as a user runs it. The seed names the same
mutants at any N, so one worker and three report the same failing mutant (a fault blind Kafka mutants reach), and
the reproduce line carries the option; a clean run passes. (The split itself: tests/unit/test_fuzz_workers.py.)"""

from __future__ import annotations

import re

import pytest

from tests.quality.warm_pytest import ROOT, run_pytest

CASE = "suites/kafka/test_robustness.py::test_structural_mutants_get_a_permitted_outcome"
FAULT = "kafka.malformed-body-answered"


def bulk(*args: str):
    return run_pytest([CASE, "-p", "no:randomly", "-p", "no:cacheprovider", "-o", "addopts=", "--fuzz-seed=5",
                       *args], ROOT, timeout=300)


def failing_mutant(output: str) -> str:
    found = re.search(r"note\s+mutant (#\d+ \S+ at \S+: [0-9a-f]+)", output)
    assert found, output[-3000:]
    return found.group(1)


def test_one_worker_and_three_name_the_same_failing_mutant():
    one = bulk("--fuzz-workers", "1", "--reference-fault", FAULT)
    three = bulk("--fuzz-workers", "3", "--reference-fault", FAULT)
    assert one.returncode == three.returncode == 1, one.stdout[-2000:] + three.stdout[-2000:]
    assert failing_mutant(one.stdout) == failing_mutant(three.stdout)
    assert "--fuzz-seed=5 --fuzz-workers=3" in three.stdout  # the reproduce line names the split


def test_a_clean_split_run_passes():
    done = bulk("--fuzz-workers", "2", "--fuzz=600")
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_a_worker_count_below_one_is_a_usage_error(workers):
    done = bulk("--fuzz-workers", workers)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--fuzz-workers" in done.stderr + done.stdout
