"""Every option checked once, before anything runs: a bad one is a usage error in one line naming the option and
the form it accepts (the plugin turns it into pytest's exit code 4)."""

from __future__ import annotations

import math
import os
import socket
from pathlib import Path

from wirecheck.protocols.spec import ProtocolSpec
from wirecheck.protocols.verdicts import HarnessError

TARGET_FORM = "[PROTOCOL=]HOST:PORT"
ORACLE_FORM = "PROTOCOL=HOST:PORT"


class UsageProblem(HarnessError):
    """A bad option or target given by the user."""


def parse_target(text: str, specs: dict[str, ProtocolSpec], option: str = "--target",
                 form: str = TARGET_FORM) -> tuple[str, tuple[str, int]]:
    """``[PROTOCOL=]HOST:PORT`` -> (protocol or "", (host, port)); the host must resolve."""
    name, _, address = text.rpartition("=")
    if name and name not in specs:
        raise UsageProblem(f"{option} {text}: unknown protocol {name!r}; known: {', '.join(sorted(specs))}")
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit():
        raise UsageProblem(f"{option} {text}: expected {form}, e.g. rustlog=127.0.0.1:7070")
    if not 1 <= int(port) <= 65535:
        raise UsageProblem(f"{option} {text}: port {port} is out of range (1-65535)")
    try:
        socket.getaddrinfo(host, int(port))
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageProblem(f"{option} {text}: cannot resolve host {host!r} ({getattr(exc, 'strerror', exc)})") from None
    return name, (host, int(port))


def parse_topics(text: str) -> dict[str, int]:
    """``NAME[:PARTITIONS],...`` (``--target-option PROTOCOL.topics``: topics that exist on the target) -> {name:
    partitions}; a name without a count has one partition."""
    topics = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, count = item.rpartition(":")
        if not sep:
            name, count = item, "1"
        if not name or not count.isdigit() or int(count) < 1:
            raise UsageProblem(f"topics={text}: expected NAME[:PARTITIONS],..., e.g. orders:3,events")
        topics[name] = int(count)
    return topics


def validate(options, specs: dict[str, ProtocolSpec]) -> None:
    """Raise :class:`UsageProblem` for the first bad option (``options``: a RunOptions)."""
    known = ", ".join(sorted(specs))
    if options.protocol is not None and options.protocol not in specs:
        raise UsageProblem(f"--protocol {options.protocol}: unknown protocol; known: {known}")
    for text in options.targets:
        parse_target(text, specs)
    if not (isinstance(options.deadline, (int, float)) and math.isfinite(options.deadline) and options.deadline > 0):
        raise UsageProblem(f"--deadline {options.deadline:g}: expected a positive number of seconds, e.g. 2")
    for text in options.target_options:
        key, sep, _ = text.partition("=")
        name, dot, key = key.partition(".")
        if not sep or not dot or not key:
            raise UsageProblem(f"--target-option {text}: expected PROTOCOL.KEY=VALUE, e.g. fluvio.topics=orders:3")
        if name not in specs:
            raise UsageProblem(f"--target-option {text}: unknown protocol {name!r}; known: {known}")
        if key == "topics":
            try:
                parse_topics(text.partition("=")[2])
            except UsageProblem as problem:
                raise UsageProblem(f"--target-option {name}.{problem}") from None
    faults = {fault for spec in specs.values() for fault in spec.faults}
    for fault in options.reference_faults:
        if fault not in faults:
            raise UsageProblem(f"--reference-fault {fault}: no such fault; expected PROTOCOL.NAME "
                               f"(python -m wirecheck.broker --list-faults)")
    variants = {variant for spec in specs.values() for variant in spec.variants}
    for variant in options.reference_variants:
        if variant not in variants:
            raise UsageProblem(f"--reference-variant {variant}: no such variant; expected PROTOCOL.NAME "
                               f"(python -m wirecheck.broker --list-variants)")
    if options.confirm is not None and options.confirm < 0:
        raise UsageProblem(f"--confirm {options.confirm}: expected a count of re-runs >= 0")
    if options.target_restart is not None and not options.target_restart.strip():
        raise UsageProblem("--target-restart: expected a shell command that starts the target")
    oracles: set[str] = set()
    for text in options.oracles:
        name, address = parse_target(text, specs, option="--oracle", form=ORACLE_FORM)
        if not name or name in oracles:
            raise UsageProblem(f"--oracle {text}: expected {ORACLE_FORM}, one per protocol, e.g. "
                               f"kafka=127.0.0.1:9092" + (f" ({name} is given twice)" if name else ""))
        oracles.add(name)
        try:  # the oracle answers every case: one that is not there is a usage error now, not an ERROR per case
            socket.create_connection(address, timeout=options.deadline).close()
        except OSError as exc:
            raise UsageProblem(f"--oracle {text}: no server accepts a connection there ({exc})") from None
    writable_dir("--report-dir", options.report_dir)
    if options.baseline is not None and not Path(options.baseline).is_file():
        raise UsageProblem(f"--baseline {options.baseline}: no such file (a wirecheck.baseline/1 JSON file)")


def writable_dir(option: str, path: str) -> None:
    """The directory exists and is writable, or can be created (nothing is created here)."""
    here = Path(path).resolve()
    while not here.exists():
        here = here.parent
    if not here.is_dir():
        raise UsageProblem(f"{option} {path}: {here} is a file, not a directory; expected a writable directory")
    if not os.access(here, os.W_OK | os.X_OK):
        raise UsageProblem(f"{option} {path}: {here} is not writable; expected a writable directory")
