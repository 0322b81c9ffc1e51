"""What each reference-broker fault must make its suite report, read from the registry (``ProtocolSpec.faults``).

``protocols/<name>/faults.py`` holds ``FAULTS``: namespaced fault -> the clause reported FAILED. The quality runs
use --strict, so SHOULD clauses fail too. ``SCOPES`` limits a faulted run to one suite module (absent: the whole
suite); either way the run stops at the first FAILED record of the expected clause.
"""

from __future__ import annotations

from pathlib import Path

from wirecheck.protocols.registry import all_specs

#: protocol -> its faults table (ProtocolSpec.faults, from protocols/<name>/faults.py)
EXPECTED: dict[str, dict[str, str]] = {name: dict(spec.faults) for name, spec in all_specs().items() if spec.faults}

#: fault -> the suite module (under suites/<protocol>/) that catches it, where running one module is enough.
SCOPES = {
    "fluvio.apiversions-overadvertise": "test_versions",
    "fluvio.compression-error-wrong": "test_produce",
    "fluvio.correlation-id-wrong": "test_framing",
    "fluvio.crash-on-huge-record-count": "test_produce",
    "fluvio.crc-unchecked": "test_produce",
    "fluvio.error-code-unknown-partition-wrong": "test_produce",
    "fluvio.error-payload-missing": "test_fetch",
    "fluvio.fetch-hw-off-by-one": "test_fetch",
    "fluvio.fetch-offsets-start-is-hw": "test_fetch",
    "fluvio.fetch-offsets-wrong-code": "test_fetch",
    "fluvio.isolation-strict": "test_produce",
    "fluvio.negative-size-stays-open": "test_framing",
    "fluvio.offsets-follow-record-count": "test_produce",
    "fluvio.produce-base-offset-wrong": "test_produce",
    "fluvio.produce-responses-merged": "test_produce",
    "fluvio.stream-fetch-no-updates": "test_stream",
    "fluvio.stream-id-zero": "test_stream",
    "fluvio.throttle-missing": "test_produce",
    "fluvio.unknown-key-stays-open": "test_framing",
    "fluvio.update-offsets-unknown-session-ok": "test_stream",
    "fluvio.version-above-max-silent": "test_versions",
    "fluvio.negative-delta-short-circuits": "test_produce",
    **{f"fluvio.sc-{name}": "test_sc" for name in (
        "platform-version-old", "watch-not-advertised", "watch-first-not-all", "watch-epoch-stale",
        "watch-changes-missing", "create-existing-ok", "invalid-name-accepted", "delete-missing-ok",
        "unknown-label-answers-empty", "status-name-wrong", "list-ignores-names")},
    **{f"fluvio.consumer-offset-{name}": "test_consumer_offsets" for name in (
        "not-stored", "unknown-session-ok", "delete-ignored", "filter-ignored")},
}
SCOPES.update({
    # KIP-848 consumer groups: every fault's clause has its cases in one module
    **{f"kafka.consumer-group-{name}": "test_consumer_groups" for name in (
        "join-epoch-zero", "member-id-ignored", "epoch-not-bumped", "assignment-omitted", "reassigns-unrevoked",
        "epoch-before-revocation", "epoch-unchecked", "unknown-member-joins", "leave-ignored",
        "static-rejoin-rebalances", "assignor-unchecked", "fields-unchecked", "describe-no-target",
        "classic-join-allowed", "commit-epoch-unchecked")},
    "kafka.consumer-group-classic-members-dropped": "test_consumer_group_choices",
    # KIP-714 client telemetry: every fault's clause has its cases in one module
    **{f"kafka.telemetry-{name}": "test_telemetry" for name in (
        "instance-id-not-assigned", "subscription-id-unstable", "subscription-unchecked", "compression-unchecked",
        "size-unchecked", "null-instance-accepted")},
    "kafka.apiversions-unsupported-not-v0": "test_framing",
    "kafka.apiversions-unsupported-trailing-tags": "test_framing",
    "kafka.frame-limit-ignored": "test_framing",
    "kafka.fetch-unknown-partition-no-error": "test_produce_fetch",
    "kafka.listoffsets-unknown-partition-no-error": "test_produce_fetch",
    "kafka.listoffsets-unknown-topic-closes-v5": "test_versions",
    "kafka.batch-length-ignored": "test_produce_fetch",
    "kafka.replication-factor-unchecked": "test_topics_groups",
    "kafka.sync-generation-unchecked": "test_topics_groups",
    "kafka.log-start-offset-unset": "test_produce_fetch",
    "kafka.multi-batch-first-kept": "test_produce_fetch",
    "kafka.software-name-unchecked": "test_framing",
    "kafka.metadata-v13-as-v12": "test_versions",
    "kafka.describe-configs-drops-key": "test_configs",
    "kafka.describe-configs-named-keys-close": "test_configs",
    "kafka.describe-configs-synonyms-always": "test_configs",
    "kafka.describe-configs-docs-always": "test_configs",
    "kafka.alter-configs-unknown-accepted": "test_configs",
    "kafka.alter-configs-not-applied": "test_configs",
    "kafka.validate-only-applied": "test_configs",
    "kafka.max-message-bytes-override-ignored": "test_configs",
    "kafka.create-partitions-count-ignored": "test_admin",
    "kafka.delete-records-start-not-moved": "test_admin",
    "kafka.delete-groups-non-empty-accepted": "test_admin",
    "kafka.offset-delete-not-deleted": "test_admin",
    "kafka.describe-cluster-port-wrong": "test_admin",
    "kafka.leader-epoch-end-off": "test_admin",
    "kafka.describe-producers-empty": "test_admin",
    "kafka.sasl-unauthenticated-served": "test_sasl",
    "kafka.sasl-wrong-password-accepted": "test_sasl",
    "kafka.sasl-scram-proof-unchecked": "test_sasl",
    "kafka.sasl-unsupported-mechanism-accepted": "test_sasl",
    "kafka.sasl-plain-authzid-required": "test_sasl",
    "kafka.sasl-scram-signature-wrong": "test_sasl",
    **{f"kafka.{name}": "test_framing" for name in (
        "compact-string-length-two-bytes", "pipelined-answers-reordered", "size-prefix-one-read",
        "apiversions-header-v1", "header-tags-first-only")},
    "kafka.hostile-count-waits": "test_robustness",
    "kafka.txn-producer-malformed-answered": "test_robustness",
    "kafka.in-transaction-malformed-stalls": "test_robustness",
    "kafka.fetch-crc-ieee": "test_produce_fetch",
    "kafka.base-offset-echoed": "test_produce_fetch",
    "kafka.error-code-negated": "test_topics_groups",
    **{f"kafka.txn-{name}": "test_transactions" for name in (
        "epoch-not-bumped", "old-epoch-accepted", "lso-not-advanced", "aborted-not-listed", "marker-not-control",
        "read-committed-past-lso", "list-offsets-ignores-isolation", "end-without-partitions-accepted",
        "init-keeps-ongoing", "timeout-ignored", "timeout-unchecked")},
    **{f"kafka.txn-v2-{name}": "test_transactions_v2" for name in (
        "implicit-add-any-version", "implicit-add-missing", "offsets-add-missing", "epoch-not-bumped",
        "marker-old-epoch", "old-epoch-accepted", "end-retry-fenced", "bump-any-version")},
})

