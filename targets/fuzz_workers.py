"""The bulk fuzz loop over several worker processes, so that the fuzzer is never what bounds the rate.

One process runs one sliding window of connections (targets/fuzzing.py); where its own CPU is the bound, the run
is split over ``workers`` forked processes, each with its window of connections to its share's target (a share:
how to connect and the adapter prepared against that address, e.g. one reference broker process per core).

What a seed names does not depend on the number of workers:

* blind: the run's mutants are segments of :data:`~strategies.engine.SEGMENT`, each drawn from its own seeded
  generator (strategies.engine.segmented); worker ``w`` sends segments ``w``, ``w + workers``, ... The verdict is
  the failure of the lowest-indexed mutant: a worker stops once it passes the lowest failing index any worker
  found, and every mutant below that index was sent and judged, so one worker or many report the same mutant.
* guided: each worker steers its own stream from its own answers (its generator seeded by the run's seed and
  its number), numbered into the run's indexes by stride; its coverage map is merged into the run's. The seed
  and the number of workers reproduce the run.

A failing batch is bisected inside the worker that sent it (targets.fuzzing.run); the parent re-raises the
failure (:class:`~targets.fuzzing.MutantFailed`) or the death (:class:`~targets.fuzzing.TargetLost`, with every
worker's suspects) as one process would.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from wirecheck.protocols.states import StateModel
from wirecheck.strategies.coverage import CoverageMap
from wirecheck.strategies.engine import Adapter, Mutant, Progress, segment_ends, segmented, strided
from wirecheck.strategies.guided import guided as guided_stream
from wirecheck.targets.fuzzing import WINDOW, Connect, MutantFailed, TargetLost, run

NONE_FAILED = 2**62  # the shared lowest failing index before any worker found one


@dataclass
class Share:
    """Where a worker sends its mutants: a connection factory and the adapter prepared for that target."""

    connect: Connect
    adapter: Adapter


@dataclass
class _Report:
    """What a worker sends back to the parent (picklable)."""

    progress: Progress
    counts: tuple | None  # its coverage map's counts
    failed: tuple[Mutant, tuple] | None = None  # (mutant, its divergence as _portable state)
    lost: tuple[tuple, list[Mutant]] | None = None  # (the divergence as _portable state, the suspects)


def worker_mutants(adapter: Adapter, seed: int, count: int, worker: int, workers: int,
                   coverage: CoverageMap | None = None) -> tuple[Iterator[Mutant], Callable[[Mutant], bool] | None]:
    """A worker's mutants, their run indexes set, and the batch cut they need: blind segments, or (with the
    worker's ``coverage`` map to steer by) its own guided stream."""
    if coverage is None:
        return segmented(adapter.mutants, seed, count, worker, workers), segment_ends
    drawn = adapter.mutants(random.Random(f"{seed}/worker/{worker}"))
    steered = guided_stream(adapter, drawn, coverage, random.Random(f"{seed}/guided/{worker}"))
    return strided(steered, count, worker, workers), None


def _until_lower_failed(mutants: Iterator[Mutant], lowest) -> Iterator[Mutant]:
    """``mutants`` until one is past the lowest failing index another worker found (``lowest``: a shared value)."""
    for mutant in mutants:
        if mutant.index > lowest.value:
            return
        yield mutant


def _work(share: Share, seed: int, count: int, worker: int, workers: int, model: StateModel | None, guided: bool,
          window: int, lowest) -> _Report:
    cpu = time.process_time()
    coverage = CoverageMap(model) if model is not None else None
    progress = Progress(coverage=coverage)
    adapter = share.adapter
    own: Callable[[int], Adapter] | None = getattr(adapter, "for_worker", None)
    if guided and workers > 1 and own is not None:  # its session-state steps must not meet another worker's
        adapter = own(worker)
    mutants, cut = worker_mutants(adapter, seed, count, worker, workers, coverage if guided else None)
    report = _Report(progress, None)
    try:
        run(share.connect, adapter, _until_lower_failed(mutants, lowest), count, progress, window,
            indexed=True, cut=cut)
    except MutantFailed as failed:
        with lowest.get_lock():
            lowest.value = min(lowest.value, failed.mutant.index)
        report.failed = (failed.mutant, _portable(failed.divergence))
    except TargetLost as lost:
        report.lost = (_portable(lost.divergence), lost.suspects)
    progress.non_strict = [(mutant, _portable(divergence)) for mutant, divergence in progress.non_strict]
    progress.coverage = None  # sent as counts: the map holds the protocol's model, which is the parent's too
    report.counts = coverage.counts() if coverage is not None else None
    progress.cpu_s = time.process_time() - cpu
    return report


