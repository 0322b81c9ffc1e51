"""The real Kafka clients the ``clients`` cases drive (suites/kafka/test_clients.py), and their scenarios."""

from __future__ import annotations

from wirecheck.protocols.clients import RealClient

SCENARIOS = {
    "produce-consume": "produces records with keys, headers and timestamps to two partitions and consumes each "
                       "back exactly once, byte-identical and in offset order per partition",
    "compression": "produces batches with each compression codec it offers and consumes them back byte-identical",
    "group-rebalance": "consumes with a group of two members, one leaving mid-way, each record exactly once across "
                       "them: the remaining member resumes the leaver's partitions at the offsets committed (a "
                       "record whose commit the group refused, a commit racing the rebalance, comes once more)",
    "idempotent": "produces with an idempotent producer: each record stored once, in batches carrying the producer "
                  "id the broker handed out (>= 0)",
    "transactions": "consumes, transforms and produces in transactions with the consumed offsets "
                    "(sendOffsetsToTransaction), one aborted and one committed: a read_committed consumer sees the "
                    "committed records only, and the group's offset is the committed transaction's",
    "admin": "creates a topic, describes it, alters a topic config and sees the new value described, and deletes "
             "the topic",
    "sasl": "logs in over SASL with each mechanism of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 that both it and the "
            "server's SASL listener offer, then produces records and consumes them back byte-identical",
    "mixed-group": "consumes with a group of two members, the other of another client library (kafka-python with "
                   "confluent-kafka, confluent-kafka with aiokafka, aiokafka with kafka-python) and leaving mid-way, "
                   "each record exactly once across them: the client's member resumes the leaver's partitions at the "
                   "offsets the other library committed (a record whose commit the group refused, a commit racing "
                   "the rebalance, comes once more: Kafka's CommitFailedException)",
    "group-consume": "consumes as a group's only member until it has read what was produced, committing on exit, "
                     "and a second run of the group reads on from the committed offsets: each record exactly once "
                     "across the runs",
    "cluster-admin": "adds partitions to a topic and sees them described, deletes a partition's first records "
                     "(the log start moves to the offset given) and describes the cluster with the brokers Metadata "
                     "lists",
    "group-admin": "commits a group's offset without consuming, then finds the group listed and the offset read back, "
                   "and, where its admin client deletes groups, the group no longer listed once deleted",
    "consumer-group-protocol": "consumes with a group of three members of the KIP-848 protocol "
                               "(ConsumerGroupHeartbeat, server-side assignment), one joining late and one leaving, "
                               "each record exactly once across them: partitions move only after their owner revoked "
                               "them, and a new owner resumes at the offsets committed",
    "telemetry": "produces and consumes with KIP-714 metrics push on: each record consumed back byte-identical, "
                 "the client's telemetry subscription fetched and at least one push of each of its producer and "
                 "consumer accepted, with no telemetry error in the client's log",
}

SCENARIOS["share-group"] = (
    "consumes with two members of a KIP-932 share group (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge) sharing "
    "one partition, acknowledging each record ACCEPT: each record delivered and accepted exactly once across them")
SCENARIOS["transactions-v2"] = (
    "runs the transactions scenario with KIP-890's transaction protocol version 2, on a server that finalizes the "
    "transaction.version feature at 2: its producer adds partitions and offsets by Produce v12+ and TxnOffsetCommit "
    "v5+ (no AddPartitionsToTxn, no AddOffsetsToTxn) and ends each transaction with EndTxn v5+, and a "
    "read_committed consumer sees the committed records only")

