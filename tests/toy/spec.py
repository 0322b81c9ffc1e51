"""A throwaway fourth protocol, "toy": u16-length-prefixed ASCII frames; PING is answered with PONG.

It exists to prove that a protocol which registers (here through WIRECHECK_PROTOCOLS) is picked up by the
plugin, the prober, the reports and the contract tests without any change to shared code.
"""

from __future__ import annotations

from scapy.fields import FieldLenField, StrLenField
from scapy.packet import Packet

from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.framing import Framing
from wirecheck.protocols.spec import Endpoint, ProtocolSpec

U16_PREFIX = Framing(header_size=2, length_offset=0, length_format=">H")


def frame(text: str) -> bytes:
    """One toy frame: u16 length, then the ASCII text."""
    body = text.encode("ascii")
    return len(body).to_bytes(2, "big") + body


PING, PONG = frame("PING"), frame("PONG")



class ToyFrame(Packet):
    """The one message layer: u16 length, then ASCII text."""

    name = "Toy frame"
    fields_desc = [FieldLenField("length", None, length_of="text", fmt="!H"),
                   StrLenField("text", b"PING", length_from=lambda pkt: pkt.length)]


def message_layers() -> dict:
    return {"ToyFrame": ToyFrame}


CATALOGUE = Catalogue("toy", [
    Clause("toy.ping.pong", "A PING frame is answered with a PONG frame.", "tests/toy/spec.py", Level.MUST),
    Clause("toy.robustness.survives", "The server still answers PING after any case.", "tests/toy/spec.py",
           Level.MUST),
])

SPEC = ProtocolSpec(
    name="toy",
    catalogue=CATALOGUE,
    endpoints=(Endpoint("server", default_port=7999, framing=U16_PREFIX, max_body=1024, hello=lambda: PING,
                        hello_clause="toy.ping.pong",
                        is_hello_answer=lambda frame: frame == PONG,
                        describe=lambda frame: frame[2:].decode("ascii", "replace")),),
    suite="tests.toy.cases",
    strategies="tests.toy.cases",
    layers="tests.toy.spec",
)
