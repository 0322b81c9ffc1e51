"""One client role of a safety run in a process of its own, so that a client crash is a real one (the supervisor
kills it with -9) and a client library that aborts takes only itself down.

    python -m wirecheck.targets.safety.client kafka ROLE --bootstrap HOST:PORT --topic T --history FILE --started T --base N
                                                   [--slot S] [--seed X] [--owed FILE]

ROLE: one of the workload's ROLES (Kafka: send, txn, poll; until SIGTERM) or final (read until every value listed in --owed, one per line, is seen;
exit 0 if all were, 2 if not). A workload module's ``client_argv(role, slot, options)`` may name a command that
runs the role instead (Kafka's Java slots): this process execs it, so the supervisor's signals reach that client.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import sys
from pathlib import Path

from wirecheck.targets.safety.command import workload_of, workloads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wirecheck.targets.safety.client")
    parser.add_argument("protocol", choices=workloads())
    parser.add_argument("role", help="one of the workload's ROLES, or final")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--history", type=Path, required=True)
    parser.add_argument("--started", type=float, required=True)
    parser.add_argument("--base", type=int, required=True)
    parser.add_argument("--slot", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--owed", type=Path, default=None)
    options = parser.parse_args(argv)
    module = workload_of(options.protocol)
    elsewhere = getattr(module, "client_argv", lambda *_: None)(options.role, options.slot, vars(options))
    if elsewhere:  # a client that is not Python's (Kafka's Java slots): it takes this process's place, pid and all
        sys.stdout.flush()
        os.execvp(elsewhere[0], elsewhere)

    from wirecheck.targets.safety.run import Run

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")
    run = Run(options.history, options.started, options.base)
    signal.signal(signal.SIGTERM, lambda *_: run.stop.set())
    workload = module.Workload(options.bootstrap, options.topic, run,
                                                      random.Random(options.seed), logging.getLogger("client"),
                                                      options.slot)
    try:
        if options.role == "final":
            assert options.owed is not None
            owed = {int(line) for line in options.owed.read_text().split()}
            return 0 if workload.final_read(owed) else 2
        workload.role(options.role)
        return 0
    finally:
        run.close()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # the history is closed: end without finalizing, since a client binding's runtime threads (pravega's) still hold
    # Python thread states then and can abort the process, which would read as a failed client or final read
    os._exit(code)
