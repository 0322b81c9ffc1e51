"""What a Kafka answer that does not decode at the version asked is instead, and the clause that owns that.

An answer with the wrong response header version (KIP-482; always v0 for ApiVersions, KIP-511) or with another
version's body breaks a clause of its own, and so does an answer that is no response at all to a request the target
may refuse (a refusal closes the connection, INVALID_REQUEST (42) first allowed), whichever case meets it: the suite's
client and the bulk classifier raise that clause, so a case about something else is BLOCKED by it, not FAILED
(ARCHITECTURE.md, "The isolation rule"). Pure: no I/O.
"""

from __future__ import annotations

from wirecheck.protocols.kafka import errors, messages

HEADER_CLAUSES = frozenset({"kafka.header.response-v1-flexible", "kafka.header.api-versions-v0"})
SHAPE_CLAUSE = "kafka.encoding.response-shape"
REFUSAL_CLAUSE = "kafka.encoding.malformed-body"


def _decodes(api_key: int, version: int, frame: bytes, header_version: int | None = None) -> bool:
    try:
        messages.decode_response(api_key, version, frame, header_version)
    except messages.DecodeError:
        return False
    return True


def clause_of(api_key: int, version: int, frame: bytes, refusable: bool = False) -> str | None:
    """For an answer that does not decode at (``api_key``, ``version``): a header clause when it decodes with the
    other response header version, the response-shape clause when it decodes as another version of the API's
    response. When it is no response of this API at all: the refusal clause if the target may refuse the request
    (``refusable``: its body need not decode), else None."""
    if _decodes(api_key, version, frame, 1 - messages.response_header_version(api_key, version)):
        return "kafka.header.api-versions-v0" if api_key == messages.API_VERSIONS else \
            "kafka.header.response-v1-flexible"
    if any(_decodes(api_key, other, frame) for other in messages.encodable_versions(api_key) if other != version):
        return SHAPE_CLAUSE
    return REFUSAL_CLAUSE if refusable else None


def header_misread(api_key: int, version: int, frame: bytes) -> str | None:
    """For an answer that decodes at the version asked with an error code: the header clause when it also decodes
    under the other response header version, as a success (every ErrorCode NONE). A header without its
    tagged-field byte shifts the body by one, which a body of fixed-size fields may survive, read as an error
    (ErrorCode 253 or 123 for 0); a correct answer that also decodes shifted, as a success, is not met in practice
    (the shifted bytes would have to end exactly where the frame ends)."""
    other = 1 - messages.response_header_version(api_key, version)
    try:
        decoded = messages.decode_response(api_key, version, frame, other)
    except messages.DecodeError:
        return None
    if errors.error_codes(decoded["body"]) - {errors.NONE}:
        return None
    return "kafka.header.api-versions-v0" if api_key == messages.API_VERSIONS else "kafka.header.response-v1-flexible"
