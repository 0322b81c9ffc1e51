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

# -- what each scenario depends on (protocols/clients.py: a scenario failing in a run where one of these FAILED is
# BLOCKED by it). What the client does on its ordinary path: every connection starts with ApiVersions and the SC's
# metadata watch; the error answers it never provokes are left out.
_CONNECTS = ("fluvio.framing.response-frame", "fluvio.framing.correlation-id", "fluvio.framing.in-order",
             "fluvio.versions.advertised", "fluvio.versions.platform-semver", "fluvio.versions.every-version",
             "fluvio.errors.encoding", "fluvio.sc.api-versions.platform", "fluvio.sc.api-versions.watch",
             "fluvio.sc.watch.first-all")
#: a producer and a stream consumer (StreamFetch, then UpdateOffsets for more; FetchOffsets for where to start)
_RECORDS = ("fluvio.produce.offsets", "fluvio.produce.response-entries", "fluvio.produce.response-fields",
            "fluvio.fetch.stored-batches", "fluvio.offsets.values", "fluvio.stream.records",
            "fluvio.stream.flow-control", "fluvio.update-offsets.status")
SCENARIO_DEPENDS_ON: dict[str | tuple[str, str], tuple[str, ...]] = {
    "produce-consume": (*_CONNECTS, *_RECORDS),
    "consumer-offsets": (*_CONNECTS, *_RECORDS, "fluvio.consumer-offsets.stored", "fluvio.consumer-offsets.delete"),
    # the client is refused a topic that exists and the deletion of one that does not: the SC's answers to both
    "topic-admin": (*_CONNECTS, "fluvio.sc.list.topics", "fluvio.sc.status.name", "fluvio.sc.create.exists",
                    "fluvio.sc.delete.missing"),
}
