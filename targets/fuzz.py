"""Fuzz budgets: ``--fuzz=ci`` (fast, reproducible), ``--fuzz=nightly`` (deep), ``--fuzz=guided`` (ci's size,
guided), or an example count.

A budget sets two numbers: Hypothesis examples per property-based case, and mutants per bulk mutation case
(bulk cases use a seeded ``random.Random`` and plain bytes, to reach thousands of cases per second); and whether
bulk cases are guided by the target's answers (strategies/guided.py): the nightly budget is, the others draw blind
(the mutants of a blind run depend on the seed alone, whatever the target answers).

``--fuzz-workers N`` splits each bulk case over N forked processes, each with its own connections
(targets/fuzz_workers.py): for a target with cores to spare, where one fuzzing process is the bound. Its mutants
are drawn in seeded segments, so a seed names the same run at any N (not the one-process run without the option).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import HealthCheck, settings

PROFILES = {
    # name: (hypothesis examples, bulk mutants, derandomize, guided bulk cases)
    "ci": (25, 3_000, True, False),
    "nightly": (1_000, 200_000, False, True),
    # the ci budget, guided: what a state-hidden fault needs (tests/quality runs it for those)
    "guided": (25, 3_000, True, True),
}


@dataclass(frozen=True)
class FuzzBudget:
    name: str
    examples: int
    mutants: int
    seed: int
    derandomize: bool
    guided: bool = False  # bulk cases steered by the target's reactions (strategies/guided.py)
    workers: int | None = None  # --fuzz-workers: bulk cases over this many processes (None: one, the plain stream)

    @classmethod
    def parse(cls, text: str, seed: int | None, workers: int | None = None) -> "FuzzBudget":
        if text in PROFILES:
            examples, mutants, derandomize, guided = PROFILES[text]
        elif text.isdigit() and int(text) > 0:
            examples, mutants, derandomize, guided = int(text), 10 * int(text), False, False
        else:
            import pytest

            raise pytest.UsageError(f"--fuzz={text}: expected {', '.join(PROFILES)} or a positive example count")
        if workers is not None and workers < 1:
            import pytest

            raise pytest.UsageError(f"--fuzz-workers={workers}: expected a positive number of processes")
        if seed is None:
            seed = 0 if derandomize else random.SystemRandom().randrange(2**32)
        return cls(text, examples, mutants, seed, derandomize, guided, workers)

    @property
    def reproduce(self) -> str:
        """The options that name this budget's bulk mutants again."""
        return f"--fuzz-seed={self.seed}" + (f" --fuzz-workers={self.workers}" if self.workers else "")

    def rng(self, salt: str) -> random.Random:
        """A generator for one case: the same seed and case give the same mutants."""
        return random.Random(f"{self.seed}/{salt}")


#: seconds Hypothesis may spend shrinking one failure (its own limit is five minutes): against a target that waits
#: out the deadline on every example, shrinking would otherwise take minutes; the failure shows the smallest
#: example found within the budget, and says so (plugin._note_example)
SHRINK_BUDGET_S = {"ci": 30, "nightly": 120}
DEFAULT_SHRINK_BUDGET_S = 60


def shrink_budget(budget: FuzzBudget) -> int:
    return SHRINK_BUDGET_S.get(budget.name, DEFAULT_SHRINK_BUDGET_S)


def register_hypothesis_profiles(budget: FuzzBudget) -> None:
    # Hypothesis keeps this limit as a module constant that it documents as the one to patch
    from hypothesis.internal.conjecture import engine

    engine.MAX_SHRINKING_SECONDS = shrink_budget(budget)
    settings.register_profile(
        "wirecheck",
        max_examples=budget.examples,
        derandomize=budget.derandomize,
        database=None,
        deadline=None,
        print_blob=True,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )
    settings.load_profile("wirecheck")