def _portable(error: BaseException) -> tuple:
    """An exception as picklable state: a divergence's constructor takes more than the message pickle replays."""
    return type(error), error.args, dict(error.__dict__)


def _restored(state: tuple) -> BaseException:
    kind, args, attrs = state
    error = kind.__new__(kind)
    error.args = args
    error.__dict__.update(attrs)
    return error


def _child(conn, *args) -> None:
    try:
        conn.send(_work(*args))
    except BaseException as error:  # the parent says which worker broke and how, never waits on it forever
        conn.send(error)
    finally:
        conn.close()


def run_workers(shares: list[Share], seed: int, count: int, workers: int = 1, model: StateModel | None = None,
                guided: bool = False, window: int = WINDOW) -> Progress:
    """Send the run's ``count`` mutants (the seed's) over ``workers`` processes, worker ``w`` to
    ``shares[w % len(shares)]``; raise :class:`MutantFailed` (the lowest-indexed failing mutant) or
    :class:`TargetLost` as :func:`targets.fuzzing.run` does. ``model``: fill a coverage map (in the returned
    progress); ``guided``: each worker steers its mutants by its own map (needs ``model``)."""
    if guided and model is None:
        raise ValueError("a guided run needs the protocol's state model")
    if workers < 1 or not shares:
        raise ValueError(f"{workers} workers over {len(shares)} targets: at least one of each is needed")
    lowest = multiprocessing.get_context("fork").Value("q", NONE_FAILED)
    wall = time.perf_counter()
    args = [(shares[w % len(shares)], seed, count, w, workers, model, guided, window) for w in range(workers)]
    if workers == 1:
        reports = [_work(*args[0], lowest)]
    else:
        reports = _forked(args, lowest)
    return _merged(reports, model, workers, time.perf_counter() - wall)


def _forked(args: list[tuple], lowest) -> list[_Report]:
    """Run each worker in a forked process (it inherits the adapters and connection factories) and collect their
    reports in worker order."""
    context = multiprocessing.get_context("fork")
    started = []
    for arg in args:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_child, args=(send, *arg, lowest), daemon=True)
        process.start()
        send.close()
        started.append((process, receive))
    reports = []
    for worker, (process, receive) in enumerate(started):
        try:
            got = receive.recv()
        except EOFError:
            got = RuntimeError(f"fuzz worker {worker} ended without a report (exit code {process.exitcode})")
        process.join()
        if isinstance(got, BaseException):
            for other, _ in started:
                other.kill()
            raise RuntimeError(f"fuzz worker {worker} failed: {got!r}") from got
        reports.append(got)
    return reports


def _merged(reports: list[_Report], model: StateModel | None, workers: int, seconds: float) -> Progress:
    coverage = CoverageMap(model) if model is not None else None
    total = Progress(coverage=coverage, workers=workers, seconds=seconds)
    for report in reports:
        done = report.progress
        total.cases += done.cases
        total.connections += done.connections
        total.batches += done.batches
        total.bisections += done.bisections
        total.generate_s += done.generate_s
        total.cpu_s += done.cpu_s
        total.non_strict.extend((mutant, _restored(divergence)) for mutant, divergence in done.non_strict)
        for family, sent in done.operators.items():
            total.operators[family] = total.operators.get(family, 0) + sent
        if coverage is not None and report.counts is not None:
            coverage.absorb(report.counts)
    total.non_strict.sort(key=lambda pair: pair[0].index)
    lost = [report.lost for report in reports if report.lost is not None]
    if lost:  # a death outranks a divergence: every worker's unproven mutants are suspects
        suspects = {m.index: m for _, found in lost for m in found}
        raise TargetLost(_restored(lost[0][0]), [suspects[index] for index in sorted(suspects)],  # type: ignore[arg-type]
                         total)
    failed = [report.failed for report in reports if report.failed is not None]
    if failed:
        mutant, divergence = min(failed, key=lambda pair: pair[0].index)
        raise MutantFailed(mutant, _restored(divergence), total)  # type: ignore[arg-type]
    return total
