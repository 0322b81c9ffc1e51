"""What the Pravega suite must report when the reference broker runs with each of its faults.

Namespaced fault name (``--fault``, ``--reference-fault``) -> the clause the suite reports FAILED. The faults
themselves are the broker's (targets/reference/pravega/faults.py); tests/quality checks that both lists agree
and that the suite catches each fault naming this clause.
"""

FAULTS: dict[str, str] = {
    "pravega.ack-previous-wrong": "pravega.append.ack-previous",
    "pravega.write-offset-before-append": "pravega.append.write-offset",
    "pravega.read-tail-answered": "pravega.read.long-poll",
    "pravega.sealed-accepts-appends": "pravega.append.sealed",
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
}
