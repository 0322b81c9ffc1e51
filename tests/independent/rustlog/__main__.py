"""python -m tests.independent.rustlog [--host H] [--port N] [--defect NAME]...
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
from .server import (
    DEFAULT_FRAME_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    Server,
)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.independent.rustlog", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="bind address (loopback only)")
    p.add_argument("--port", type=int, default=0, help="TCP port; 0 = ephemeral")
    p.add_argument("--defect", action="append", default=[], metavar="NAME",
                   help="switch on a deliberate defect (repeatable)")
    p.add_argument("--list-defects", action="store_true", help="list the defects and exit")
    p.add_argument("--ready-file", metavar="PATH",
                   help='write {"broker": port} here once listening')
    p.add_argument("--frame-timeout", type=float, default=DEFAULT_FRAME_TIMEOUT,
                   help="seconds for a started frame to complete")
    p.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT,
                   help="seconds an idle connection is kept (0 = forever)")
    p.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS)
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


def write_ready(path: str, port: int) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"broker": port}, f)
    os.replace(tmp, path)


async def run(args) -> None:
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("this test server binds to loopback only")
    server = Server(
        Defects(args.defect),
        frame_timeout=args.frame_timeout,
        idle_timeout=args.idle_timeout or None,
        max_connections=args.max_connections,
    )
    port = await server.start(args.host, args.port)
    print(f"rustlog-independent listening on {args.host}:{port}"
          f" defects={list(server.defects) or 'none'}", file=sys.stderr, flush=True)
    if args.ready_file:
        write_ready(args.ready_file, port)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await server.serve_forever()
    except asyncio.CancelledError:
        pass


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.list_defects:
        for name, (requirement, section) in DEFECTS.items():
            print(f"{name}\n    breaks: {requirement}\n    section: {section}")
        return 0
    try:
        Defects(args.defect)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
