"""``wirecheck safety PROTOCOL``: drive real clients against a target under faults, record the history, check it.

    wirecheck safety kafka [--target kafka=HOST:PORT | --upstream [VERSION]] [--target-restart CMD]
                           [--target-pid PID] [--time S] [--restart-every S] [--reference-fault F]
                           [--report-dir DIR] [--seed N]

Without --target the reference broker is started with durable storage and restarted (kill -9) every
--restart-every seconds, and paused now and then; --upstream does the same with the upstream server (Apache
Kafka; Pravega standalone, whose data is in memory, is paused but never restarted). The clients always reach the
target through the fault proxy.
Exit status: 0 no anomaly, 1 an anomaly, 3 the run itself failed (a target that would not start, a client thread
that died), 4 misuse.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError

EXIT_CLEAN, EXIT_ANOMALY, EXIT_HARNESS, EXIT_USAGE = 0, 1, 3, 4


class Usage(Exception):
    """Misuse: one line, exit 4."""


def workloads() -> list[str]:
    """The protocols with a safety workload (ProtocolSpec.safety)."""
    from wirecheck.protocols.registry import all_specs

    return sorted(name for name, spec in all_specs().items() if spec.safety)


def workload_of(protocol: str):
    """The protocol's safety workload module (ProtocolSpec.safety)."""
    import importlib

    from wirecheck.protocols.registry import spec_for

    return importlib.import_module(spec_for(protocol).safety)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wirecheck safety", description=__doc__.split("\n\n")[0])
    p.add_argument("protocol", help=f"the protocol's workload: {', '.join(workloads())}")
    p.add_argument("--target", help="PROTOCOL=HOST:PORT of the server to test (default: the reference broker)")
    p.add_argument("--upstream", nargs="?", const="", default=None, metavar="VERSION",
                   help="start the upstream server (wirecheck upstream) and restart it itself; VERSION: one it pins")
    p.add_argument("--target-restart", metavar="CMD", help="a shell command that restarts the target (kill and start)")
    p.add_argument("--target-pid", type=int, metavar="PID", help="the target's process: paused (SIGSTOP/SIGCONT)")
    p.add_argument("--time", type=float, default=60.0, help="seconds of the clients' phase (default 60)")
    p.add_argument("--restart-every", type=float, default=None,
                   help="seconds between restarts (default 20 for the reference broker and with --target-restart)")
    p.add_argument("--reference-fault", action="append", default=[], metavar="F",
                   help="start the reference broker with this fault (repeatable; see --list-faults)")
    p.add_argument("--list-faults", action="store_true", help="print the reference broker's safety faults and exit")
    p.add_argument("--no-proxy-faults", action="store_true", help="the proxy only forwards (restarts, pauses stay)")
    p.add_argument("--report-dir", type=Path, default=None, help="history, result and logs (default: a new temp dir)")
    p.add_argument("--seed", type=int, default=None, help="the schedule's and workload's random seed")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    try:
        options = parser().parse_args(argv)
    except SystemExit as exc:  # argparse printed its own line (or the help, status 0)
        raise Usage("" if exc.code else "help") from None
    if options.list_faults:
        return options
    if options.protocol not in workloads():
        raise Usage(f"no safety workload for {options.protocol!r} yet; known: {', '.join(workloads())}")
    if options.time <= 0 or (options.restart_every is not None and options.restart_every <= 0):
        raise Usage("--time and --restart-every must be positive")
    if options.upstream is not None:
        if options.target or options.reference_fault or options.target_restart or options.target_pid:
            raise Usage("--upstream starts, restarts and pauses the server itself: not with --target, "
                        "--reference-fault, --target-restart or --target-pid")
        from wirecheck.targets.upstream import SERVERS, parse as upstream_server

        try:  # PROTOCOL@VERSION, the version one the server's module pins
            name, version = upstream_server(options.protocol + (f"@{options.upstream}" if options.upstream else ""))
        except HarnessError as exc:
            raise Usage(f"--upstream: {exc}") from None
        options.upstream, options.address = f"{name}@{version}", None
        if options.restart_every is None and hasattr(SERVERS[name], "restart"):
            options.restart_every = 20.0
        return options
    if options.target:
        name, _, address = options.target.partition("=")
        host, _, port = address.rpartition(":")
        if name != options.protocol or not host or not port.isdigit():
            raise Usage(f"--target {options.target!r}: expected {options.protocol}=HOST:PORT")
        options.address = (host, int(port))
        if options.reference_fault:
            raise Usage("--reference-fault applies to the reference broker only, not with --target")
    else:
        options.address = None
        if options.target_restart or options.target_pid:
            raise Usage("--target-restart and --target-pid need --target (the reference broker restarts itself)")
        known = set(safety_faults(options.protocol)) | broker_faults(options.protocol)
        unknown = [f for f in options.reference_fault if f not in known]
        if unknown:
            raise Usage(f"--reference-fault {unknown[0]}: no such fault of the {options.protocol} reference broker")
    if options.restart_every is None and (options.target_restart or not options.target):
        options.restart_every = 20.0
    return options


