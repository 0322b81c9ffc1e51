"""Run the reference broker: ``python -m wirecheck.broker`` or ``wirecheck-broker``.

Binds 127.0.0.1 by default. ``--ready-file`` receives a JSON object naming each listener's port once all are
listening, which is how the suite learns the ephemeral ports it asked for with ``--<name>-port 0``. The
personalities, their ports, options and faults are discovered (broker/personality.py), never listed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import ssl
import sys
from pathlib import Path

from wirecheck.broker.core import BrokerConfig, Listener
from wirecheck.broker.personality import PersonalityInfo, discover



def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a limit of 0 would refuse every client)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value

def build_parser(personalities: dict[str, PersonalityInfo]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wirecheck-broker", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--protocols", default="all",
                        help=f"comma-separated personalities to run: {', '.join(personalities)} (default: all)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="durable storage here (default: in memory); " + honoured_by(personalities, "data_dir"))
    parser.add_argument("--fault", action="append", default=[], metavar="PERSONALITY.NAME",
                        help="break one named clause (repeatable); see --list-faults")
    parser.add_argument("--list-faults", action="store_true", help="print the faults of each personality")
    parser.add_argument("--variant", action="append", default=[], metavar="PERSONALITY.NAME",
                        help="take another reading the spec permits (repeatable); see --list-variants")
    parser.add_argument("--list-variants", action="store_true", help="print the variants of each personality")
    parser.add_argument("--max-connections", type=positive, default=256, help="per listener (default 256)")
    parser.add_argument("--max-pending-connections", type=positive, default=128, dest="max_pending",
                        help="per listener: connections that have not completed a frame yet; past it, or when the "
                             "listener is full, the oldest of them is closed to admit a new one (default 128)")
    parser.add_argument("--idle-timeout", type=float, default=30.0,
                        help="seconds a connection may sit between frames (default 30)")
    parser.add_argument("--frame-timeout", type=float, default=10.0,
                        help="seconds a started frame may take to arrive whole (default 10)")
    parser.add_argument("--max-frame", type=int, default=None, help="override each protocol's frame limit (bytes)")
    parser.add_argument("--segment-records", type=positive, default=None,
                        help="records per log segment, the unit retention drops; a range of offsets, not a file "
                             "(default 1000); " + honoured_by(personalities, "segment_records"))
    parser.add_argument("--retention-records", type=positive, default=None,
                        help="keep at least this many records per partition, dropping whole older segments; "
                             + honoured_by(personalities, "retention_records"))
    parser.add_argument("--fsync", choices=["batch", "none"], default=None,
                        help="with --data-dir: fsync before acknowledging each produce (batch, the default) or never "
                             "(none); " + honoured_by(personalities, "fsync"))
    parser.add_argument("--cache-bytes", type=positive, default=BrokerConfig.cache_bytes,
                        help="with --data-dir: bytes of stored batches each personality keeps cached in memory, "
                             f"shared by its partitions (default {BrokerConfig.cache_bytes}, "
                             f"{BrokerConfig.cache_bytes >> 20} MiB); "
                             + honoured_by(personalities, "cache_bytes"))
    parser.add_argument("--tls-cert", type=Path, default=None, help="PEM certificate: every listener speaks TLS")
    parser.add_argument("--tls-key", type=Path, default=None, help="PEM private key of --tls-cert")
    parser.add_argument("--ready-file", type=Path, default=None, help="write {name: port} JSON here when listening")
    parser.add_argument("--log-level", default="WARNING")
    for info in personalities.values():
        info.add_arguments(parser)
    return parser


def chosen(args, personalities: dict[str, PersonalityInfo]) -> list[str]:
    if args.protocols == "all":
        return list(personalities)
    names = [n.strip() for n in args.protocols.split(",") if n.strip()]
    unknown = [n for n in names if n not in personalities]
    if unknown:
        raise SystemExit(f"unknown protocol(s) {unknown}; known: {sorted(personalities)}")
    return names


def check_faults(faults: list[str], names: list[str], personalities: dict[str, PersonalityInfo],
                 kind: str = "fault") -> None:
    """Every fault (or variant) must name one of a running personality; the error lists the valid names."""
    valid = {fault for name in names for fault in getattr(personalities[name], kind + "s")}
    unknown = [f for f in faults if f not in valid]
    if unknown:
        listing = "\n".join(f"  {fault}" for fault in sorted(valid))
        raise SystemExit(f"unknown {kind}(s) {unknown} for the personalities running ({', '.join(names)}); "
                         f"valid names:\n{listing}")


#: BrokerConfig storage field -> its option. A persistence option a running personality cannot honour is refused
#: (a user who asked for durable storage must not believe they have it); a limit one ignores is named at start.
PERSISTENCE = {"data_dir": "--data-dir", "fsync": "--fsync"}
LIMITS = {"segment_records": "--segment-records", "retention_records": "--retention-records"}


def honoured_by(personalities: dict[str, PersonalityInfo], option: str) -> str:
    able = sorted(name for name, info in personalities.items() if option in info.storage)
    return f"honoured by: {', '.join(able) or 'none'}"


def check_storage(args, names: list[str], personalities: dict[str, PersonalityInfo]) -> None:
    for option, flag in {**PERSISTENCE, **LIMITS}.items():
        if getattr(args, option) is None:
            continue
        unable = [name for name in names if option not in personalities[name].storage]
        if not unable:
            continue
        able = [name for name in names if name not in unable]
        if option in PERSISTENCE:
            instead = f"run the others alone: --protocols {','.join(able)}" if able else "no running one can"
            raise SystemExit(f"{flag}: the {', '.join(unable)} personalit{'y' if len(unable) == 1 else 'ies'} "
                             f"cannot honour it (storage in memory only); {instead}")
        print(f"note: {flag} is not applied by {', '.join(unable)} (no record log of that shape); "
              f"applied by: {', '.join(able) or 'none'}", file=sys.stderr, flush=True)


def tls_context(args) -> ssl.SSLContext | None:
    if args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise SystemExit("--tls-cert and --tls-key go together")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
    except (OSError, ssl.SSLError) as exc:
        raise SystemExit(f"cannot load the TLS certificate or key: {exc}") from None
    return context


def list_faults(personalities: dict[str, PersonalityInfo], kind: str = "fault") -> None:
    for info in personalities.values():
        print(f"{info.name}:")
        for fault, clause in sorted(getattr(info, kind + "s").items()):
            print(f"  {fault:40} {clause}")


async def run(args, personalities: dict[str, PersonalityInfo]) -> None:
    names = chosen(args, personalities)
    check_faults(args.fault, names, personalities)
    check_faults(args.variant, names, personalities, "variant")
    check_storage(args, names, personalities)
    config = BrokerConfig(
        host=args.host,
        data_dir=args.data_dir,
        faults=frozenset(args.fault),
        variants=frozenset(args.variant),
        max_connections=args.max_connections,
        max_pending=args.max_pending,
        idle_timeout=args.idle_timeout,
        frame_timeout=args.frame_timeout,
        max_frame=args.max_frame,
        segment_records=args.segment_records or 1000,
        retention_records=args.retention_records,
        fsync=args.fsync or "batch",
        cache_bytes=args.cache_bytes,
        tls=tls_context(args),
    )
    listeners = []
    for name in names:
        info = personalities[name]
        port = getattr(args, f"{name}_port")
        personality = info.create(config, info.options_from(args))
        extra = []
        for endpoint, default in info.endpoints.items():
            given = getattr(args, info.port_dest(endpoint))
            extra.append(Listener(personality, config, default if given is None else given, endpoint))
        # extra endpoints stop first: the primary listener closes the personality's storage
        listeners[:0] = extra
        listeners.append(Listener(personality, config, info.default_port if port is None else port))
    ports, endpoints, started = {}, {}, []
    listener = None
    try:
        for listener in listeners:
            ephemeral = listener.port == 0
            bound = await listener.start()
            name = listener.personality.name
            started.append(f"{name} {listener.endpoint or 'main'} {args.host}:{bound}")
            if listener.endpoint is not None:
                endpoints.setdefault(name, {})[listener.endpoint] = bound
                continue
            ports[name] = bound
            # A personality may serve more than its listeners (e.g. a gRPC control plane that owns its socket);
            # those follow the main listener (ephemeral when it is) and are named in the ready file.
            start_side = getattr(listener.personality, "start_side_listeners", None)
            if start_side is not None:
                side = await start_side(listener.port, ephemeral)
                ports.update(side)
                started += [f"{name} {key} {args.host}:{port}" for key, port in side.items()]
    except OSError as exc:
        for each in listeners:
            await each.stop()
        flag = personalities[listener.personality.name].port_flag(listener.endpoint) if listener else "a port option"
        raise SystemExit(f"cannot listen: {exc} (the port is set by {flag})") from None
    for line in started:  # one line per listener, before anything is served: protocol, endpoint, address
        print(f"listening: {line}", flush=True)
    if args.ready_file:
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "host": args.host, "ports": ports, "endpoints": endpoints,
                                   "tls": config.tls is not None}))
        tmp.replace(args.ready_file)  # atomic: a reader never sees half a file
    logging.getLogger("wirecheck.broker").info("listening on %s %s %s%s", args.host, ports, endpoints,
                                               " (TLS)" if config.tls else "")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for listener in listeners:
        await listener.stop()


def main(argv: list[str] | None = None) -> None:
    personalities = discover()
    args = build_parser(personalities).parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.list_faults or args.list_variants:
        list_faults(personalities, "fault" if args.list_faults else "variant")
        return
    asyncio.run(run(args, personalities))


if __name__ == "__main__":
    main()