SCOPES.update({
    **{f"barco.{name}": "test_producer" for name in (
        "crash-on-oversize", "empty-message-dropped", "error-code-unknown", "error-frame-cut", "error-length-prefixed",
        "oversize-buffered",
        "partition-key-ignored", "pipelined-answer-dropped", "produce-ack-body", "startup-signed-stream-id",
        "truncated-body-closes")},
    **{f"barco.{name}": "test_consumer" for name in (
        "connection-bind-ignored", "goodbye-keeps-consumer", "h2-reset-ends-connection", "h2c-one-stream",
        "missing-consumer-id-204", "poll-content-type-wrong", "record-cut-64k", "register-post-refused",
        "reregister-same-refused", "unknown-policy-accepted")},
    **{f"barco.{name}": "test_http" for name in (
        "consumer-status-404", "discovery-status-404", "http-bad-request-200", "http-empty-body-stored",
        "http-pipelining-dropped", "http-produce-not-stored", "not-found-400", "producer-http-status-404")},
    "barco.short-read-body": "test_robustness",
})

SCOPES.update({
    "pravega.ack-previous-wrong": "test_appends",
    "pravega.writer-read-size-closes": "test_robustness",
    "pravega.write-offset-before-append": "test_appends",
    "pravega.sealed-accepts-appends": "test_appends",
    "pravega.lower-event-number-acked": "test_appends",
    "pravega.conditional-offset-ignored": "test_appends",
    "pravega.partial-event-dropped": "test_appends",
    "pravega.read-tail-answered": "test_reads",
    "pravega.truncated-read-served": "test_reads",
    "pravega.no-such-segment-offset-lost": "test_reads",
    "pravega.hello-version-too-low": "test_framing",
    "pravega.unknown-type-error-frame": "test_framing",
    "pravega.error-request-id-zero": "test_framing",
    "pravega.keepalive-ignored": "test_framing",
    "pravega.oversize-waits": "test_framing",
    "pravega.sealed-append-offset-is-length": "test_appends",
    "pravega.standard-utf8-replies": "test_framing",
    "pravega.crash-on-huge-count": "test_framing",
    "pravega.table-version-not-bumped": "test_tables",
    "pravega.attribute-cas-ignored": "test_segments",
    "pravega.create-twice-ok": "test_segments",
    "pravega.ack-first-event-number": "test_appends",
    "pravega.num-events-unchecked": "test_appends",
    "pravega.conditional-event-type-unchecked": "test_appends",
    "pravega.writer-moved-unchecked": "test_appends",
    "pravega.padding-trailer-rejected": "test_appends",
    "pravega.resetup-returns-min": "test_appends",
    "pravega.setup-new-writer-zero": "test_appends",
    "pravega.setup-missing-closes": "test_appends",
    "pravega.standalone-size-checked": "test_appends",
    "pravega.event-headers-stripped": "test_appends",
    "pravega.transient-name-is-parent": "test_appends",
    "pravega.unset-writer-ignored": "test_appends",
    "pravega.max-payload-refused": "test_framing",
    "pravega.reply-type-ignored": "test_framing",
    "pravega.read-requires-request-id": "test_framing",
    "pravega.top-level-padding-closes": "test_framing",
    "pravega.split-frame-dropped": "test_framing",
    "pravega.pipelined-info-coalesced": "test_framing",
    "pravega.info-length-short": "test_framing",
    "pravega.trailing-bytes-close": "test_framing",
    "pravega.truncated-answered": "test_framing",
    "pravega.invalid-utf8-accepted": "test_framing",
    "pravega.hello-echoes-client-range": "test_framing",
    "pravega.incompatible-hello-stays-open": "test_framing",
    "pravega.hello-required": "test_framing",
    "pravega.beyond-sealed-read-served": "test_reads",
    "pravega.sealed-end-not-flagged": "test_reads",
    "pravega.read-skips-first-byte": "test_reads",
    "pravega.parked-read-ignores-seal": "test_reads",
    "pravega.suggested-length-unclamped": "test_reads",
    "pravega.created-sealed": "test_segments",
    "pravega.delete-keeps-segment": "test_segments",
    "pravega.info-start-offset-zero": "test_segments",
    "pravega.locate-offset-past-length": "test_segments",
    "pravega.merge-offset-before": "test_segments",
    "pravega.merge-batch-offset-before": "test_segments",
    "pravega.seal-missing-error-message": "test_segments",
    "pravega.policy-unsupported": "test_segments",
    "pravega.seal-twice-ok": "test_segments",
    "pravega.truncate-past-length-ok": "test_segments",
    "pravega.unset-attribute-zero": "test_segments",
    "pravega.table-conditional-partial": "test_tables",
    "pravega.table-create-twice-ok": "test_tables",
    "pravega.delete-table-ignores-must-be-empty": "test_tables",
    "pravega.delta-ignores-position": "test_tables",
    "pravega.table-info-count-zero": "test_tables",
    "pravega.iterate-token-first-key": "test_tables",
    "pravega.read-table-drops-missing": "test_tables",
    "pravega.remove-keys-ignored": "test_tables",
    "pravega.update-versions-reversed": "test_tables",
    "pravega.table-update-hangs": "test_robustness",
    "pravega.auth-failure-closes": "test_auth",
})

