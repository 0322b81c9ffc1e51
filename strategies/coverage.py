"""The state-coverage map of one bulk run: which reaction states (session state x request x reaction) the target
was driven into, how often, the transitions between them, and which cells the clause catalogue names were reached.
Pure: the I/O loop (targets/fuzzing.py) feeds it each judged mutant with the connection it went on.

Two kinds of transition are counted. A *session move* is a declared change of a connection's session state
(``StateModel.transitions``: SetupAppend answered, say). A *reaction transition* is a pair of consecutive reaction
states on one connection, the response-code sequence AFLNet's state model is built from; it is what a guided run
tries to multiply, and what bench/guided.py counts.
"""

from __future__ import annotations

from collections import Counter

from wirecheck.protocols.reactions import CLOSE, SILENCE, Observation
from wirecheck.protocols.states import ANY, ENDED, StateModel, request_kind

START = "start"  # the reaction state before the first request of a connection
CLOSE_OR_WAIT = "close-or-silence"  # a close or a wait where the spec permits both and a short patience tells them

State = tuple[str, str, str]  # (session state, request, reaction)


class CoverageMap:
    """Counts for one run. ``fresh`` collects (mutant, what was new) for a guided run to read and clear."""

    def __init__(self, model: StateModel):
        self.model = model
        self.cells: Counter[State] = Counter()
        self.pairs: Counter[tuple[State | str, State]] = Counter()
        self.moves: Counter[tuple[str, str, str, str]] = Counter()  # (before, request, reaction, after)
        self.in_state: Counter[str] = Counter()  # mutants sent in each session state
        self.fresh: list = []  # (mutant, new reaction state or transition) since the guided run last looked
        self._connections: dict[int, tuple[str, State | str]] = {}  # connection -> (session state, last reaction)
        #: guided runs: (operator, request kind) of a recipe -> the (request, reaction) its mutants drew, counted
        self.drawn: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
        self.followed: set[State] = set()  # reaction states a request was seen to follow on their connection
        #: (session state, last reaction state) of the connection the next batch goes on, and how many batches
        #: were announced so far: the I/O loop says so (:meth:`following`) before it draws a batch
        self.ahead: tuple[str, State | str] = (model.initial, START)
        self.batches = 0

    def opened(self, connection: int) -> None:
        """A new connection: its session starts in the initial state."""
        self._connections[connection] = (self.model.initial, START)

    def record(self, connection: int, mutant, obs: Observation) -> None:
        """One judged mutant: its reaction state on ``connection`` and what it moved."""
        model = self.model
        state, last = self._connections.get(connection, (model.initial, START))
        if state == ENDED:  # an answer read after the connection ended (a late one): the session is gone
            state = model.initial
        request = mutant.request or "?"
        reaction = model.reaction(obs)
        permitted = mutant.reaction
        if reaction in (CLOSE, SILENCE) and permitted.patience is not None and {CLOSE, SILENCE} <= permitted.outcomes:
            # a short patience tells a close from a wait by the clock alone (a loaded target closes later):
            # both are conforming, and one cell keeps a guided run reproducible on a busy machine
            reaction = CLOSE_OR_WAIT
        cell = (state, request, reaction)
        pair = (last, cell)
        new_cell, new_pair = cell not in self.cells, pair not in self.pairs
        self.cells[cell] += 1
        self.pairs[pair] += 1
        self.in_state[state] += 1
        after = model.after(state, request_kind(request), reaction)
        if after not in (state, ENDED):
            self.moves[(state, request_kind(request), reaction, after)] += 1
        self._connections[connection] = (after, cell)
        if last != START:
            self.followed.add(last)  # type: ignore[arg-type]
        if mutant.origin:
            self.drawn.setdefault(mutant.origin[1:], Counter())[(request, reaction)] += 1
        if new_cell or new_pair:
            self.fresh.append((mutant, cell if new_cell else pair))

    def following(self, connection: int | None) -> None:
        """The next batch goes on ``connection`` (None: a new one): a guided run aims its first mutant at a
        transition from that connection's last reaction state."""
        state, last = self._connections.get(connection, (ENDED, START))  # type: ignore[arg-type]
        self.ahead = (self.model.initial, START) if state == ENDED else (state, last)
        self.batches += 1

    # -- runs split over worker processes (targets/fuzz_workers.py)

    def counts(self) -> tuple[Counter, Counter, Counter, Counter]:
        """What a worker's map sends back: its cells, pairs, moves and mutants per session state."""
        return self.cells, self.pairs, self.moves, self.in_state

    def absorb(self, counts: tuple[Counter, Counter, Counter, Counter]) -> None:
        """Add a worker's :meth:`counts` to this map."""
        for mine, theirs in zip(self.counts(), counts):
            mine.update(theirs)

    # -- the report

    def catalogue_cells(self) -> list[dict]:
        """Each cell the clause catalogue names (``StateModel.cells``), with the mutants that reached it."""
        reached: Counter[tuple[str, str]] = Counter()
        for (_, request, reaction), count in self.cells.items():
            reached[(request_kind(request), reaction)] += count
            reached[(ANY, reaction)] += count
        return [{"clause": cell.clause, "request": cell.request, "reaction": cell.reaction,
                 "reached": reached[(cell.request, cell.reaction)] > 0, "count": reached[(cell.request, cell.reaction)]}
                for cell in self.model.cells]

    def to_dict(self) -> dict:
        """The run's map, as run.json and the case record carry it (docs/report-schema.md: ``coverage``)."""
        catalogue = self.catalogue_cells()
        return {
            "mutants": sum(self.cells.values()),
            "initial": self.model.initial,
            "states": {state: self.in_state.get(state, 0) for state in self.model.states},
            "cells": [{"state": s, "request": r, "reaction": x, "count": n}
                      for (s, r, x), n in sorted(self.cells.items())],
            "transitions": [{"from": before, "request": request, "reaction": reaction, "to": after, "count": n}
                            for (before, request, reaction, after), n in sorted(self.moves.items())],
            "distinct": {"cells": len(self.cells), "transitions": len(self.pairs),
                         "catalogue_reached": sum(c["reached"] for c in catalogue),
                         "catalogue": len(catalogue)},
            "catalogue": catalogue,
        }
