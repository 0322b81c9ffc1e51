"""Upstream servers as targets: the real server a suite describes, installed from a registry at a pinned version and
started on loopback by the harness (``pytest --upstream kafka``) or by hand (``wirecheck upstream kafka``).

``SERVERS`` maps a protocol to the module that installs and starts its upstream server; each module has
``VERSIONS`` (the first is the default), ``install(version)``, ``install_line(version)`` and
``start(workdir, version)`` returning an :class:`~wirecheck.targets.upstream.process.UpstreamProcess`; and
``restart(server)`` (kill -9, started again on its data) where a restart keeps the data: Kafka's does, Pravega
standalone keeps everything in memory, so it has none (``wirecheck safety --upstream`` then only pauses it and
faults its connections).
"""

from __future__ import annotations

from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.reports.baseline import Baseline
from wirecheck.reports.clause_audit import KnownDivergence
from wirecheck.targets.upstream import kafka, pravega

SERVERS = {"kafka": kafka, "pravega": pravega}
#: per server and version, its expected divergences: a baseline whose entries name the clause and the source
EXPECTATIONS = Path(__file__).resolve().parent / "expectations"


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


def title(server: str | None) -> str | None:
    """``kafka@4.4.0`` -> ``Apache Kafka 4.4.0`` (None stays None)."""
    if server is None:
        return None
    name, _, version = server.partition("@")
    return f"{SERVERS[name].TITLE} {version}"


def expectations_path(server: str) -> Path:
    name, _, version = server.partition("@")
    return EXPECTATIONS / f"{name}-{version}.json"


def expectations(server: str) -> Baseline | None:
    """The expected divergences of ``kafka@4.4.0`` (None where it has none): every entry names its clause and
    source, so a failure under another clause of the same case stays a failure."""
    path = expectations_path(server)
    if not path.exists():
        return None
    baseline = Baseline.load(str(path))
    for entry in baseline.entries:
        if not entry.clause or not entry.source:
            raise HarnessError(f"{path}: the entry for {entry.case} needs its clause and its source")
    return baseline


def known_divergences() -> dict[str, list[KnownDivergence]]:
    """protocol -> every shipped expectation of its upstream servers (for docs/clauses)."""
    found: dict[str, list[KnownDivergence]] = {}
    for path in sorted(EXPECTATIONS.glob("*.json")):
        server = path.stem.replace("-", "@", 1)
        expected = expectations(server)
        assert expected is not None  # the file exists
        protocol = server.partition("@")[0]
        found.setdefault(protocol, []).extend(
            KnownDivergence(title(server) or server, entry.case, entry.clause or "", entry.reason, entry.source)
            for entry in expected.entries)
    return found
