"""What the Pravega suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (broker/pravega/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

FAULTS: dict[str, str] = {
    "pravega.ack-previous-wrong": "pravega.append.ack-previous",
    "pravega.write-offset-before-append": "pravega.append.write-offset",
    "pravega.read-tail-answered": "pravega.read.long-poll",
    "pravega.sealed-accepts-appends": "pravega.append.sealed",
    "pravega.sealed-append-offset-is-length": "pravega.append.sealed",
    "pravega.hello-version-too-low": "pravega.hello.versions",
    "pravega.unknown-type-error-frame": "pravega.framing.unknown-type",
    "pravega.table-version-not-bumped": "pravega.table.version-bump",
    "pravega.error-request-id-zero": "pravega.request-id.echo",
    "pravega.truncated-read-served": "pravega.read.truncated",
    "pravega.lower-event-number-acked": "pravega.append.event-number-lower",
    "pravega.conditional-offset-ignored": "pravega.append.conditional",
    "pravega.attribute-cas-ignored": "pravega.attribute.cas",
    "pravega.create-twice-ok": "pravega.segment.create-exists",
    "pravega.keepalive-ignored": "pravega.keepalive.echo",
    "pravega.oversize-waits": "pravega.framing.oversize",
    "pravega.partial-event-dropped": "pravega.append.partial-event",
    "pravega.standard-utf8-replies": "pravega.strings.modified-utf8",
    "pravega.crash-on-huge-count": "pravega.robustness.survives",
    "pravega.no-such-segment-offset-lost": "pravega.read.no-such-segment",
    "pravega.ack-first-event-number": "pravega.append.ack",
    "pravega.num-events-unchecked": "pravega.append.block-rules",
    "pravega.conditional-event-type-unchecked": "pravega.append.conditional-event-type",
    "pravega.writer-moved-unchecked": "pravega.append.invalid-event-number",
    "pravega.padding-trailer-rejected": "pravega.append.padding",
    "pravega.resetup-returns-min": "pravega.append.resetup",
    "pravega.setup-new-writer-zero": "pravega.append.setup",
    "pravega.setup-missing-closes": "pravega.append.setup-no-segment",
    "pravega.standalone-size-checked": "pravega.append.standalone-block-end",
    "pravega.event-headers-stripped": "pravega.append.stored-verbatim",
    "pravega.transient-name-is-parent": "pravega.append.transient",
    "pravega.unset-writer-ignored": "pravega.append.without-setup",
    "pravega.max-payload-refused": "pravega.framing.max-payload",
    "pravega.reply-type-ignored": "pravega.framing.not-a-request",
    "pravega.read-requires-request-id": "pravega.framing.optional-fields",
    "pravega.top-level-padding-closes": "pravega.framing.padding",
    "pravega.split-frame-dropped": "pravega.framing.partial",
    "pravega.pipelined-info-coalesced": "pravega.framing.pipelined",
    "pravega.info-length-short": "pravega.framing.reply",
    "pravega.trailing-bytes-close": "pravega.framing.trailing-bytes",
    "pravega.truncated-answered": "pravega.framing.truncated",
    "pravega.invalid-utf8-accepted": "pravega.strings.invalid",
    "pravega.hello-echoes-client-range": "pravega.hello.reply",
    "pravega.incompatible-hello-stays-open": "pravega.hello.incompatible",
    "pravega.hello-required": "pravega.hello.not-required",
    "pravega.beyond-sealed-read-served": "pravega.read.beyond-sealed",
    "pravega.sealed-end-not-flagged": "pravega.read.end-of-segment",
    "pravega.read-skips-first-byte": "pravega.read.in-range",
    "pravega.parked-read-ignores-seal": "pravega.read.long-poll-sealed",
    "pravega.suggested-length-unclamped": "pravega.read.suggested-length",
    "pravega.writer-read-size-closes": "pravega.read.suggested-length",
    "pravega.created-sealed": "pravega.segment.create",
    "pravega.delete-keeps-segment": "pravega.segment.delete",
    "pravega.info-start-offset-zero": "pravega.segment.info",
    "pravega.locate-offset-past-length": "pravega.segment.locate-offset",
    "pravega.merge-offset-before": "pravega.segment.merge",
    "pravega.merge-batch-offset-before": "pravega.segment.merge-batch",
    "pravega.seal-missing-error-message": "pravega.segment.no-such-segment",
    "pravega.policy-unsupported": "pravega.segment.policy",
    "pravega.seal-twice-ok": "pravega.segment.seal",
    "pravega.truncate-past-length-ok": "pravega.segment.truncate",
    "pravega.unset-attribute-zero": "pravega.attribute.unset",
    "pravega.table-conditional-partial": "pravega.table.conditional",
    "pravega.table-create-twice-ok": "pravega.table.create",
    "pravega.delete-table-ignores-must-be-empty": "pravega.table.delete",
    "pravega.delta-ignores-position": "pravega.table.delta",
    "pravega.table-info-count-zero": "pravega.table.info",
    "pravega.iterate-token-first-key": "pravega.table.iterate",
    "pravega.read-table-drops-missing": "pravega.table.read",
    "pravega.remove-keys-ignored": "pravega.table.remove",
    "pravega.update-versions-reversed": "pravega.table.update",
    "pravega.table-update-hangs": "pravega.robustness.no-hang",
    "pravega.auth-failure-closes": "pravega.auth.token-rejected",
}


#: reference-broker variant -> the clause whose other permitted reading it takes (the whole suite passes against it)
VARIANTS: dict[str, str] = {
    "pravega.equal-event-number-closes": "pravega.append.event-number-equal",
    "pravega.beyond-sealed-closes": "pravega.read.beyond-sealed",
    "pravega.read-auth-offset-as-request-id": "pravega.auth.token-rejected",
    "pravega.short-reads": "pravega.read.in-range",
    "pravega.negative-truncate-closes": "pravega.segment.truncate",
    "pravega.table-info-count-converges": "pravega.table.info",
    "pravega.negative-conditional-appends": "pravega.append.conditional",
}


#: reference-broker safety fault -> the anomalies of ``wirecheck safety pravega`` (reports/safety/checker.py) that show it,
#: any one of which catches it; only a history of many clients' operations under faults shows them, so they stay out
#: of FAULTS (the suites' self-validation) and are proven by tests/safety.
SAFETY_FAULTS: dict[str, tuple[str, ...]] = {
    "pravega.safety-unsynced-tail-lost": ("unseen", "inconsistent-offsets"),
}
