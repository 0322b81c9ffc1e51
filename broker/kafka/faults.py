"""The clauses the Kafka personality can be told to break (``--fault kafka.NAME``) and the other readings it can
take (``--variant kafka.NAME``), each a typed switch declared once with its clause (switches.py).

Each fault's description names the clause and where the spec states it: the Kafka protocol guide
(kafka.apache.org/protocol), a message definition (clients/src/main/resources/common/message/*.json),
a KIP, or the broker source the spec notes cite. The faults are declared by API family in faults_<family>.py,
and combined here into the one object every component reads (``self.faults.crc_ieee``).
"""

from wirecheck.broker.kafka.faults_admin import AdminFaults
from wirecheck.broker.kafka.faults_groups import ClassicGroupFaults, ConsumerGroupFaults
from wirecheck.broker.kafka.faults_records import RecordFaults
from wirecheck.broker.kafka.faults_safety import SafetyFaults
from wirecheck.broker.kafka.faults_sasl import SaslFaults
from wirecheck.broker.kafka.faults_share import ShareFaults
from wirecheck.broker.kafka.faults_telemetry import TelemetryFaults
from wirecheck.broker.kafka.faults_txn import TransactionFaults
from wirecheck.broker.kafka.faults_wire import WireFaults
from wirecheck.broker.switches import Switch, Switches


class KafkaFaults(SafetyFaults, SaslFaults, TransactionFaults, AdminFaults, ClassicGroupFaults, RecordFaults, WireFaults,
                  ShareFaults, TelemetryFaults, ConsumerGroupFaults, Switches):
    """Every Kafka fault. The catalogue lists the last mixin's switches first (Switches.declared)."""

    personality = "kafka"


