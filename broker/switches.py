"""A personality's faults and variants as typed objects, each declared once with the clause it breaks.

A personality subclasses :class:`Switches` twice (its faults, its variants) and declares every switch as a class
attribute, the attribute name being the switch's name with dashes as underscores::

    class KafkaFaults(Switches):
        personality = "kafka"
        crc_ieee = Switch("A batch CRC is CRC-32C (KIP-98); this computes CRC-32 (IEEE)")

``--fault kafka.crc-ieee`` switches it on; a handler asks ``self.faults.crc_ieee`` at the named point where the
clause is kept or broken. A misspelt switch is an AttributeError (and a static type error), never a check that
silently stays off. A large catalogue is split by API family into mixins, each beside the handlers it breaks,
and combined by inheritance into the personality's one object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, overload


class Switch:
    """One fault or variant: what it breaks (or which other permitted reading it takes), in one line."""

    def __init__(self, says: str):
        self.says = says
        self.attribute = ""  # set by __set_name__
        self.name = ""  # the attribute name with underscores as dashes

    def __set_name__(self, owner: type, attribute: str) -> None:
        self.attribute = attribute
        self.name = attribute.replace("_", "-")

    @overload
    def __get__(self, switches: None, owner: type) -> Switch: ...

    @overload
    def __get__(self, switches: Switches, owner: type) -> bool: ...

    def __get__(self, switches, owner):
        if switches is None:
            return self
        return self.name in switches.on


class Switches:
    """The switches a broker was started with, out of those its class declares."""

    personality: ClassVar[str] = ""  # the namespace of the names on the command line: "<personality>.<name>"

    def __init__(self, on: Iterable[str] = ()):
        self.on = frozenset(on)
        unknown = self.on - set(self.declared())
        if unknown:
            raise ValueError(f"{type(self).__name__}: no such switch: {', '.join(sorted(unknown))}")
        # Handlers read switches on every request: each becomes a plain attribute of this object, which Python
        # finds before the (non-data) descriptor, so a read costs a dict lookup and no call.
        for switch in self._switches():
            vars(self)[switch.attribute] = switch.name in self.on

    @classmethod
    def _switches(cls) -> list[Switch]:
        return [value for klass in reversed(cls.__mro__) for value in vars(klass).values() if isinstance(value, Switch)]

    @classmethod
    def declared(cls) -> dict[str, str]:
        """Every declared switch, short name -> what it says, in declaration order (mixins first)."""
        return {switch.name: switch.says for switch in cls._switches()}

    @classmethod
    def catalogue(cls) -> dict[str, str]:
        """The namespaced catalogue a :class:`PersonalityInfo` lists: "<personality>.<name>" -> what it says."""
        if not cls.personality:
            raise TypeError(f"{cls.__name__} names no personality")
        return {f"{cls.personality}.{name}": says for name, says in cls.declared().items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self.on)!r})"
