"""The bulk run split over worker processes (targets/fuzz_workers.py) against the toy protocol of
test_fuzz_engine: a seed names the same mutants and the same verdict on one worker or several; a guided run over
workers is reproduced by its seed; every worker's coverage is merged into the run's map."""

from __future__ import annotations

import hashlib

import pytest

from wirecheck.protocols.states import StateModel
from wirecheck.strategies import engine
from wirecheck.strategies.engine import Mutant, segmented, strided
from wirecheck.targets.fuzz_workers import Share, run_workers
from wirecheck.targets.fuzzing import MutantFailed
from tests.unit.test_fuzz_engine import ANSWERED, CLOSES, REJECTED, ToyAdapter, ToyServer, connector, frame

COUNT = 3 * engine.SEGMENT + 123  # four segments, the last one short


class SeededToy(ToyAdapter):
    """Mutants drawn from the generator: mostly answered, some errors and closes, and (when ``bad``) a rare
    request the toy server wrongly answers."""

    def __init__(self, bad: float = 0.0):
        super().__init__([])
        self.bad = bad

    def mutants(self, rng):
        while True:
            draw = rng.random()
            body, reaction = ((b"bad", REJECTED) if draw < self.bad else (b"bye", CLOSES) if draw < 0.05 else
                              (b"err", REJECTED) if draw < 0.3 else (b"ok %d" % rng.randrange(1000), ANSWERED))
            yield Mutant(frame(body), "valid", body.decode(), reaction, request=body[:3].decode().strip())


TOY_STATES = StateModel(initial="open", states={"open": "the toy keeps no session"}, error_names=str,
                        requests=("ok", "err", "bye", "bad"))


@pytest.fixture
def server():
    srv = ToyServer()
    yield srv
    srv.stop()


def fingerprint(mutants: list[Mutant]) -> str:
    digest = hashlib.sha256()
    for mutant in sorted(mutants, key=lambda m: m.index):
        digest.update(b"%d|" % mutant.index + mutant.frame)
    return digest.hexdigest()


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_the_run_is_the_same_mutants_whatever_the_number_of_workers(workers):
    adapter = SeededToy()
    alone = list(segmented(adapter.mutants, 7, COUNT))
    shared = [m for w in range(workers) for m in segmented(adapter.mutants, 7, COUNT, w, workers)]
    assert [m.index for m in alone] == list(range(COUNT))
    assert fingerprint(shared) == fingerprint(alone)
    assert fingerprint(list(segmented(adapter.mutants, 8, COUNT))) != fingerprint(alone)


def test_a_worker_stream_is_numbered_into_the_run_by_stride():
    mutants = strided(SeededToy().mutants(__import__("random").Random(1)), 10, 1, 3)
    assert [m.index for m in mutants] == [1, 4, 7]


def test_a_batch_never_spans_two_segments():
    mutants = segmented(SeededToy().mutants, 3, 2 * engine.SEGMENT)
    for batch in engine.plan_batches(mutants, cut=engine.segment_ends):
        assert len({m.index // engine.SEGMENT for m in batch}) == 1


def test_one_worker_or_several_report_the_same_failing_mutant(server):
    adapter = SeededToy(bad=0.0002)
    found = []
    for workers in (1, 2, 3):
        with pytest.raises(MutantFailed) as failed:
            run_workers([Share(connector(server), adapter)], 11, COUNT, workers)
        found.append((failed.value.mutant.index, failed.value.mutant.frame, failed.value.divergence.clause.id))
    assert found[0][1] == frame(b"bad") and found[0][2] == "toy.error"
    assert found[1:] == found[:1] * 2
    first_bad = next(m.index for m in segmented(adapter.mutants, 11, COUNT) if m.frame == frame(b"bad"))
    assert found[0][0] == first_bad
    assert first_bad >= engine.SEGMENT  # past the first segment: the worker that sent it was not worker 0


def test_workers_send_every_mutant_and_merge_their_coverage(server):
    progress = run_workers([Share(connector(server), SeededToy())], 5, COUNT, 3, model=TOY_STATES)
    assert progress.cases == COUNT and progress.workers == 3
    assert progress.coverage is not None and sum(progress.coverage.cells.values()) == COUNT
    assert progress.cpu_s > 0


def test_a_guided_run_over_workers_is_reproduced_by_its_seed(server):
    maps = [run_workers([Share(connector(server), SeededToy())], seed, 2_000, 2, model=TOY_STATES,
                        guided=True).coverage.to_dict() for seed in (4, 4, 9)]
    assert maps[0]["mutants"] == 2_000
    assert maps[1] == maps[0]
    assert maps[2] != maps[0]