def safety_faults(protocol: str) -> dict[str, tuple[str, ...]]:
    """The reference broker's safety faults (ProtocolSpec.safety_faults) -> the anomalies that catch each."""
    from wirecheck.protocols.registry import all_specs

    spec = all_specs().get(protocol)
    return dict(spec.safety_faults) if spec is not None else {}


def broker_faults(protocol: str) -> set[str]:
    from wirecheck.broker.personality import discover

    info = discover().get(protocol)
    return set(info.faults) if info else set()


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except Usage as exc:
        if str(exc) == "help":
            return EXIT_CLEAN
        if str(exc):
            print(f"wirecheck safety: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if options.list_faults:
        for name, anomalies in sorted(safety_faults(options.protocol).items()):
            print(f"{name}  (caught as {' or '.join(anomalies)})")
        return EXIT_CLEAN
    report_dir = options.report_dir or Path(tempfile.mkdtemp(prefix="wirecheck-safety-"))
    report_dir.mkdir(parents=True, exist_ok=True)
    try:
        return execute(options, report_dir)
    except HarnessError as exc:
        print(f"wirecheck safety: {exc}", file=sys.stderr)
        return EXIT_HARNESS


def execute(options: argparse.Namespace, report_dir: Path) -> int:
    from wirecheck.reports.safety import checker, report
    from wirecheck.targets.safety import supervisor
    from wirecheck.targets.safety.faults import Nemesis
    from wirecheck.targets.safety.proxy import FaultProxy
    from wirecheck.targets.safety.run import Run
    from wirecheck.targets.safety.target import ExternalTarget, ReferenceTarget, UpstreamTarget

    workload = workload_of(options.protocol)
    seed = options.seed if options.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    log = logging.getLogger("wirecheck.safety")
    handler = logging.FileHandler(report_dir / "setup.log")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    check_clients = getattr(workload, "check_clients", None)
    if check_clients is not None:  # a client the workload needs but the machine lacks: before anything starts
        check_clients()
    if options.upstream is not None:
        target = UpstreamTarget(options.upstream, report_dir / "upstream", getattr(workload, "UPSTREAM_BOOTSTRAP", None))
        described = target.described
    elif options.address:
        target = ExternalTarget(options.address, options.target_restart, options.target_pid)
        described = f"{options.address[0]}:{options.address[1]}"
    else:
        target = ReferenceTarget(options.protocol, report_dir, options.reference_fault,
                                 getattr(workload, "BOOTSTRAP", None))
        described = "the reference broker" + (f" with {', '.join(options.reference_fault)}"
                                              if options.reference_fault else "")
    proxy = FaultProxy(target.address)
    proxy.rewriter = lambda: workload.address_rewriter(target.address, proxy.address())
    started = time.monotonic()
    run = Run(report_dir / "nemesis.jsonl", started)
    notes: list[str] = []
    nemesis = clients = None
    try:
        proxy.start()
        bootstrap = f"127.0.0.1:{proxy.port}"
        topic = workload.TOPIC_PREFIX + uuid.uuid4().hex[:12]  # never the seed's: the same seed twice on one target
        workload.Workload(bootstrap, topic, run, rng, log).create_topic()
        clients = supervisor.Clients(options.protocol, bootstrap, topic, report_dir / "clients", started,
                                     random.Random(rng.random()), run.clock, roles=getattr(workload, "ROLES", None))
        nemesis = Nemesis(run, target, None if options.no_proxy_faults else proxy, random.Random(rng.random()),
                          options.restart_every, pause=True)
        clients.start()
        nemesis.start()
        time.sleep(options.time)
        clients.stop()
        nemesis.heal()
        died = target.alive()
        if died:
            notes.append(f"the target ended by itself: {died}")
        owed = supervisor.acknowledged(supervisor.merge(clients.files(), report_dir / "history.jsonl"))
        if not clients.final_read(owed):
            notes.append("the final read did not see every acknowledged value within its bound")
    finally:
        if clients is not None:
            clients.stop()
        run.close()
        proxy.stop()
        target.stop()
    ops = supervisor.merge([(report_dir / "nemesis.jsonl", None), *clients.files()], report_dir / "history.jsonl")
    unjudged = dict(getattr(workload, "UNJUDGED", {}))  # kind -> why this workload's clients cannot show it
    result = checker.check(ops, unjudged)
    problems = clients.exits + ([f"the fault schedule stopped: {nemesis.error}"] if nemesis.error else [])
    facts = {"protocol": options.protocol, "target": described, "seed": seed, "time": options.time,
             "restart_every": options.restart_every, "reference_faults": options.reference_fault,
             "restarts": nemesis.restarts, "client_crashes": clients.killed,
             "seconds": round(time.monotonic() - started, 1), "notes": notes + problems, "unjudged": unjudged}
    print(report.write(report.build(result, ops, facts), report_dir, ops), end="")
    print(f"report: {report_dir}")
    if not result.valid:
        return EXIT_ANOMALY
    return EXIT_HARNESS if problems else EXIT_CLEAN
