"""A guided bulk run (strategies/guided.py) against the reference broker is reproduced exactly by its seed: the same
mutants, in the same order, and the same state-coverage map; and guidance reads the map (another map, other
mutants). Two fresh brokers per protocol, so that the second run meets the target the first one met."""

from __future__ import annotations

import hashlib
import importlib
import random

import pytest

from wirecheck.protocols.registry import all_specs
from wirecheck.protocols.states import step_paths
from wirecheck.protocols.transcript import Transcript
from wirecheck.strategies.coverage import CoverageMap
from wirecheck.strategies.engine import Progress
from wirecheck.strategies.guided import Guided, guided
from wirecheck.targets.fuzzing import run
from wirecheck.targets.launcher import launch
from wirecheck.targets.session import Session

SPECS = all_specs()
MUTANTS = 2_000


class Recorded:
    """The mutants an iterator gave, fingerprinted in order."""

    def __init__(self, mutants):
        self.mutants, self.digest = mutants, hashlib.sha256()

    def __iter__(self):
        return self

    def __next__(self):
        mutant = next(self.mutants)
        self.digest.update(mutant.frame + b"|" + mutant.operator.encode())
        return mutant


def guided_run(name: str, workdir, seed: int) -> tuple[str, dict, Guided]:
    spec = SPECS[name]
    module = importlib.import_module(f"wirecheck.strategies.{name}")
    endpoint_name = getattr(module, "FUZZ_ENDPOINT", None)
    endpoint = spec.endpoint(endpoint_name)
    broker = launch([name], workdir=workdir)
    try:
        address = broker.address(name, None if endpoint is spec.primary else endpoint_name)
        transcript = Transcript(name, spec.describe)

        def connect():
            return Session(address, endpoint, transcript, deadline=2.0)

        session = connect()
        try:
            answers = [session.request(frame).frame for frame in module.fuzz_setup("guided-repro")]
        finally:
            session.close()
        adapter = module.fuzz_adapter("guided-repro", answers)
        coverage = CoverageMap(spec.states)
        steered = guided(adapter, adapter.mutants(random.Random(seed)), coverage)
        recorded = Recorded(steered)
        run(connect, adapter, recorded, MUTANTS, progress=Progress(coverage=coverage))
        return recorded.digest.hexdigest(), coverage.to_dict(), steered
    finally:
        broker.stop()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_guided_run_is_reproduced_by_its_seed(name, tmp_path):
    first, first_map, steered = guided_run(name, tmp_path / "one", seed=7)
    again, again_map, _ = guided_run(name, tmp_path / "two", seed=7)
    assert steered.corpus, "the run kept no recipe: nothing guided it"
    assert first_map["mutants"] == MUTANTS
    assert (again, again_map) == (first, first_map)
    # every session state the adapter's steps lead to was reached, those whose steps are made from an earlier
    # step's answer (Kafka's AddPartitionsToTxn with the producer id InitProducerId chose) among them
    aimed = {path: state for state, path in step_paths(SPECS[name].states, steered.steps).items() if path}
    unreached = sorted(state for state in aimed.values() if not first_map["states"].get(state))
    assert not unreached, f"no mutant was sent in {unreached}: {first_map['states']}"
