"""CLI: python -m tests.independent.kafka [--host H] [--port N] [--defect NAME]... [--ready-file PATH]"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from . import defects
from .server import Server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.independent.kafka", description=__doc__)
    ap.add_argument("--host", default="127.0.0.1", help="address to bind and advertise (loopback)")
    ap.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one")
    ap.add_argument("--node-id", type=int, default=0, help="broker id advertised in Metadata")
    ap.add_argument("--defect", action="append", default=[], metavar="NAME", help="turn on a deliberate defect")
    ap.add_argument("--list-defects", action="store_true", help="print the defect table and exit")
    ap.add_argument("--ready-file", help='write {"broker": port} here once listening')
    ap.add_argument("--no-auto-create", action="store_true", help="disable topic auto-creation via Metadata")
    ap.add_argument("--initial-rebalance-delay-ms", type=int, default=0)
    ap.add_argument("--log-level", default="WARNING")
    args = ap.parse_args(argv)

    if args.list_defects:
        for name, (req, src) in defects.DEFECTS.items():
            print(f"{name}\n    breaks: {req}\n    source: {src}")
        return 0
    defects.enable(args.defect)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return asyncio.run(_run(args))


async def _run(args) -> int:
    server = Server(args.host, args.port, args.node_id, not args.no_auto_create, args.initial_rebalance_delay_ms)
    port = await server.start()
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"broker": port}, fh)
        os.replace(tmp, args.ready_file)
    print(f"listening on {args.host}:{port} defects={defects.active()}", file=sys.stderr, flush=True)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    serving = asyncio.ensure_future(server.serve_forever())
    await stop
    serving.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