SCOPES.update({
    **{f"fluvio.{name}": "test_fetch" for name in (
        "fetch-at-end-is-beyond", "fetch-beyond-end-clamped", "fetch-isolation-any-nonzero", "fetch-max-bytes-ignored",
        "fetch-starts-one-early", "fetch-unknown-partition-3001")},
    **{f"fluvio.{name}": "test_framing" for name in (
        "fetch-offsets-overtaken", "partial-size-prefix", "response-size-u16", "zero-size-skipped", "utf8-lossy",
        "reads-serialised")},
    **{f"fluvio.{name}": "test_produce" for name in (
        "compression-recompressed", "empty-produce-base-is-leo", "read-committed-waits-timeout",
        "negative-timeout-accepted", "record-count-rewritten", "recordset-overrun-clamped", "schema-id-dropped",
        "too-large-records-only", "unknown-topic-not-found")},
    **{f"fluvio.{name}": "test_stream" for name in (
        "stream-blocks-connection", "stream-refusal-numbered", "stream-at-end-answers-empty")},
    **{f"fluvio.{name}": "test_versions" for name in ("apiversions-legacy-drops-stream-fetch", "platform-version-empty")},
    "fluvio.padded-varint-hangs": "test_robustness",
    "fluvio.stream-open-compression-wrong": "test_robustness",
    "fluvio.sc-body-length-waits": "test_sc",
})

