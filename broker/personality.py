"""What a personality declares to the broker, and how the broker finds every personality.

Each package ``broker/<name>/`` exposes ``PERSONALITY``, a :class:`PersonalityInfo`: its name, its
default port, the extra endpoints it listens on besides the primary one (name -> default port; flags
``--<name>-<endpoint>-port``; the running personality serves them with ``serve_endpoint(endpoint, conn)``), its
fault catalogue (namespaced names ``<name>.<fault>``), its options dataclass and a factory.
The CLI, the launcher and the tests discover personalities with :func:`discover`; none of them names a protocol.

Options: every field of the options dataclass becomes a flag ``--<name>-<field>`` (underscores as dashes), typed
from the field's default; ``metadata={"help": ..., "parse": fn}`` gives the help text and, for a type argparse
cannot read (e.g. a dict), the function that parses the flag's text.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wirecheck.broker.core import BrokerConfig, Personality

log = logging.getLogger("wirecheck.broker")


@dataclass(frozen=True)
class PersonalityInfo:
    name: str
    default_port: int
    faults: dict[str, str]  # "<name>.<fault>" -> the clause it breaks, in one line
    options: type  # a dataclass whose defaults are the personality's defaults
    create: Callable[[BrokerConfig, Any], Personality]  # (config, options) -> the running personality
    endpoints: dict[str, int] = dataclasses.field(default_factory=dict)  # extra endpoint -> its default port
    #: "<name>.<variant>" -> the other permitted reading it takes, in one line (``--variant``)
    variants: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the storage options of BrokerConfig this personality honours (``data_dir``, ``fsync``, ``segment_records``,
    #: ``retention_records``, ``cache_bytes``); the CLI refuses a persistence option it cannot honour and names a
    #: limit it ignores
    storage: frozenset[str] = frozenset()

    def __post_init__(self):
        foreign = [f for f in [*self.faults, *self.variants] if not f.startswith(self.name + ".")]
        if foreign:
            raise ValueError(f"{self.name}: fault and variant names must start with '{self.name}.': {foreign}")

    def flag(self, field_name: str) -> str:
        return f"--{self.name}-{field_name.replace('_', '-')}"

    def port_flag(self, endpoint: str | None = None) -> str:
        """The option that sets a listener's port: ``--kafka-port``, ``--barco-producer-http-port``."""
        return f"--{self.name}-port" if endpoint is None else f"--{self.name}-{endpoint}-port"

    def port_dest(self, endpoint: str) -> str:
        return f"{self.name}_{endpoint.replace('-', '_')}_endpoint_port"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group(f"{self.name} options")
        group.add_argument(self.port_flag(), type=int, default=None,
                           help=f"{self.name} port (default {self.default_port}; 0: ephemeral)")
        for endpoint, port in self.endpoints.items():
            group.add_argument(self.port_flag(endpoint), dest=self.port_dest(endpoint), type=int, default=None,
                               help=f"{self.name} {endpoint} port (default {port}; 0: ephemeral)")
        for option in dataclasses.fields(self.options):
            default = option.default if option.default is not dataclasses.MISSING else option.default_factory()
            help_text = option.metadata.get("help", "")
            dest = f"{self.name}_{option.name}"
            if isinstance(default, bool):
                group.add_argument(self.flag(option.name), dest=dest, action=argparse.BooleanOptionalAction,
                                   default=None, help=f"{help_text} (default {default})")
                continue
            parse = option.metadata.get("parse") or type(default)
            group.add_argument(self.flag(option.name), dest=dest, type=parse, default=None,
                               help=f"{help_text} (default {default!r})")

    def options_from(self, args: argparse.Namespace) -> Any:
        """The options dataclass from parsed flags; a flag not given keeps the dataclass default."""
        given = {option.name: getattr(args, f"{self.name}_{option.name}", None)
                 for option in dataclasses.fields(self.options)}
        return self.options(**{name: value for name, value in given.items() if value is not None})


def discover() -> dict[str, PersonalityInfo]:
    """Every package under broker/ that exposes PERSONALITY, by name (sorted).

    A package that does not import is left out with a warning: a personality being built must not take the
    others down.
    """
    import wirecheck.broker as package

    found = {}
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        try:
            imported = importlib.import_module(f"{package.__name__}.{module.name}")
        except ImportError as exc:
            log.warning("personality %s does not import: %s", module.name, exc)
            continue
        info = getattr(imported, "PERSONALITY", None)
        if isinstance(info, PersonalityInfo):
            found[info.name] = info
    return dict(sorted(found.items()))


def parse_mapping(text: str) -> dict[str, int]:
    """``name:count,name:count`` -> {name: count}, for options such as topics created at start."""
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, count = item.rpartition(":")
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"{item!r}: expected NAME:COUNT")
        out[name] = int(count)
    return out
