"""The real Kafka clients the ``clients`` cases drive (suites/kafka/test_clients.py), and their scenarios."""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "produce-consume": "produces records with keys, headers and timestamps to two partitions and consumes each "
                       "back exactly once, byte-identical and in offset order per partition",
    "compression": "produces batches with each compression codec it offers and consumes them back byte-identical",
    "group-rebalance": "consumes with a group of two members, one leaving mid-way, each record exactly once across "
                       "them: the remaining member resumes the leaver's partitions at the offsets committed",
    "idempotent": "produces with an idempotent producer: each record stored once, in batches carrying the producer "
                  "id the broker handed out (>= 0)",
    "transactions": "consumes, transforms and produces in transactions with the consumed offsets "
                    "(sendOffsetsToTransaction), one aborted and one committed: a read_committed consumer sees the "
                    "committed records only, and the group's offset is the committed transaction's",
    "admin": "creates a topic, describes it, alters a topic config and sees the new value described, and deletes "
             "the topic",
}

_EVERY = tuple(SCENARIOS)
CLIENTS = {client.name: client for client in (
    RealClient("kafka-python", "kafka-python, the pure-Python client,", _EVERY),
    RealClient("confluent-kafka", "confluent-kafka, the Python binding of librdkafka,", _EVERY),
    RealClient("aiokafka", "aiokafka, the asyncio client,", _EVERY),
    RealClient("kafkajs", "kafkajs, the pure-JavaScript client,", _EVERY),
    # kcat is a command-line producer and consumer: no admin, no transactions, one consumer per process
    RealClient("kcat", "kcat, librdkafka's command-line producer and consumer,",
               ("produce-consume", "compression", "idempotent")),
)}

#: the API keys a scenario needs advertised, by what every client does (produce, fetch, list offsets, metadata, a
#: consumer group with committed offsets; InitProducerId for an idempotent producer; the transaction APIs;
#: topic creation, deletion and configs) ...
_DATA = frozenset({0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14})
SCENARIO_APIS = {"produce-consume": _DATA, "compression": _DATA, "group-rebalance": _DATA,
                 "idempotent": _DATA | {22}, "transactions": _DATA | {22, 24, 25, 26, 28},
                 "admin": frozenset({3, 19, 20, 32})}
#: ... and by a client's own defaults where the scenario produces: kafka-python's producer is idempotent unless told
#: otherwise
CLIENT_APIS = {"kafka-python": frozenset({22})}
#: ... and by how a client does a scenario, as alternatives (any one set advertised will do): which call alters a
#: config (kafka-python takes IncrementalAlterConfigs when advertised, else AlterConfigs; confluent-kafka's
#: AlterConfigs call is deprecated)
CLIENT_SCENARIO_APIS = {("kafka-python", "admin"): (frozenset({44}), frozenset({33})),
                        ("confluent-kafka", "admin"): (frozenset({44}),),
                        ("aiokafka", "admin"): (frozenset({33}),), ("kafkajs", "admin"): (frozenset({33}),)}
