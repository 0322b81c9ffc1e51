"""Clauses only a passive capture check needs, which the protocols' catalogues do not (yet) have.

Kept here as data in the catalogue format; the lead may move them into ``protocols/<name>/clauses.py``.
Every other check reports a clause of the protocol's own catalogue.
"""

from protocols.clauses import Catalogue, Clause, Level

KAFKA = Catalogue("kafka", [
    Clause("kafka.capture.error-code-known",
           "Every ErrorCode a response carries is one of Kafka's defined error codes.",
           "Errors.java (the code table); protocol guide 'Error Codes'",
           decision="Which codes each API may return is prose in the message definitions' comments, not data, so "
                    "a passive check can only require a defined code (protocols.kafka.errors)."),
    Clause("kafka.capture.request-decodes",
           "Every request frame decodes strictly at the api key and version its header names.",
           "Kafka protocol guide, 'Requests'; the message definitions (validVersions)"),
    Clause("kafka.capture.version-advertised",
           "A request uses an api version inside the range the broker advertised on the connection.",
           "KIP-35 (ApiVersions); protocol guide 'Versioning and Compatibility'", Level.SHOULD,
           decision="Checked per connection: clients send ApiVersions first on every connection (KIP-511)."),
])

RUSTLOG = Catalogue("rustlog", [
    Clause("rustlog.capture.request-frame",
           "Every request is a u32 length then a UTF-8 JSON object with a string \"type\" naming a request.",
           "seed §JSON Payload Format, §Message Type Enumeration"),
])