#: the scenarios every client below runs (the others are named per client: SASL needs the driver to pass
#: credentials, the mixed group runs the Python clients side by side in one driver, and the further admin calls are
#: those of the clients with a full admin client)
_EVERY = ("produce-consume", "compression", "group-rebalance", "idempotent", "transactions", "admin")
_MORE = ("sasl", "cluster-admin", "group-admin")
CLIENTS = {client.name: client for client in (
    RealClient("kafka-python", "kafka-python, the pure-Python client,", (*_EVERY, *_MORE, "mixed-group")),
    # of the installed clients only librdkafka (group.protocol=consumer) speaks KIP-848; kafka-python 3.0.12, aiokafka
    # 0.14 and kafkajs 2.2.4 know only the classic protocol. Only librdkafka (2.5+) pushes KIP-714 telemetry too:
    # kafka-python names keys 71/72 but never sends them, @platformatic/kafka 2.12 has the two request functions
    # but its clients never call them, aiokafka and kafkajs know nothing of them, kcat 1.7.1's librdkafka 2.0.2
    # predates them. KIP-932 share groups: librdkafka 2.16's ShareConsumer alone; kafka-python 3.0.12 and
    # @platformatic/kafka 2.12 only name keys 76-79, aiokafka 0.14 and kafkajs 2.2.4 know nothing of them
    RealClient("confluent-kafka", "confluent-kafka, the Python binding of librdkafka,",
               (*_EVERY, *_MORE, "mixed-group", "consumer-group-protocol", "telemetry", "share-group")),
    RealClient("aiokafka", "aiokafka, the asyncio client,", (*_EVERY, *_MORE, "mixed-group")),
    RealClient("kafkajs", "kafkajs, the pure-JavaScript client,", (*_EVERY, *_MORE)),
    # not group-rebalance yet: under load its consumer still delivers (and commits) a record of a partition its
    # join event already moved to the other member, so a record comes twice whatever the broker does. Its SASL is
    # its own (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512: SASLMechanisms in its apis/enumerations.js)
    RealClient("platformatic-kafka", "@platformatic/kafka, a modern pure-JavaScript client,",
               (*(s for s in _EVERY if s != "group-rebalance"), "sasl")),
    # kcat is a command-line producer and consumer: no admin, no transactions, one consumer per process (its
    # group consumer runs alone, one run after another)
    RealClient("kcat", "kcat, librdkafka's command-line producer and consumer,",
               ("produce-consume", "compression", "idempotent", "sasl", "group-consume")),
    # the Go clients (suites/kafka/clients/go_drivers.py): franz-go's kgo speaks KIP-848 (kgo.ServerSideBalancer,
    # consumer_group_848.go) and KIP-932 (kgo.ShareGroup, consumer_share.go), its transactions take KIP-890's v2
    # where the broker finalizes transaction.version 2 (client.go supportsKIP890p2), and it pushes KIP-714 metrics
    # unless told not to (metrics_714.go)
    RealClient("franz-go", "franz-go, the pure-Go client (kgo, kadm),",
               (*_EVERY, *_MORE, "group-consume", "consumer-group-protocol", "transactions-v2", "share-group",
                "telemetry")),
    # Sarama knows no KIP-848 (it only names key 68 in request.go) and leaves SCRAM to the application (the driver
    # takes xdg-go/scram, as Sarama's examples do)
    RealClient("sarama", "Sarama, IBM's pure-Go client,", (*_EVERY, *_MORE, "group-consume")),
    # the Apache Kafka Java client (suites/kafka/clients/java/): the classic consumer (its default) everywhere but
    # consumer-group-protocol (group.protocol=consumer); share-group is its KafkaShareConsumer, telemetry its
    # ClientTelemetryReporter (enable.metrics.push), transactions-v2 its TransactionManager's TV2 path
    RealClient("java", "the Apache Kafka Java client (kafka-clients),",
               (*_EVERY, *_MORE, "group-consume", "consumer-group-protocol", "share-group", "telemetry",
                "transactions-v2")),
)}

#: the API keys a scenario needs advertised, by what every client does (produce, fetch, list offsets, metadata, a
#: consumer group with committed offsets; InitProducerId for an idempotent producer; the transaction APIs;
#: topic creation, deletion and configs) ...
_DATA = frozenset({0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14})
SCENARIO_APIS = {"produce-consume": _DATA, "compression": _DATA, "group-rebalance": _DATA,
                 "idempotent": _DATA | {22}, "transactions": _DATA | {22, 24, 25, 26, 28},
                 # TV2: no AddPartitionsToTxn (24) nor AddOffsetsToTxn (25); FindCoordinator, InitProducerId,
                 # EndTxn v5+ and TxnOffsetCommit v5+ (the versions are the case's to check)
                 "transactions-v2": _DATA | {22, 26, 28},
                 # KIP-932 share consumers: ShareGroupHeartbeat, ShareFetch and ShareAcknowledge, no offsets
                 "share-group": frozenset({0, 3, 10, 76, 78, 79}),
                 # KIP-848 members join with ConsumerGroupHeartbeat (not JoinGroup) and commit with OffsetCommit v9+
                 "consumer-group-protocol": frozenset({0, 1, 2, 3, 8, 9, 10, 68}),
                 # KIP-714: GetTelemetrySubscriptions and PushTelemetry beside the data path
                 "telemetry": _DATA | {71, 72},
                 "admin": frozenset({3, 19, 20, 32}), "sasl": _DATA | {17, 36},
                 "mixed-group": _DATA, "group-consume": _DATA,
                 # CreatePartitions, DeleteRecords, and Metadata for the cluster (DescribeCluster where a client
                 # takes it: CLIENT_SCENARIO_APIS); OffsetCommit, OffsetFetch, ListGroups (DeleteGroups where the
                 # client deletes groups)
                 "cluster-admin": _DATA | {21, 37}, "group-admin": frozenset({3, 8, 9, 10, 16})}
