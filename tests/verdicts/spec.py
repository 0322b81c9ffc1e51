"""A throwaway protocol, "vtoy", for the runner's verdict tests: u16-length-prefixed ASCII commands.

PING -> PONG (the hello); MAKE <name> -> MADE <name> (the setup step cases declare as a precondition);
READ <name> -> DATA <name> once made; ECHO <text> -> ECHO <text>. Registered only through WIRECHECK_PROTOCOLS
by tests/integration/test_verdicts.py; its server (server.py) can die, break its setup step or answer every other
ECHO wrongly.
"""

from __future__ import annotations

from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from tests.toy.spec import U16_PREFIX, frame  # the toy's framing: u16 length, ASCII text

PING, PONG = frame("PING"), frame("PONG")

CATALOGUE = Catalogue("vtoy", [
    Clause("vtoy.ping.pong", "PING is answered with PONG.", "tests/verdicts/spec.py", Level.MUST),
    Clause("vtoy.make.made", "MAKE <name> is answered with MADE <name>.", "tests/verdicts/spec.py", Level.MUST),
    Clause("vtoy.read.data", "READ <name> of a made name is answered with DATA <name>.", "tests/verdicts/spec.py",
           Level.MUST),
    Clause("vtoy.echo.same", "ECHO <text> is answered with the same frame.", "tests/verdicts/spec.py", Level.MUST),
    Clause("vtoy.robustness.survives", "The server still answers PING after any case.", "tests/verdicts/spec.py",
           Level.MUST),
])

SPEC = ProtocolSpec(
    name="vtoy",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("server", default_port=7998, framing=U16_PREFIX, max_body=1024, hello=lambda: PING,
                        hello_clause="vtoy.ping.pong",
                        is_hello_answer=lambda answer: answer == PONG,
                        describe=lambda data: data[2:].decode("ascii", "replace")),),
    suite="tests.verdicts.cases",
    strategies="tests.verdicts.cases",
)
