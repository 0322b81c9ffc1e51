"""Upstream servers as targets: the real server a suite describes, installed from a registry at a pinned version and
started on loopback by the harness (``pytest --upstream kafka``) or by hand (``wirecheck upstream kafka``).

``SERVERS`` maps a protocol to the module that installs and starts its upstream server; each module has
``VERSIONS`` (the first is the default), ``install(version)``, ``install_line(version)`` and
``start(workdir, version)`` returning an :class:`~wirecheck.targets.upstream.process.UpstreamProcess`.
"""

from __future__ import annotations

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.upstream import kafka

SERVERS = {"kafka": kafka}


def parse(text: str) -> tuple[str, str]:
    """``PROTOCOL[@VERSION]`` -> (protocol, version); the version defaults to the module's first."""
    name, _, version = text.partition("@")
    module = SERVERS.get(name)
    if module is None:
        raise HarnessError(f"no upstream server for {name!r}; known: {', '.join(sorted(SERVERS))}")
    version = version or module.VERSIONS[0]
    if version not in module.VERSIONS:
        raise HarnessError(f"{name} {version}: known versions {', '.join(module.VERSIONS)}")
    return name, version
