"""The real Kafka clients the ``clients`` cases drive (suites/kafka/test_clients.py), and their scenarios."""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "produce-consume": "produces records with keys, headers and timestamps to two partitions and consumes each "
                       "back exactly once, byte-identical and in offset order per partition",
    "compression": "produces batches with each compression codec it offers and consumes them back byte-identical",
}

CLIENTS = {client.name: client for client in (
    RealClient("kafka-python", "kafka-python, the pure-Python client,", ("produce-consume", "compression")),
    RealClient("confluent-kafka", "confluent-kafka, the Python binding of librdkafka,",
               ("produce-consume", "compression")),
    RealClient("aiokafka", "aiokafka, the asyncio client,", ("produce-consume", "compression")),
    RealClient("kafkajs", "kafkajs, the pure-JavaScript client,", ("produce-consume", "compression")),
    RealClient("kcat", "kcat, librdkafka's command-line producer and consumer,", ("produce-consume", "compression")),
)}

#: the API keys a scenario needs advertised, by what every client does (produce, fetch, list offsets, metadata, a
#: consumer group with committed offsets) ...
SCENARIO_APIS = {"produce-consume": frozenset({0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14}),
                 "compression": frozenset({0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14})}
#: ... and by a client's own defaults: kafka-python's producer is idempotent unless told otherwise
CLIENT_APIS = {"kafka-python": frozenset({22})}
