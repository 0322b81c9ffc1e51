"""CLI: python -m tests.independent.fluvio [--host H] [--port N] [--topics a:1,b:3] [--defect NAME]..."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from .defects import DEFECTS, Defects, format_table
from .server import DEFAULT_MAX_FRAME, SpuServer
from .storage import MAX_PARTITIONS_PER_TOPIC, Storage


def parse_topics(spec: str) -> list[tuple[str, int]]:
    out = []
    for item in filter(None, (x.strip() for x in spec.split(","))):
        name, _, count = item.rpartition(":")
        if not name:
            name, count = item, "1"
        n = int(count)
        if not 1 <= n <= MAX_PARTITIONS_PER_TOPIC:
            raise argparse.ArgumentTypeError(f"partition count out of range in {item!r}")
        out.append((name, n))
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.independent.fluvio", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="bind address (loopback only; default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9005, help="SPU public port; 0 = ephemeral (default 9005)")
    p.add_argument("--topics", type=parse_topics, default=[], help="topics created at start: name:partitions,...")
    p.add_argument("--defect", action="append", default=[], choices=sorted(DEFECTS), metavar="NAME",
                   help="enable a deliberate defect (repeatable; see --list-defects)")
    p.add_argument("--list-defects", action="store_true", help="print the defect table and exit")
    p.add_argument("--ready-file", help='write {"spu": port} as JSON here once listening')
    p.add_argument("--no-auto-create", action="store_true",
                   help="do not create a topic on the first Produce to an unknown name")
    p.add_argument("--max-frame", type=int, default=DEFAULT_MAX_FRAME, help="largest accepted frame size")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


async def amain(args: argparse.Namespace) -> None:
    storage = Storage(auto_create=not args.no_auto_create)
    for name, n in args.topics:
        storage.create_topic(name, n)
    server = SpuServer(storage, Defects(args.defect), max_frame=args.max_frame)
    port = await server.start(args.host, args.port)
    logging.getLogger("indep-fluvio").info("SPU listening on %s:%d defects=%s", args.host, port, args.defect)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"spu": port}, f)
        os.replace(tmp, args.ready_file)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:
            pass
    serve = asyncio.create_task(server.serve_forever())
    await stop.wait()
    serve.cancel()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_defects:
        print(format_table())
        return 0
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("refusing to bind a non-loopback address", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    try:
        asyncio.run(amain(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
