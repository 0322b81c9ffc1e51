"""What the container recipes under docker/ run: their ENTRYPOINT and CMD, read from the Dockerfiles."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = {"tool": ROOT / "docker" / "wirecheck.Dockerfile", "broker": ROOT / "docker" / "broker.Dockerfile"}


def command_of(image: str) -> tuple[list[str], list[str]]:
    """(ENTRYPOINT, CMD) of the image's last stage, both in exec (JSON) form."""
    found = {}
    for line in DOCKERFILES[image].read_text().splitlines():
        word, _, rest = line.partition(" ")
        if word in ("ENTRYPOINT", "CMD"):
            found[word] = json.loads(rest)
    return found["ENTRYPOINT"], found.get("CMD", [])
