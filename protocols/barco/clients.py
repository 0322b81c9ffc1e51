"""The real HTTP clients the Barco ``clients`` cases drive (suites/barco/test_clients.py), and their scenarios.

No third-party client of the binary producer port is published on PyPI or npm (upstream's own client is a Go
module), so the binary port has no client scenario here: its cases are the suite's own (suites/barco/test_producer.py).
"""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "produce-consume": "produces records over the HTTP producer, registers a consumer of a new group, polls them back "
                       "byte-identical with the produce time as their timestamps (every payload a zstd frame the "
                       "client's own decompressor takes), commits, "
                       "says goodbye, and is then refused a poll (409)",
    "group-resume": "has a consumer read and commit a topic and leave, then a second consumer of the group read only "
                    "the records produced after the commit",
    "json-poll": "polls a new group's consumer with Accept: application/json and gets every produced JSON record back "
                 "in items naming the topic, their start offsets counting from 0",
}

#: the producer port speaks HTTP/1.1 only (notes §1): every client produces over HTTP/1.1
CLIENTS = {client.name: client for client in (
    RealClient("curl-http1", "curl over HTTP/1.1 (one process per request, --http1.1),",
               ("produce-consume", "group-resume", "json-poll")),
    # one request per process: curl before 8.0 fails a second request on a reused prior-knowledge connection
    # (curl/curl#10634), so several streams on one connection are httpx's
    RealClient("curl-h2c", "curl speaking HTTP/2 with prior knowledge to the consumer API "
                           "(--http2-prior-knowledge, one process per request),",
               ("produce-consume", "group-resume", "json-poll")),
    RealClient("httpx", "httpx with HTTP/2 (h2) to the consumer API, one connection per endpoint,",
               ("produce-consume", "group-resume", "json-poll")),
)}

# -- what each scenario depends on (protocols/clients.py: a scenario failing in a run where one of these FAILED is
# BLOCKED by it). The requests the drivers send (suites/barco/test_clients.py) and the answers they judge; the h2c
# clients reach the consumer API over HTTP/2.
_CONNECTS = ("barco.discovery.brokers", "barco.http.keep-alive")
_PRODUCES = ("barco.http-producer.produce", "barco.http-producer.content-types")
#: register, poll (binary), commit, goodbye, and the 409 a poll after goodbye gets
_CONSUMES = ("barco.consumer.register", "barco.consumer.poll-binary", "barco.consumer.records",
             "barco.consumer.payload-zstd", "barco.consumer.offsets-continuous", "barco.consumer.commit",
             "barco.consumer.goodbye", "barco.consumer.unregistered")
_SCENARIOS = {
    "produce-consume": (*_CONNECTS, *_PRODUCES, *_CONSUMES),
    # the second consumer of the group starts at the first one's commit
    "group-resume": (*_CONNECTS, *_PRODUCES, *_CONSUMES, "barco.consumer.at-least-once"),
    # the values are the chunk's records, as the server reads them back (their length fields)
    "json-poll": (*_CONNECTS, *_PRODUCES, "barco.consumer.register", "barco.consumer.poll-json",
                  "barco.consumer.records", "barco.consumer.goodbye"),
}
SCENARIO_DEPENDS_ON: dict[str | tuple[str, str], tuple[str, ...]] = {
    **_SCENARIOS,
    **{(client, scenario): (*clauses, "barco.consumer.h2c") for client in ("curl-h2c", "httpx")
       for scenario, clauses in _SCENARIOS.items()},
}
