"""Scapy layers for Pravega wire commands: for humans (transcripts, captures, the vector tests).

``PravegaFrame`` is the 8-byte header (``i32 type | i32 length``, the length computed when left None); every
command's payload is a layer generated from the codec table in ``commands`` and bound under the frame by its
type code, so ``PravegaFrame()/SetupAppend(...)`` builds a frame and ``PravegaFrame(bytes)`` dissects one.
Optional trailing fields dissect to their default when absent, as the Java readers do.
"""

from __future__ import annotations

from scapy.fields import SignedIntField
from scapy.packet import Packet, Raw, bind_layers

from wirecheck.protocols.fields import CodecField
from wirecheck.protocols.pravega import commands


class _Optional:
    """An optional trailing field: absent (too few bytes left) reads as the default and writes nothing when the
    value is ``commands.OMIT``."""

    def __init__(self, field: commands.Field):
        self.field = field
        self.min_size = commands._MIN_SIZE.get(id(field.codec), 1)

    def write(self, out, value):
        if value is not commands.OMIT:
            self.field.codec.write(out, value)

    def read(self, buf, pos):
        if len(buf) - pos < self.min_size:
            return self.field.default, pos
        return self.field.codec.read(buf, pos)


class PravegaFrame(Packet):
    name = "Pravega frame"
    fields_desc = [SignedIntField("type", 100), SignedIntField("length", None)]

    def post_build(self, pkt, pay):
        if self.length is None:
            pkt = pkt[:4] + len(pay).to_bytes(4, "big", signed=True)
        return pkt + pay

    def extract_padding(self, s):
        length = self.length if self.length is not None and self.length >= 0 else len(s)
        return s[:length], s[length:]


def _layer(command: commands.Command) -> type[Packet]:
    fields = []
    for f in command.fields:
        codec = _Optional(f) if f.optional else f.codec
        default = f.default if f.optional else _default_of(f.codec)
        fields.append(CodecField(f.name, default, codec))
    return type(command.name, (Packet,), {"name": f"Pravega {command.name} ({command.code})",
                                          "fields_desc": fields,
                                          "guess_payload_class": lambda self, payload: Raw})


def _default_of(codec):
    if codec in (commands.STR,):
        return ""
    if codec in (commands.BLOB, commands.LENIENT_BLOB, commands.REST, commands.EVENT):
        return b""
    if codec is commands.UUID:
        return commands.uuid_of(0, 0)
    if isinstance(codec, commands.ListOf):
        return []
    if codec is commands.ITERATOR_ARGS:
        return {}
    if codec is commands.BOOL:
        return False
    return 0


#: command name -> its payload layer
LAYERS: dict[str, type[Packet]] = {}
for _command in commands.COMMANDS.values():
    LAYERS[_command.name] = _cls = _layer(_command)
    bind_layers(PravegaFrame, _cls, type=_command.code)


def __getattr__(name: str) -> type[Packet]:
    """``from ...layers import Hello``: each command's layer by its name (the layers are built from the codec
    table above, so a module attribute lookup that finds nothing else comes here)."""
    try:
        return LAYERS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def message_layers() -> dict[str, type[Packet]]:
    """Every message layer by name (the contract tests round-trip each one)."""
    return dict(LAYERS)


def dissect(answer: bytes, request: bytes | None = None) -> Packet:
    """A whole frame as layers; the type code names the command (a Pravega reply says what it is)."""
    return PravegaFrame(answer)
