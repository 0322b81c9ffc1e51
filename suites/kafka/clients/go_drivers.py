"""The Go client drivers (franz-go, Sarama): where each is built, whether it is here, how to run it.

Each driver is a Go module of its own (suites/kafka/clients/<folder>/: go.mod and go.sum pin the library), built
into a binary in its folder by the install line below; it reads the same JSON job on stdin and prints the same
JSON result as the other drivers (python_driver.py). What the two share (the job, the result, the records'
encoding) is the module in go-common/, which each go.mod takes from the repository by a ``replace`` directive
(never fetched). Without go or without the binary a case is NOT-RUN with that line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from wirecheck.targets.clients import run_client

HERE = Path(__file__).resolve().parent
#: client -> its driver's folder (the binary in it has the folder's name with "-driver")
FOLDERS = {"franz-go": HERE / "franz-go", "sarama": HERE / "sarama"}


def binary(client: str) -> Path:
    return FOLDERS[client] / f"{FOLDERS[client].name}-driver"


def install_line(client: str) -> str:
    """How to build the driver: the Go here (no toolchain download), the module's go.sum as it is."""
    folder = FOLDERS[client]
    return f"cd {folder} && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -o {binary(client).name} ."


def missing(client: str) -> bool:
    """No Go toolchain or no binary. (Not judged by age: go build leaves a binary that is up to date untouched, so
    a source touched without a change would look newer than it.)"""
    return shutil.which("go") is None or not binary(client).exists()


def argv(client: str) -> list[str]:
    return [str(binary(client))]


def version(client: str) -> str:
    """The library's module version the binary was built with (the driver's describe job reads its build info)."""
    shown = run_client(argv(client), json.dumps({"action": "describe"}), timeout=10)
    return (shown.output or {}).get("version", "unknown")


#: (client, scenario) -> {API key: the lowest version the client needs advertised to do the scenario as the
#: scenario says}: franz-go joins a KIP-848 group only where ConsumerGroupHeartbeat v1 (Kafka 4's) is advertised,
#: falling back to the classic protocol otherwise (kgo/client.go supportsKIP848v1)
LOWEST_VERSIONS = {("franz-go", "consumer-group-protocol"): {68: 1}}


def versions_lacking(client: str, scenario: str, advertised: dict[int, tuple[int, int]]) -> list[str]:
    """The ``key vN`` a target advertises too low for the client's way of doing the scenario (none: it can)."""
    return [f"{key} v{lowest}" for key, lowest in LOWEST_VERSIONS.get((client, scenario), {}).items()
            if key in advertised and advertised[key][1] < lowest]
