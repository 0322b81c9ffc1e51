"""``wirecheck upstream PROTOCOL``: install or start the real server a suite describes, by hand.

Started, it prints ``PROTOCOL=HOST:PORT`` (what ``--target`` takes), then any ``PROTOCOL.KEY=VALUE`` the suite needs
as ``--target-option`` (Pravega's controller), and runs until interrupted; its log and data
stay in ``--workdir`` (a new temporary directory unless given).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.upstream import SERVERS, parse


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wirecheck upstream", description=__doc__)
    parser.add_argument("protocol", choices=sorted(SERVERS))
    parser.add_argument("--version", default=None, help="the server's version (default: the newest pinned)")
    parser.add_argument("--install", action="store_true", help="resolve the server into the cache and exit")
    parser.add_argument("--workdir", type=Path, default=None, help="its configuration, data and log")
    options = parser.parse_args(argv)

    def interrupted(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)  # while it starts: an interrupt stops the server it began
    try:
        name, version = parse(options.protocol + (f"@{options.version}" if options.version else ""))
        module = SERVERS[name]
        if options.install:
            print(module.install(version))
            return 0
        workdir = options.workdir or Path(tempfile.mkdtemp(prefix=f"wirecheck-{name}-"))
        server = module.start(workdir, version)
    except HarnessError as exc:
        print(f"wirecheck upstream: {exc}", file=sys.stderr)
        return 4
    except KeyboardInterrupt:
        return 1
    host, port = server.address
    print(f"{name}={host}:{port}", flush=True)
    for key, value in server.options.items():  # what --target-option needs besides the address
        print(f"{name}.{key}={value}", flush=True)
    print(f"{server.name} running; log {server.log_path}; Ctrl-C stops it", file=sys.stderr, flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        while not stopped.wait(0.5) and server.alive:
            pass
    except KeyboardInterrupt:
        stopped.set()
    died = not stopped.is_set()
    if died:
        print(f"wirecheck upstream: {server.name} exited with status {server.process.returncode}; its log ends:\n"
              f"{server.log_tail()}", file=sys.stderr)
    server.stop()
    return 1 if died else 0
