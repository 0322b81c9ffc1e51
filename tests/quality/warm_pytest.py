"""Run pytest in a fresh process whose heavy imports are already done: the self-tests run a suite hundreds of times
(once per fault, variant and isolation check), and each ``python -m pytest`` spends about 2 s of CPU importing
pytest, Hypothesis, scapy and the protocols' layers before its first case.

A small fork server (this module run as ``python -m tests.quality.warm_pytest``) imports them once; each run is a
child forked from it, so it starts with those modules loaded and nothing else: a new process with its own pid,
sockets, broker and report directory, whose pytest session (plugins, options, fixtures, the broker it starts) is its
own, exactly as a user's ``pytest`` is. The server is single-threaded (forking an xdist worker, which runs threads,
would not be safe) and serves one run at a time; each process that calls :func:`run_pytest` (each xdist worker)
starts its own, which ends when that process closes its pipe.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: what every suite run imports, in a state no run has touched: pytest, Hypothesis, scapy, and wirecheck's plugin with
#: every protocol's layers
PRELOAD = ("pytest", "hypothesis", "hypothesis.strategies", "trio", "wirecheck.targets.plugin",
           *(f"wirecheck.protocols.{name}.layers" for name in ("kafka", "fluvio", "pravega", "barco", "rustlog")),
           "wirecheck.protocols.pravega.commands", "wirecheck.targets.fuzz", "wirecheck.targets.corpus")
#: the modules imported here cannot have their asserts rewritten by the run's pytest, which it warns about (wirecheck's
#: own code asserts nothing a case relies on; the suites' test modules are imported by the run itself, and rewritten)
QUIET = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
_server: subprocess.Popen | None = None


def run_pytest(args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess:
    """``python -m pytest *args`` in ``cwd``, as ``subprocess.run(..., capture_output=True, text=True)`` returns
    it; :class:`subprocess.TimeoutExpired` after ``timeout`` seconds, the run killed."""
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen([sys.executable, "-m", "tests.quality.warm_pytest"], cwd=ROOT, text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with tempfile.TemporaryDirectory(prefix="wirecheck-pytest-") as scratch:
        out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
        request = {"args": list(args), "cwd": str(cwd), "env": dict(env if env is not None else os.environ),
                   "timeout": timeout, "out": str(out), "err": str(err)}
        _server.stdin.write(json.dumps(request) + "\n")
        _server.stdin.flush()
        reply = _server.stdout.readline()
        if not reply:
            raise RuntimeError(f"the pytest fork server ended ({_server.wait()})")
        code = json.loads(reply)["exit"]
        if code is None:
            raise subprocess.TimeoutExpired(["pytest", *args], timeout)
        return subprocess.CompletedProcess(["pytest", *args], code, _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def serve() -> None:
    """The fork server: import once, then fork one child per request line; answer its exit status (None: killed
    at its time limit)."""
    for name in PRELOAD:
        importlib.import_module(name)
    assert threading.active_count() == 1, "a preloaded module started a thread: forking would not be safe"
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"exit": _wait(pid, request["timeout"])}), flush=True)


def _wait(pid: int, timeout: float) -> int | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _child(request: dict) -> None:
    """In the forked child: become ``python -m pytest`` in the request's directory, with its environment and its
    output files; never return."""
    code = 3
    try:
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path.insert(0, request["cwd"])  # as ``python -m`` puts the working directory first
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["out"], os.O_WRONLY | os.O_CREAT),
                                (2, request["err"], os.O_WRONLY | os.O_CREAT)):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        import pytest

        sys.argv = ["pytest", *request["args"]]
        code = int(pytest.main([*request["args"], *QUIET]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported on the run's stderr, as an interpreter would
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    serve()
