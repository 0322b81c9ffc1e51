"""Run the reference broker: ``python -m targets.reference`` or ``wirecheck-broker``.

Binds 127.0.0.1 by default. ``--ready-file`` receives a JSON object naming each listener's port once all are
listening, which is how the suite learns the ephemeral ports it asked for with ``--<name>-port 0``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import signal
import sys
from pathlib import Path

from targets.reference.core import BrokerConfig, Listener

#: personality name -> module exposing ``DEFAULT_PORT``, ``FAULTS`` and ``create(config) -> Personality``.
#: Adding a protocol to the broker is one line here.
PERSONALITIES = {
    "rustlog": "targets.reference.rustlog",
    "kafka": "targets.reference.kafka",
    "fluvio": "targets.reference.fluvio",
}


def _load(name: str):
    return importlib.import_module(PERSONALITIES[name])


def available_personalities() -> list[str]:
    """Names whose module imports (a personality still being built is simply absent)."""
    names = []
    for name in PERSONALITIES:
        try:
            _load(name)
        except ImportError:
            continue
        names.append(name)
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wirecheck-broker", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--protocols", default="all", help="comma-separated personalities to run (default: all)")
    for name in PERSONALITIES:
        parser.add_argument(f"--{name}-port", type=int, default=None, help=f"{name} port (0: ephemeral)")
    parser.add_argument("--data-dir", type=Path, default=None, help="durable storage here (default: in memory)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME",
                        help="break one named clause (repeatable); see --list-faults")
    parser.add_argument("--list-faults", action="store_true", help="print the faults each personality knows")
    parser.add_argument("--max-connections", type=int, default=256, help="per listener (default 256)")
    parser.add_argument("--idle-timeout", type=float, default=30.0, help="seconds (default 30)")
    parser.add_argument("--max-frame", type=int, default=None, help="override each protocol's frame limit (bytes)")
    parser.add_argument("--segment-records", type=int, default=1000, help="records per log segment (default 1000)")
    parser.add_argument("--retention-records", type=int, default=None,
                        help="keep at least this many records per partition, dropping whole older segments")
    parser.add_argument("--fsync", choices=["batch", "none"], default="batch",
                        help="with --data-dir: fsync before acknowledging each produce (batch) or never (none)")
    parser.add_argument("--ready-file", type=Path, default=None, help="write {name: port} JSON here when listening")
    parser.add_argument("--log-level", default="WARNING")
    return parser


def _chosen(args) -> list[str]:
    available = available_personalities()
    if args.protocols == "all":
        return available
    names = [n.strip() for n in args.protocols.split(",") if n.strip()]
    unknown = [n for n in names if n not in PERSONALITIES]
    if unknown:
        raise SystemExit(f"unknown protocol(s) {unknown}; known: {sorted(PERSONALITIES)}")
    return names


async def run(args) -> None:
    names = _chosen(args)
    known_faults = {f: n for n in names for f in _load(n).FAULTS}
    unknown = [f for f in args.fault if f not in known_faults]
    if unknown:
        raise SystemExit(f"unknown fault(s) {unknown}; see --list-faults")
    config = BrokerConfig(
        host=args.host,
        data_dir=args.data_dir,
        faults=frozenset(args.fault),
        max_connections=args.max_connections,
        idle_timeout=args.idle_timeout,
        max_frame=args.max_frame,
        extra={"segment_records": args.segment_records, "retention_records": args.retention_records,
               "fsync": args.fsync},
    )
    listeners = []
    for name in names:
        module = _load(name)
        port = getattr(args, f"{name}_port")
        listeners.append(Listener(module.create(config), config, module.DEFAULT_PORT if port is None else port))
    ports = {}
    try:
        for listener in listeners:
            ports[listener.personality.name] = await listener.start()
    except OSError as exc:
        for listener in listeners:
            await listener.stop()
        raise SystemExit(f"cannot listen: {exc}") from None
    if args.ready_file:
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "host": args.host, "ports": ports}))
        tmp.replace(args.ready_file)  # atomic: a reader never sees half a file
    logging.getLogger("wirecheck.broker").info("listening on %s %s", args.host, ports)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for listener in listeners:
        await listener.stop()


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.list_faults:
        for name in PERSONALITIES:
            try:
                module = _load(name)
            except ImportError:
                continue
            for fault, clause in sorted(module.FAULTS.items()):
                print(f"{name:8} {fault:32} {clause}")
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
