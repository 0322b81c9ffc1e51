"""The real Fluvio client the ``clients`` cases drive (suites/fluvio/test_clients.py), and its scenarios."""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "produce-consume": "produces records with keys to a topic and consumes each back exactly once, byte-identical "
                       "and in offset order, from the beginning, from an offset and from the end",
    "consumer-offsets": "commits a consumer's offset, resumes a new consumer from it and deletes it",
    "topic-admin": "creates, lists and deletes a topic through the SC, and is refused a topic that exists and the "
                   "deletion of one that does not",
}

CLIENTS = {client.name: client for client in (
    RealClient("fluvio-python", "fluvio, the Python binding of the Rust client (SC and SPU),",
               ("produce-consume", "consumer-offsets", "topic-admin")),
)}

#: the SPU API keys a scenario needs advertised (Produce, FetchOffsets, StreamFetch, UpdateOffsets: the consumer
#: offset keys 1006-1008 are not listed by the SPU either) ...
SCENARIO_SPU_APIS = {"produce-consume": frozenset({0, 1002, 1003, 1005}),
                     "consumer-offsets": frozenset({0, 1002, 1003, 1005}),
                     "topic-admin": frozenset()}
#: ... and the SC's, which every client connection starts with (Watch) and topic admin uses (Create, Delete, List)
SCENARIO_SC_APIS = {"produce-consume": frozenset({1004}),
                    "consumer-offsets": frozenset({1004}),
                    "topic-admin": frozenset({1001, 1002, 1003, 1004})}
