"""``--corpus DIR``: replay files (reports/replay.py) as conformance cases that run before the generated ones, a
regression corpus of failures seen before. Each file is one case of its recorded case id: FAILED under the
recorded clause when the failure reproduces against the target, OK when it does not (targets/replay.py)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from wirecheck.protocols.verdicts import Divergence, HarnessError
from wirecheck.targets.replay import ReplayError, load, replay
from wirecheck.targets.runner.target import Target


def in_corpus(path: Path, corpus: list[str]) -> bool:
    return path.suffix == ".json" and any(path.resolve().is_relative_to(Path(d).resolve()) for d in corpus)


def replay_command(path: Path, info) -> str:
    """The command that plays one corpus file again against the same target."""
    target = f" --target {info.protocol}={info.text}" if info is not None else ""
    return f"wirecheck replay {shlex.quote(str(path))}{target}"


#: the plugin's: the ``target`` of a case item (skipping it NOT-RUN or TARGET-DOWN)
Resolve = Callable[[pytest.Item], Target]


class ReplayFile(pytest.File):
    def __init__(self, *, resolve: Resolve, **kwargs):
        super().__init__(**kwargs)
        self.resolve = resolve

    def collect(self):
        try:
            document = load(self.path)
        except ReplayError as exc:
            raise HarnessError(f"--corpus: {exc}") from None
        item = ReplayCase.from_parent(self, name=f"replay[{self.path.stem}]", document=document, resolve=self.resolve)
        item.add_marker(pytest.mark.case(document["case"]))
        yield item


class ReplayCase(pytest.Item):
    def __init__(self, *, document: dict, resolve: Resolve, **kwargs):
        super().__init__(**kwargs)
        self.document = document
        self.resolve = resolve

    def runtest(self) -> None:
        target = self.resolve(self)
        addresses = {"": target.address, **target.info.endpoints}
        result = replay(self.document, addresses, transcript=target.transcript)
        if result.reproduced:
            doc = self.document
            raise Divergence(target.catalogue[doc["clause"]], f"not the failing run's reactions: {doc['expected']}",
                             f"the same reactions as the failing run: {doc['actual']}", note=result.detail)
        target.transcript.note(f"replay does not reproduce: {result.detail}")

    def reportinfo(self):
        return self.path, None, f"{self.name} ({self.document['case']})"