#: ... and by a client's own defaults where the scenario produces: kafka-python's producer is idempotent unless told
#: otherwise
CLIENT_APIS = {"kafka-python": frozenset({22}),
               # franz-go's producer is idempotent unless kgo.DisableIdempotentWrite (kgo/config.go)
               "franz-go": frozenset({22}),
               # the Java producer too (enable.idempotence defaults to true since Kafka 3.0, KIP-679)
               "java": frozenset({22})}
#: ... and by how a client does a scenario, as alternatives (any one set advertised will do): which call alters a
#: config (kafka-python takes IncrementalAlterConfigs when advertised, else AlterConfigs; confluent-kafka's
#: AlterConfigs call is deprecated)
CLIENT_SCENARIO_APIS = {("kafka-python", "admin"): (frozenset({44}), frozenset({33})),
                        ("confluent-kafka", "admin"): (frozenset({44}),),
                        ("aiokafka", "admin"): (frozenset({33}),), ("kafkajs", "admin"): (frozenset({33}),),
                        ("platformatic-kafka", "admin"): (frozenset({33}),),
                        # kafka-python takes DescribeCluster when advertised, else Metadata; librdkafka needs it
                        ("kafka-python", "cluster-admin"): (frozenset({60}), frozenset()),
                        ("confluent-kafka", "cluster-admin"): (frozenset({60}),),
                        **{(client, "group-admin"): (frozenset({42}),)
                           for client in ("kafka-python", "confluent-kafka", "kafkajs", "franz-go", "sarama")},
                        # kadm's AlterTopicConfigs is IncrementalAlterConfigs (kadm/configs.go), the driver's
                        # Sarama call AlterConfig is AlterConfigs (admin.go); both describe the cluster by Metadata
                        ("franz-go", "admin"): (frozenset({44}),), ("sarama", "admin"): (frozenset({33}),),
                        # Java's Admin has only incrementalAlterConfigs since 4.0 (alterConfigs, deprecated by
                        # KIP-339, removed); its describeCluster falls back to Metadata without DescribeCluster
                        ("java", "admin"): (frozenset({44}),),
                        ("java", "cluster-admin"): (frozenset({60}), frozenset()),
                        ("java", "group-admin"): (frozenset({42}),)}

# -- what each scenario depends on -----------------------------------------------------------------------------
# The protocol clauses a scenario's clients rely on on their ordinary path (protocols/clients.py): a scenario that
# fails in a run where one of them FAILED is BLOCKED by it, not reported as a defect of its own. Only requests every
# client of the scenario sends, and answers it cannot do without, are listed (the path is the drivers' in
# suites/kafka/clients/ and the clients' own, e.g. Apache Kafka's ConsumerCoordinator); the error answers a
# well-behaved client never provokes (CRC mismatches, unknown topics, fenced epochs) are left out, so that an
# unrelated failure is never taken for the cause. The most basic come first: with several failed, the first names
# the cause.

#: every client: frames and headers, versions from ApiVersions, the brokers and leaders from Metadata
_CONNECTS = ("kafka.framing.size-prefix", "kafka.framing.pipelining", "kafka.header.correlation-id",
             "kafka.header.request-v2-flexible", "kafka.header.client-id-classic",
             "kafka.header.response-v1-flexible", "kafka.header.api-versions-v0", "kafka.encoding.flexible",
             "kafka.encoding.response-shape", "kafka.api-versions.advertised",
             "kafka.api-versions.advertised-implemented", "kafka.metadata.brokers")
#: producing and consuming records: the offsets Produce assigns, Fetch's records, batches, high watermark and log
#: start, ListOffsets for where a consumer starts
_RECORDS = ("kafka.produce.base-offset", "kafka.fetch.records", "kafka.fetch.batch-crc",
            "kafka.fetch.high-watermark", "kafka.fetch.log-start-offset", "kafka.list-offsets.earliest-latest")
#: a classic group member (FindCoordinator, JoinGroup with KIP-394's member id round, SyncGroup), which asks
#: OffsetFetch where to start (-1: none committed, auto.offset.reset applies)
_MEMBER = ("kafka.group.find-coordinator", "kafka.group.member-id-required", "kafka.group.leader-metadata",
           "kafka.group.generation", "kafka.commit.no-offset")
#: a group resuming at committed offsets (OffsetCommit, then OffsetFetch by the member that takes over)
_COMMITS = ("kafka.commit.round-trip",)
#: two members, one leaving: the other learns of the rebalance from its Heartbeat and joins the next generation
_REBALANCE = ("kafka.group.rebalance-in-progress",)
_CONSUMES = (*_CONNECTS, *_RECORDS, *_MEMBER)

