"""The state-coverage maps of a run's bulk cases (strategies/coverage.py writes one per case, as plain JSON), merged
per protocol for run.json and the summary."""

from __future__ import annotations

from collections import Counter


def merged(maps: list[dict]) -> dict:
    """Several runs' maps of one protocol (one per bulk case) as one: counts summed, a catalogue cell reached when
    any run reached it, distinct reaction states recounted (distinct transitions: the largest of one run, since the
    pairs themselves are not kept)."""
    if len(maps) == 1:
        return maps[0]
    cells: Counter = Counter()
    moves: Counter = Counter()
    states: Counter = Counter()
    catalogue: dict[tuple, dict] = {}
    for one in maps:
        for cell in one["cells"]:
            cells[(cell["state"], cell["request"], cell["reaction"])] += cell["count"]
        for move in one["transitions"]:
            moves[(move["from"], move["request"], move["reaction"], move["to"])] += move["count"]
        states.update(one["states"])
        for cell in one["catalogue"]:
            key = (cell["clause"], cell["request"], cell["reaction"])
            row = catalogue.setdefault(key, {**cell, "reached": False, "count": 0})
            row["count"] += cell["count"]
            row["reached"] = row["reached"] or cell["reached"]
    rows = list(catalogue.values())
    return {
        "mutants": sum(one["mutants"] for one in maps),
        "initial": maps[0]["initial"],
        "states": dict(states),
        "cells": [{"state": s, "request": r, "reaction": x, "count": n} for (s, r, x), n in sorted(cells.items())],
        "transitions": [{"from": a, "request": r, "reaction": x, "to": b, "count": n}
                        for (a, r, x, b), n in sorted(moves.items())],
        "distinct": {"cells": len(cells), "transitions": max(one["distinct"]["transitions"] for one in maps),
                     "catalogue_reached": sum(row["reached"] for row in rows), "catalogue": len(rows)},
        "catalogue": rows,
    }
