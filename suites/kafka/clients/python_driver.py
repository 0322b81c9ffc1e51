"""A real Python Kafka client, driven by a job on stdin: ``python -m wirecheck.suites.kafka.clients.python_driver
CLIENT`` with CLIENT one of kafka-python, confluent-kafka, aiokafka. Output: one JSON line (``{"waiting_for": ...}``
when the driver's own limit passed). Keys, values and header values are base64 (null allowed for a key).

Jobs (``action``), each with ``bootstrap``, optionally ``client_id`` (every client the job makes sends it) and
optionally ``sasl`` ({"mechanism", "username", "password"}: every client the job makes logs in with it):

- ``describe``: the client's name, version and the codecs it offers.
- ``produce-consume``: ``topic``, ``group``, ``codec``, ``idempotent`` (optional), ``records`` ([{"partition",
  "key", "value", "headers": [[name, value]], "timestamp" (ms)}]) produced in ``rounds`` (each flushed before the
  next, so that later batches start at offsets above 0); then consumed from the earliest offset, committing
  nothing. Gives ``produced`` ([partition, offset] per record, in job order) and ``consumed`` (in the order read).
- ``group-rebalance``: ``topic`` (``partitions`` of them), ``group``, ``values``: two members consume, committing
  each record; one leaves after the first half. Gives ``consumed`` ([member, partition, offset, value]) and
  ``refused_commits`` ([member, partition, offset] of each record whose commit the group refused, having rebalanced,
  or the member could no longer make, its partition revoked).
- ``mixed-group``: the same, the member that leaves being of another client library, ``partner``.
- ``cluster-admin``: ``topic`` (one partition), ``values`` produced to it, ``grow_to``, ``delete_below``: the topic
  grown to ``grow_to`` partitions and described, partition 0's records below ``delete_below`` deleted, the cluster
  described. Gives ``partitions`` and ``brokers`` ([id, host, port]).
- ``group-admin``: ``topic``, ``group``, ``offset``: the offset committed for partition 0, the groups listed, the
  group's offsets read, the group deleted and the groups listed again. Gives ``listed``, ``offset`` (null: none)
  and ``listed_after_delete`` (null where the client cannot delete groups).
- ``consumer-group-protocol``: as ``group-rebalance``, with the KIP-848 protocol (``group.protocol=consumer``) and
  three members: two consume the first third of the records, a third joins, the second third is consumed across
  the three, one of the first two leaves, the last third is consumed by the other two. Gives ``consumed``.
- ``transactions``: ``source``, ``dest`` (one partition each), ``group``, ``transactional_id``, ``values``:
  consume-transform-produce, aborted then committed. Gives ``dest`` (what read_committed reads) and ``committed``.
- ``admin``: ``topic``: created, described, a config altered, deleted. Gives ``partitions``, ``before``, ``after``,
  ``listed_after_delete``.
- ``share-group`` (confluent-kafka): ``topic``, ``group``, ``values``: two ShareConsumer members of a KIP-932 share
  group accept every record; see confluent_share.py. Gives ``consumed`` and ``ack_errors``.
- ``telemetry`` (confluent-kafka): as ``produce-consume`` with KIP-714 metrics push on, then ``wait`` seconds at most
  for each client's first push; see confluent_telemetry.py.

The client's defaults apply except where the scenario is about a setting.
"""

from __future__ import annotations

import json
import sys

from wirecheck.suites.kafka.clients.confluent_share import share_group
from wirecheck.suites.kafka.clients.confluent_telemetry import telemetry
from wirecheck.suites.kafka.clients.python_common import Waiting, consumer_group_protocol, group_rebalance
from wirecheck.suites.kafka.clients.kafka_python_driver import (KafkaPythonMember, kafka_python, kafka_python_admin,
                                                                kafka_python_cluster_admin, kafka_python_group_admin,
                                                                kafka_python_produce, kafka_python_transactions)
from wirecheck.suites.kafka.clients.confluent_driver import (ConfluentConsumerProtocolMember, ConfluentMember,
                                                             confluent_admin, confluent_cluster_admin,
                                                             confluent_group_admin, confluent_kafka,
                                                             confluent_produce, confluent_transactions)
from wirecheck.suites.kafka.clients.aiokafka_driver import (AiokafkaMember, aiokafka, aiokafka_admin,
                                                            aiokafka_cluster_admin, aiokafka_group_admin,
                                                            aiokafka_produce, aiokafka_transactions)

# mixed-group: group-rebalance with the leaving member of another library. The libraries' default assignors differ
# (aiokafka offers roundrobin only, the others range first): the broker picks one that every member offers.
MEMBERS = {"kafka-python": KafkaPythonMember, "confluent-kafka": ConfluentMember, "aiokafka": AiokafkaMember}
PRODUCERS = {"kafka-python": kafka_python_produce, "confluent-kafka": confluent_produce, "aiokafka": aiokafka_produce}


def mixed_group(job: dict, client: str) -> dict:
    return group_rebalance(job, PRODUCERS[client](job), lambda: MEMBERS[client](job),
                           lambda: MEMBERS[job["partner"]](job))


DRIVERS = {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka, "aiokafka": aiokafka}


SCENARIOS = {
    "group-rebalance": {"kafka-python": lambda job: group_rebalance(job, kafka_python_produce(job),
                                                                    lambda: KafkaPythonMember(job)),
                        "confluent-kafka": lambda job: group_rebalance(job, confluent_produce(job),
                                                                       lambda: ConfluentMember(job)),
                        "aiokafka": lambda job: group_rebalance(job, aiokafka_produce(job),
                                                                lambda: AiokafkaMember(job))},
    "consumer-group-protocol": {"confluent-kafka": lambda job: consumer_group_protocol(
        job, confluent_produce(job), lambda: ConfluentConsumerProtocolMember(job))},
    "transactions": {"kafka-python": kafka_python_transactions, "confluent-kafka": confluent_transactions,
                     "aiokafka": aiokafka_transactions},
    "admin": {"kafka-python": kafka_python_admin, "confluent-kafka": confluent_admin, "aiokafka": aiokafka_admin},
    "mixed-group": {client: (lambda job, client=client: mixed_group(job, client)) for client in MEMBERS},
    "cluster-admin": {"kafka-python": kafka_python_cluster_admin, "confluent-kafka": confluent_cluster_admin,
                      "aiokafka": aiokafka_cluster_admin},
    "group-admin": {"kafka-python": kafka_python_group_admin, "confluent-kafka": confluent_group_admin,
                    "aiokafka": aiokafka_group_admin},
    # KIP-932 share groups and KIP-714 metrics push: librdkafka's alone of the Python clients
    "share-group": {"confluent-kafka": share_group},
    "telemetry": {"confluent-kafka": telemetry},
}


def main() -> int:
    job = json.loads(sys.stdin.read())
    try:
        action = SCENARIOS.get(job["action"], {}).get(sys.argv[1], DRIVERS[sys.argv[1]])
        result = action(job)
    except Waiting as waiting:
        print(json.dumps({"waiting_for": str(waiting)}))
        return 3
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