# KIP-932 share groups: every fault's clause has its cases in one module
SCOPES.update({fault: "test_share_groups" for fault in EXPECTED.get("kafka", {}) if fault.startswith("kafka.share-")})

#: The SASL-enabled Kafka reference broker and the credentials the suite logs in with.
KAFKA_SASL_USERS = Path(__file__).resolve().parent / "kafka-sasl-users.txt"
KAFKA_SASL_ARGS = [f"--reference-arg=--kafka-sasl-users={KAFKA_SASL_USERS}",
                   "--target-option", "kafka.sasl=alice:alice-secret"]

#: fault -> more arguments for its suite run, where the fault lives in a feature the clean broker leaves off.
EXTRA_ARGS = {fault: KAFKA_SASL_ARGS for fault in SCOPES if fault.startswith("kafka.sasl-")}
#: The Pravega reference broker with auth on (a delegation token required) and the token the suite sends.
PRAVEGA_AUTH_ARGS = ["--reference-arg=--pravega-auth-token=quality-token",
                     "--target-option", "pravega.token=quality-token"]
EXTRA_ARGS["pravega.auth-failure-closes"] = PRAVEGA_AUTH_ARGS
#: the lock-expiry case waits out the acquisition lock only when it is short (Kafka's default is 30 s)
EXTRA_ARGS["kafka.share-lock-never-expires"] = ["--reference-arg=--kafka-share-lock-ms=1000"]
#: faults hidden behind a session state: the bulk fuzzer reaches them guided (strategies/guided.py), not blind
EXTRA_ARGS["pravega.writer-read-size-closes"] = ["--fuzz=guided"]
EXTRA_ARGS["kafka.txn-producer-malformed-answered"] = ["--fuzz=guided"]
EXTRA_ARGS["kafka.in-transaction-malformed-stalls"] = ["--fuzz=guided"]
EXTRA_ARGS["fluvio.stream-open-compression-wrong"] = ["--fuzz=guided"]

#: variant -> more arguments for its whole-suite run, where the variant lives in a feature the clean broker leaves off.
VARIANT_ARGS = {"pravega.read-auth-offset-as-request-id": PRAVEGA_AUTH_ARGS}