SCENARIO_DEPENDS_ON: dict[str | tuple[str, str], tuple[str, ...]] = {
    # the consumers read as a group's member without committing (kcat: below)
    "produce-consume": _CONSUMES, "compression": _CONSUMES,
    "group-rebalance": (*_CONSUMES, *_COMMITS, *_REBALANCE), "mixed-group": (*_CONSUMES, *_COMMITS, *_REBALANCE),
    "group-consume": (*_CONSUMES, *_COMMITS),
    "idempotent": (*_CONSUMES, "kafka.idempotence.init-producer-id"),
    # the transaction coordinator is found with FindCoordinator (key type 1); clients of Kafka 4 take KIP-890's
    # transactions v2 where the broker offers them; the group's offset is read back with OffsetFetch
    "transactions": (*_CONSUMES, *_COMMITS, "kafka.idempotence.init-producer-id", "kafka.txn.commit", "kafka.txn.abort",
                     "kafka.txn.control-batch", "kafka.txn.last-stable-offset", "kafka.txn-v2.implicit-add",
                     "kafka.txn-v2.implicit-offsets", "kafka.txn-v2.epoch-bump", "kafka.txn-v2.marker-epoch"),
    # TV2 alone (the transactions above depend on it only where the client takes it)
    "transactions-v2": (*_CONSUMES, *_COMMITS, "kafka.idempotence.init-producer-id", "kafka.txn.commit",
                        "kafka.txn.abort", "kafka.txn.control-batch", "kafka.txn.last-stable-offset",
                        "kafka.txn-v2.implicit-add", "kafka.txn-v2.implicit-offsets", "kafka.txn-v2.epoch-bump",
                        "kafka.txn-v2.marker-epoch"),
    # CreateTopics, DescribeConfigs, AlterConfigs or IncrementalAlterConfigs (CLIENT_SCENARIO_APIS)
    "admin": (*_CONNECTS, "kafka.topics.create", "kafka.configs.describe-topic", "kafka.configs.alter-round-trip",
              "kafka.configs.incremental"),
    "sasl": (*_CONNECTS, "kafka.sasl.plain", "kafka.sasl.scram", *_RECORDS, *_MEMBER),
    "cluster-admin": (*_CONNECTS, *_RECORDS, "kafka.admin.create-partitions", "kafka.admin.delete-records",
                      "kafka.admin.describe-cluster"),
    "group-admin": (*_CONNECTS, "kafka.group.find-coordinator", "kafka.commit.no-offset", *_COMMITS,
                    "kafka.admin.delete-groups"),
    # KIP-848: ConsumerGroupHeartbeat joins, assigns (the server's assignor: the clients name none), revokes and
    # leaves; OffsetCommit v9 at the member epoch
    "consumer-group-protocol": (*_CONNECTS, *_RECORDS, "kafka.group.find-coordinator", "kafka.consumer-group.join",
                                "kafka.consumer-group.group-epoch", "kafka.consumer-group.assignment",
                                "kafka.consumer-group.revocation-first", "kafka.consumer-group.epoch-after-revocation",
                                "kafka.consumer-group.leave", "kafka.consumer-group.default-assignor",
                                "kafka.consumer-group.commit-member-epoch", "kafka.commit.no-offset", *_COMMITS),
    # KIP-932: ShareGroupHeartbeat, ShareFetch in a share session, ShareAcknowledge ACCEPT
    "share-group": (*_CONNECTS, "kafka.produce.base-offset", "kafka.group.find-coordinator", "kafka.share-group.join",
                    "kafka.share-group.assignment", "kafka.share-fetch.acquire", "kafka.share-fetch.exclusive",
                    "kafka.share-ack.accept", "kafka.share-session.epoch"),
    # KIP-714: GetTelemetrySubscriptions, then pushes at the interval it answered
    "telemetry": (*_CONSUMES, "kafka.telemetry.instance-id", "kafka.telemetry.push-accepted",
                  "kafka.telemetry.push-interval"),
    # kcat reads a topic by assignment from the beginning, no group (its group-consume is the group)
    ("kcat", "produce-consume"): (*_CONNECTS, *_RECORDS), ("kcat", "compression"): (*_CONNECTS, *_RECORDS),
}
#: a client whose producer is idempotent by default (CLIENT_APIS holds InitProducerId) asks InitProducerId first in
#: every scenario that produces (SCENARIO_APIS holds Produce), so it depends on that answer there too
SCENARIO_DEPENDS_ON.update({
    (client, scenario): (*SCENARIO_DEPENDS_ON.get((client, scenario), SCENARIO_DEPENDS_ON[scenario]),
                         "kafka.idempotence.init-producer-id")
    for client, apis in CLIENT_APIS.items() if 22 in apis and client in CLIENTS for scenario in CLIENTS[client].scenarios
    if 0 in SCENARIO_APIS[scenario] and "kafka.idempotence.init-producer-id" not in SCENARIO_DEPENDS_ON[scenario]})