class KafkaVariants(Switches):
    """Other readings the spec permits (``--variant``): the whole suite must pass against each."""

    personality = "kafka"

    consumer_group_range_default = Switch(
        "a consumer-group member naming no ServerAssignor is assigned by range, "
        "as a broker whose group.consumer.assignors lists range first (KIP-848)")
    consumer_group_assignment_deferred = Switch(
        "a new target assignment is computed at the group's next heartbeat, not in the one that bumped the group "
        "epoch: the joining member is answered at the old assignment epoch, as Kafka 4.3+ batches assignments "
        "(KIP-1263)")
    share_group_assignment_deferred = Switch(
        "a new share-group target assignment is computed at the group's next heartbeat, not in the one that bumped "
        "the group epoch (KIP-1263)")
    telemetry_push_unthrottled = Switch(
        "a PushTelemetry sooner than PushIntervalMs after the last one is accepted "
        "(no THROTTLING_QUOTA_EXCEEDED)")
    telemetry_terminating_forgotten = Switch("a push after the instance's terminating push is handled as any other")
    telemetry_metrics_unread = Switch(
        "Metrics are not decompressed or read (Kafka without a client telemetry "
        "receiver plugin): any bytes within TelemetryMaxBytes are accepted")
    share_group_exclusive_partitions = Switch(
        "the share-group assignor gives each partition to one member; members beyond the partition count stay idle "
        "(KIP-932 leaves the assignor pluggable)")
    share_auto_offset_earliest = Switch(
        "a share partition starts at the log start (share.auto.offset.reset earliest) instead of the latest offset")
    sasl_apis_on_plaintext = Switch(
        "a listener without SASL advertises SaslHandshake and SaslAuthenticate, as "
        "Apache Kafka's PLAINTEXT listeners do, and answers them ILLEGAL_SASL_STATE (34)")
    fetch_immediate_empty = Switch("a Fetch with MaxWaitMs 0 is answered at once with no records, whatever is there")
    oversize_error_answer = Switch(
        "a size above the frame limit: the request header is read (never the body) and refused "
        "with INVALID_REQUEST (42) where its response has a top-level ErrorCode, then the "
        "connection closes")
    null_client_id_refused = Switch(
        "a request header with a null ClientId closes the connection, as a broker that reads "
        "ClientId as a non-nullable string (nothing obliges accepting every nullable field)")
    unknown_key_error_answer = Switch(
        "an unknown api key gets the correlation id and ErrorCode 35 (UNSUPPORTED_VERSION), then "
        "the connection closes")
    unsupported_version_error_answer = Switch(
        "an unadvertised version gets ErrorCode 35 (UNSUPPORTED_VERSION) in the highest "
        "advertised version's shape, where that has a top-level ErrorCode, instead of the close")
    malformed_body_invalid_request = Switch(
        "a body that does not decode gets INVALID_REQUEST (42) where the response has a top-level "
        "ErrorCode, then the connection closes")
    produce_min_three = Switch(
        "Produce is advertised from v3, the real minimum (without the KAFKA-18659 quirk); v0-2 are "
        "unadvertised")
    invalid_record_as_corrupt = Switch(
        "Produce with no batch, several batches or magic other than 2 gets CORRUPT_MESSAGE (2), "
        "as older brokers answered")
    bad_batch_length_closes = Switch(
        "a refused batch whose batchLength disagrees with the bytes present closes the connection "
        "instead of a partition error")
    zstd_any_produce_version = Switch("a zstd batch is stored whatever the Produce version (no KIP-110 version gate)")
    segment_below_max_message = Switch(
        "message.max.bytes 2 MiB over 1 MiB log segments: a batch between the two gets "
        "RECORD_LIST_TOO_LARGE (18), as Kafka answers for a batch no segment can hold")
    fetch_early_partial = Switch(
        "a waiting Fetch is answered as soon as any bytes are there, below MinBytes too "
        "(MaxWaitMs is an upper bound)")
    metadata_auto_create_leader_not_available = Switch(
        "the Metadata that auto-creates a topic answers it LEADER_NOT_AVAILABLE (5) with its id, as Apache "
        "Kafka 3 (AutoTopicCreationManager.scala), not UNKNOWN_TOPIC_OR_PARTITION (3) as Kafka 4")
    invalid_topic_unknown = Switch(
        "Metadata for a name outside Topic.validate's rule answers UNKNOWN_TOPIC_OR_PARTITION "
        "(3), not 17")
    session_timeout_unbounded = Switch(
        "group.max.session.timeout.ms set to its top (INT32_MAX): only timeouts below the minimum "
        "get 26")
    txn_fenced_invalid_epoch = Switch(
        "a fenced coordinator request gets INVALID_PRODUCER_EPOCH (47) at every version, not "
        "PRODUCER_FENCED (90)")
    txn_init_aborts_at_once = Switch(
        "InitProducerId over an ongoing transaction aborts it and answers success at once, not "
        "CONCURRENT_TRANSACTIONS (51)")
    txn_max_timeout_int32 = Switch(
        "transaction.max.timeout.ms set to its top (INT32_MAX): only a TransactionTimeoutMs of 0 "
        "or less gets 50")
    txn_timeout_no_fence = Switch(
        "a timed-out transaction is aborted under the same epoch, so the producer's late commit "
        "gets INVALID_TXN_STATE (48) instead of being fenced")
    txn_completion_lags = Switch(
        "a transaction completes a moment after EndTxn is answered (Kafka writes the markers, then the completion, "
        "to its log): the first coordinator request for the transactional id after an end gets "
        "CONCURRENT_TRANSACTIONS (51), whatever it asks")
    txn_unadded_invalid_state = Switch(
        "a transactional Produce v11 to a partition not in the transaction gets INVALID_TXN_STATE (48), as below "
        "v11, instead of TRANSACTION_ABORTABLE (120), which Kafka answers clients that know it (KIP-890)")
    txn_v2_late_write_producer_fenced = Switch(
        "a transactional Produce v12+ under an epoch EndTxn v5 left behind gets PRODUCER_FENCED (90), the "
        "coordinator's own answer, instead of INVALID_PRODUCER_EPOCH (47)")
    tagged_defaults_written = Switch(
        "every tagged field of a flexible answer is written, also at its default value (a CurrentLeader of -1/-1, "
        "an empty NodeEndpoints), which Kafka's serializer leaves out; a reader takes a present tagged field "
        "whatever its value (KIP-482; clients/src/main/resources/common/message/README.md, 'Tagged Fields': optional "
        "data; Kafka's generated writers leave a field at its default out)")
    negative_count_null = Switch(
        "a negative array count or string/bytes length other than -1 in a nullable field is read as null, as Apache "
        "Kafka's generated readers do (\"if (length < 0)\"), instead of refusing the request")
    read_only_invalid_config = Switch(
        "altering a static broker config is refused with INVALID_CONFIG (40) instead of "
        "INVALID_REQUEST (42)")


FAULTS: dict[str, str] = KafkaFaults.catalogue()
VARIANTS: dict[str, str] = KafkaVariants.catalogue()
