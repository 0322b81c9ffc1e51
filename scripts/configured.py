"""Run conformance suites against the reference broker configured the way users' servers are: resources created
beforehand and named on the command line (--target-option), one broker shared by every case, the suite launching
nothing itself.

    python scripts/configured.py PROTOCOL [PROTOCOL ...] [--repeat N] [-- PYTEST ARGS ...]

Each protocol's suites/<name>/configured.py says how its operator provisioned the broker (BROKER_ARGS) and how the
user names those resources to the suite (TARGET_OPTIONS). ``--repeat N`` runs the suites N times against the same
broker, so later runs meet resources that earlier ones filled. Exits with the first failing pytest exit code.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def configuration(protocol: str):
    try:
        return importlib.import_module(f"wirecheck.suites.{protocol}.configured")
    except ModuleNotFoundError:
        raise SystemExit(f"suites/{protocol}/configured.py: no configured mode for {protocol!r}") from None


def pytest_argv(protocols: list[str], ports: dict[str, int], host: str) -> list[str]:
    argv = [sys.executable, "-m", "pytest", *(f"suites/{p}" for p in protocols)]
    for protocol in protocols:
        argv += ["--target", f"{protocol}={host}:{ports[protocol]}"]
        for option in configuration(protocol).TARGET_OPTIONS:
            argv += ["--target-option", option]
    return argv


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    ours, extra = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("protocols", nargs="+")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(ours)
    from wirecheck.targets.launcher import launch

    broker_args = [arg for protocol in args.protocols for arg in configuration(protocol).BROKER_ARGS]
    broker = launch(protocols=args.protocols, extra_args=broker_args)
    try:
        command = pytest_argv(args.protocols, broker.ports, broker.host) + extra
        for _ in range(args.repeat):
            print("+ python", shlex.join(command[1:]), flush=True)
            code = subprocess.run(command, cwd=ROOT).returncode
            if code:
                return code
        return 0
    finally:
        broker.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
