"""CLI: python -m tests.independent.pravega [--host H] [--port N] [--defect NAME]...
[--list-defects] [--ready-file PATH]"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from .defects import DEFECTS, Defects
from .server import Server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.independent.pravega",
                                 description="Independent in-memory Pravega segment store.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = ephemeral")
    ap.add_argument("--defect", action="append", default=[], metavar="NAME",
                    help="turn a deliberate defect on (repeatable)")
    ap.add_argument("--list-defects", action="store_true")
    ap.add_argument("--ready-file", metavar="PATH",
                    help='write {"segmentstore": port} here once listening')
    ap.add_argument("--max-store-bytes", type=int, default=1 << 30)
    ap.add_argument("--log-level", default="WARNING")
    args = ap.parse_args(argv)

    if args.list_defects:
        for name, (req, sec) in DEFECTS.items():
            print("%-36s %s  [notes %s]" % (name, req, sec))
        return 0
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        ap.error("this test server binds loopback only")
    try:
        defects = Defects(args.defect)
    except ValueError as e:
        ap.error(str(e))
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(_serve(args, defects))


async def _serve(args: argparse.Namespace, defects: Defects) -> int:
    server = Server(defects, args.max_store_bytes)
    port = await server.start(args.host, args.port)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"segmentstore": port}, f)
        os.replace(tmp, args.ready_file)
    print("pravega segment store listening on %s:%d%s" % (
        args.host, port, (" defects=" + ",".join(sorted(defects.active))) if defects.active else ""),
        file=sys.stderr, flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    task = asyncio.create_task(server.serve_forever())
    await stop.wait()
    task.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
