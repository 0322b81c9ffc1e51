"""The toy protocol's conformance cases (run by tests/integration/test_new_protocol.py with the toy registered)."""

import pytest
from hypothesis import strategies as st

from wirecheck.protocols.verdicts import Divergence
from tests.toy.spec import PING, PONG, ToyFrame


def layer_examples() -> dict:
    """The toy's strategies live beside its cases: ASCII text of any length its u16 prefix can state."""
    return {"ToyFrame": st.binary(max_size=64).map(lambda text: ToyFrame(text=text))}


@pytest.mark.case("toy.ping.pong", hostile=True)
def test_ping_is_answered_with_pong(target):
    session = target.connect()
    reply = session.request(PING)
    if not reply.is_frame or reply.frame != PONG:
        raise Divergence(target.clause("toy.ping.pong"), "PONG", str(reply) if not reply.is_frame else
                         repr(reply.frame))
