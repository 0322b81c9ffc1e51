"""Wiring and command line of the independent dev-mode Barco broker."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from . import defects
from .apps import DiscoveryApp, Ports, ProducerHttpApp
from .binary import BinaryProducerServer
from .consumer import ConsumerApp
from .http_transport import HttpServer
from .storage import Store

LIMIT = 64 * 1024  # StreamReader buffer limit


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.independent.barco", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (loopback only)")
    p.add_argument("--discovery-port", type=int, default=9250)
    p.add_argument("--producer-http-port", type=int, default=9251)
    p.add_argument("--consumer-port", type=int, default=9252)
    p.add_argument("--producer-binary-port", type=int, default=9254)
    p.add_argument("--defect", action="append", default=[], metavar="NAME", help="switch on a deliberate defect")
    p.add_argument("--list-defects", action="store_true", help="print the defects and exit")
    p.add_argument("--ready-file", help="write the bound ports as JSON here once listening")
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("this test server binds loopback only")
    store = Store()
    ports = Ports(args.host)
    servers = []

    async def listen(handler, port: int) -> int:
        server = await asyncio.start_server(handler, args.host, port, limit=LIMIT)
        servers.append(server)
        return server.sockets[0].getsockname()[1]

    ports.discovery = await listen(HttpServer(DiscoveryApp(ports), "discovery").handle, args.discovery_port)
    ports.producer_http = await listen(HttpServer(ProducerHttpApp(store, ports), "producer-http").handle, args.producer_http_port)
    ports.consumer = await listen(HttpServer(ConsumerApp(store, ports), "consumer").handle, args.consumer_port)
    ports.producer_binary = await listen(BinaryProducerServer(store).handle, args.producer_binary_port)

    ready = {
        "discovery": ports.discovery,
        "producer-http": ports.producer_http,
        "consumer": ports.consumer,
        "producer": ports.producer_binary,
    }
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(ready, fh)
        os.replace(tmp, args.ready_file)
    print(json.dumps(ready), flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:
            pass
    await stop.wait()
    for server in servers:
        server.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_defects:
        for name, (requirement, section) in defects.DEFECTS.items():
            print(f"{name:36} §{section:12} {requirement}")
        return 0
    defects.enable(args.defect)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    asyncio.run(serve(args))
    return 0
