"""The real Pravega client the ``clients`` cases drive (suites/pravega/test_clients.py), and its scenarios.

The client reaches the segment store through the controller (gRPC), which names the store for each segment."""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "write-read": "writes events with and without routing keys to a two-segment stream and reads each back "
                  "through a reader group exactly once, byte-identical and in order per routing key",
    "byte-stream": "writes a byte stream in chunks, sees its tail offset, and reads it back byte-identical from "
                   "the start and from an offset",
    "stream-lifecycle": "creates a scope and a stream (a second creation of each answering that it exists), "
                        "writes to the stream, seals it, and deletes the stream and the scope",
    "transaction": "writes events in two transactions, commits one and aborts the other, sees their final states, "
                   "and reads back through a reader group only the committed events, in order",
    "key-value-table": "creates a key-value table of two partitions, inserts entries (a second insert of a key "
                       "refused), updates one at its version (an update at its old version refused), removes one, "
                       "reads every key back, and deletes the table and its scope",
}

CLIENTS = {client.name: client for client in (
    RealClient("pravega-python", "pravega, the Python binding of the Rust client (controller and segment store),",
               ("write-read", "byte-stream", "stream-lifecycle")),
    RealClient("pravega-java", "pravega-client, the Java client (controller and segment store),",
               ("write-read", "byte-stream", "stream-lifecycle", "transaction", "key-value-table")),
)}

# -- what each scenario depends on (protocols/clients.py: a scenario failing in a run where one of these FAILED is
# BLOCKED by it). The segment store's side of what the Rust client does (the controller is gRPC, no clause here):
# Hello, SetupAppend and standalone AppendBlockEnd appends (its only shape), reads; no error it never provokes.
_CONNECTS = ("pravega.framing.reply", "pravega.framing.pipelined", "pravega.strings.modified-utf8",
             "pravega.hello.reply", "pravega.hello.versions", "pravega.request-id.echo")
_APPENDS = ("pravega.append.setup", "pravega.append.ack", "pravega.append.ack-previous",
            "pravega.append.write-offset", "pravega.append.stored-verbatim", "pravega.append.standalone-block-end")
SCENARIO_DEPENDS_ON: dict[str | tuple[str, str], tuple[str, ...]] = {
    "write-read": (*_CONNECTS, *_APPENDS, "pravega.read.in-range", "pravega.read.long-poll"),
    # the tail offset is GetStreamSegmentInfo's write offset
    "byte-stream": (*_CONNECTS, *_APPENDS, "pravega.read.in-range", "pravega.segment.info"),
    # the controller creates, seals and deletes the segments through these commands; a write after the seal must be
    # refused
    "stream-lifecycle": (*_CONNECTS, *_APPENDS, "pravega.segment.create", "pravega.segment.create-exists",
                         "pravega.segment.seal", "pravega.append.sealed", "pravega.segment.delete"),
    # a transaction is a segment of its own, merged into the stream's at the commit, deleted at the abort
    "transaction": (*_CONNECTS, *_APPENDS, "pravega.segment.create", "pravega.segment.merge",
                    "pravega.segment.delete", "pravega.read.in-range", "pravega.read.long-poll"),
    # the controller creates and deletes the table's partitions (table segments); the client updates, removes and
    # reads their keys on the segment store, conditionally on a key's version (the table's own Insert and Put at a
    # version are version conditions)
    "key-value-table": (*_CONNECTS, "pravega.table.create", "pravega.table.update", "pravega.table.version-bump",
                        "pravega.table.conditional", "pravega.table.read", "pravega.table.remove",
                        "pravega.table.delete"),
}
