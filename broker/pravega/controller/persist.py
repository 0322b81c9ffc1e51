"""The controller's metadata on disk (``--data-dir``): scopes, streams, reader groups and key-value tables survive a restart, as
the segments they name do in the segment store's journal.

The whole metadata is one JSON snapshot, ``pravega/controller.json``, rewritten after every call that may change
it (they are rare and small: scopes, streams, scales, reader groups): written to a temporary file, fsynced with
``--fsync batch``, then renamed over the old one, so a kill leaves the old snapshot or the new one, never half of
one. A call answered before the kill is in the snapshot; one the kill interrupted may be in it or not, and the
client retries it (creating a segment that exists is accepted by the store).
"""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path

from wirecheck.broker.batchlog import write_atomically
from wirecheck.broker.pravega.controller.model import KeyValueTable, Metadata, ReaderGroup, Segment, Stream

FILE_NAME = "controller.json"


def _bytes(data: bytes) -> str:
    return base64.b64encode(data).decode()


def to_json(meta: Metadata) -> dict:
    return {
        "scopes": sorted(meta.scopes),
        "streams": [{"scope": s.scope, "name": s.name, "config": _bytes(s.config), "tags": list(s.tags),
                     "segments": [[g.id, g.low, g.high, list(g.predecessors)] for g in s.segments.values()],
                     "epochs": s.epochs, "next_number": s.next_number, "sealed": s.sealed,
                     "head": [[segment, offset] for segment, offset in s.head.items()]}
                    for s in meta.streams.values()],
        "reader_groups": [{"scope": g.scope, "name": g.name, "config": _bytes(g.config)}
                          for g in meta.reader_groups.values()],
        "kv_tables": [{"scope": t.scope, "name": t.name, "config": _bytes(t.config), "partitions": t.partitions}
                      for t in meta.kv_tables.values()],
    }


def from_json(data: dict) -> Metadata:
    meta = Metadata()
    meta.scopes = set(data["scopes"])
    for s in data["streams"]:
        stream = Stream(s["scope"], s["name"], base64.b64decode(s["config"]), tuple(s["tags"]),
                        segments={g[0]: Segment(g[0], g[1], g[2], tuple(g[3])) for g in s["segments"]},
                        epochs=s["epochs"], next_number=s["next_number"], sealed=s["sealed"],
                        head={segment: offset for segment, offset in s["head"]})
        meta.streams[(stream.scope, stream.name)] = stream
    for g in data["reader_groups"]:
        meta.reader_groups[(g["scope"], g["name"])] = ReaderGroup(g["scope"], g["name"], base64.b64decode(g["config"]))
    for t in data.get("kv_tables", []):  # a snapshot from before key-value tables has none
        meta.kv_tables[(t["scope"], t["name"])] = KeyValueTable(t["scope"], t["name"], base64.b64decode(t["config"]),
                                                                t["partitions"])
    return meta


def mutates(call):
    """A ControllerService call that may change the metadata: with ``--data-dir`` the snapshot is rewritten before
    it is answered."""

    @functools.wraps(call)
    async def saved_before_the_answer(self, request, context):
        try:
            return await call(self, request, context)
        finally:
            if self.state is not None:
                self.state.save(self.meta)

    return saved_before_the_answer


class MetadataFile:
    """Where the snapshot lives, and whether each write is synced before the call is answered."""

    def __init__(self, directory: Path, fsync: bool):
        self.path = directory / FILE_NAME
        self.fsync = fsync

    def load(self) -> Metadata:
        """The last snapshot written, or empty metadata on a first start. A snapshot that does not parse is an
        error that names the file: the controller must not start over silently and forget every stream."""
        if not self.path.exists():
            return Metadata()
        try:
            return from_json(json.loads(self.path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise RuntimeError(f"the controller's metadata {self.path} is unreadable: {exc!r}") from None

    def save(self, meta: Metadata) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(to_json(meta), separators=(",", ":")).encode(), self.fsync)
