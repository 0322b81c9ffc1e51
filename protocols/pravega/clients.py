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
}

CLIENTS = {client.name: client for client in (
    RealClient("pravega-python", "pravega, the Python binding of the Rust client (controller and segment store),",
               ("write-read", "byte-stream", "stream-lifecycle")),
)}
