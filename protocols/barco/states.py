"""Barco's reaction states (protocols/states.py): the binary producer's connection after its STARTUP, errors by
the notes' code names (wire.ERROR_CODES), the error cells the clause catalogue names.

A connection must open with STARTUP (barco.producer.startup-first); the bulk engine sends it as every
connection's greeting, so every mutant is sent in ``started``. READY and PRODUCE_RESPONSE are named answers.
"""

from __future__ import annotations

from wirecheck.protocols.barco import wire
from wirecheck.protocols.states import ANY, Cell, StateModel

STATES = StateModel(
    initial="started",
    states={"started": "STARTUP answered READY (the greeting of every fuzzed connection)"},
    error_names=wire.ERROR_CODES,
    named_answers=True,  # the classifier's detail is the answer's opcode name
    requests=("HEARTBEAT", "PRODUCE", "STARTUP"),
    error_vocabulary={f"ERROR({code})": name for code, name in wire.ERROR_CODES.items()},
    cells=(
        Cell("barco.framing.version", ANY, "error:serverError"),
        Cell("barco.framing.oversize", ANY, "error:serverError"),
        Cell("barco.producer.startup-first", "PRODUCE", "error:serverError"),
        Cell("barco.producer.message-lengths", "PRODUCE", "error:serverError"),
        Cell("barco.producer.no-messages", "PRODUCE", "error:serverError"),
        Cell("barco.producer.truncated-body", "PRODUCE", "error:serverError"),
        Cell("barco.producer.topic-valid", "PRODUCE", "error:serverError"),
        Cell("barco.producer.second-startup", "STARTUP", "error:serverError"),
    ),
)
