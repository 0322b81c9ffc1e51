"""vtoy's conformance cases, in this order: pings, the setup step's own case, reads that need it, echoes,
pings again. Run by tests/integration/test_verdicts.py with the protocol registered."""

import pytest

from wirecheck.protocols.verdicts import Divergence
from tests.verdicts.spec import PING, PONG, frame


def exchange(target, clause_id: str, request: str, wanted: str, session=None) -> None:
    session = session or target.connect()
    reply = session.request(frame(request))
    if not reply.is_frame or reply.frame != frame(wanted):
        raise Divergence(target.clause(clause_id), wanted, str(reply) if not reply.is_frame else
                         reply.frame[2:].decode("ascii", "replace"))


def make(target, name: str, session) -> None:
    exchange(target, "vtoy.make.made", f"MAKE {name}", f"MADE {name}", session)


@pytest.mark.case("vtoy.ping.pong")
@pytest.mark.parametrize("n", range(3))
def test_ping(target, n):
    exchange(target, "vtoy.ping.pong", "PING", "PONG")


@pytest.mark.case("vtoy.make.made")
def test_make(target):
    make(target, target.unique("m"), target.connect())


@pytest.mark.case("vtoy.read.data")
@pytest.mark.parametrize("n", range(3))
def test_read(target, n):
    session = target.connect()
    name = target.unique("r")
    with target.precondition(f"{name} made"):
        make(target, name, session)
    exchange(target, "vtoy.read.data", f"READ {name}", f"DATA {name}", session)


@pytest.mark.case("vtoy.echo.same")
@pytest.mark.parametrize("n", range(2))
def test_echo(target, n):
    exchange(target, "vtoy.echo.same", f"ECHO {n}", f"ECHO {n}")


@pytest.mark.case("vtoy.ping.pong")
@pytest.mark.parametrize("n", range(3))
def test_ping_again(target, n):
    session = target.connect()
    reply = session.request(PING)
    if not reply.is_frame or reply.frame != PONG:
        raise Divergence(target.clause("vtoy.ping.pong"), "PONG", str(reply))
