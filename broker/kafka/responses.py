"""The answers' framing: size prefix, response header and body, the error answers the variants give, and
ApiVersions, whose answers follow their own header rules (KIP-511)."""

from __future__ import annotations

import re
import struct

from wirecheck.broker.kafka.api_keys import ApiKey
from wirecheck.broker.kafka.codec import Message
from wirecheck.broker.kafka.errors import INVALID_REQUEST, UNSUPPORTED_VERSION
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.features import features_fields

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")  # ApiVersionsRequest.isValid (KIP-511)


class ResponseFrames:
    """A mixin of the personality (server.py): encodes answers with its codecs, advertised ranges and faults."""

    faults: KafkaFaults
    responses: dict[int, Message]
    ranges: dict[int, tuple[int, int]]

    def _error_answer(self, key: int, version: int, correlation_id: int, code: int) -> bytes | None:
        """An answer with a top-level ErrorCode ``code`` at ``version``, every other field at its default; None
        when the API has no such field at that version (a variant then closes, as Kafka does)."""
        if key not in self.responses or key not in self.ranges:
            return None
        low, high = self.ranges[key]
        msg = self.responses[key]
        if not low <= version <= high or msg.encode({}, version) == msg.encode({"ErrorCode": code}, version):
            return None  # an unadvertised version (not compiled), or no top-level ErrorCode to carry the code
        return self._frame(key, version, correlation_id, {"ErrorCode": code})

    def _frame(self, key: int, version: int, correlation_id: int, response: dict) -> bytes:
        body_version = version
        if key == ApiKey.FETCH and version < 4:
            body_version = 4  # advertise-unimplemented: Fetch v3 answered in the v4 layout
        if key == ApiKey.METADATA and version == 13 and self.faults.metadata_v13_as_v12:
            body_version = 12  # fault: no top-level ErrorCode
        msg = self.responses[key]
        out = bytearray(4)
        out += struct.pack(">i", correlation_id)
        # Response header v1 (tagged fields) for flexible versions, except ApiVersions: always v0 (KIP-511).
        if msg.is_flexible(version) and not self.faults.flexible_header_v1 and (
                key != ApiKey.API_VERSIONS or self.faults.apiversions_header_v1):  # fault: ApiVersions v3+ too
            out.append(0)
        body_start = len(out)
        msg.encode(response, body_version, out)
        if key == ApiKey.METADATA and version == 5 and self.faults.throttle_missing_metadata_v5:
            del out[body_start:body_start + 4]  # ThrottleTimeMs is Metadata v3+'s first field
        struct.pack_into(">i", out, 0, len(out) - 4)
        return bytes(out)

    def api_versions(self, req: dict, version: int) -> dict:
        valid = _SOFTWARE.fullmatch(req["ClientSoftwareName"]) and _SOFTWARE.fullmatch(req["ClientSoftwareVersion"]) \
            if version >= 3 else True
        if not valid and not self.faults.software_name_unchecked:
            return {"ErrorCode": INVALID_REQUEST, "ThrottleTimeMs": 0, "ApiKeys": []}  # ApiVersionsRequest.isValid
        own_low = self._own_range()[0]
        return {"ErrorCode": 0, "ThrottleTimeMs": 0,
                "ApiKeys": [{"ApiKey": k, "MinVersion": own_low if k == ApiKey.API_VERSIONS else low,
                             "MaxVersion": high} for k, (low, high) in sorted(self.ranges.items())],
                **features_fields(version)}  # KIP-584 feature levels (features.py)

    def _own_range(self) -> tuple[int, int]:
        low, high = self.ranges[ApiKey.API_VERSIONS]
        return (1 if self.faults.apiversions_listed_from_one else low), high  # fault: v0 served, listed from 1

    def _unsupported_api_versions(self, correlation_id: int, version: int) -> bytes:
        """KIP-511: error 35 in a v0 body, listing ApiVersions' own range, so the client can pick a version."""
        low, high = self._own_range()
        body = {"ErrorCode": UNSUPPORTED_VERSION, "ApiKeys": [{"ApiKey": ApiKey.API_VERSIONS, "MinVersion": low,
                                                               "MaxVersion": high}]}
        encode_version = 0
        if self.faults.apiversions_unsupported_not_v0:
            encode_version = high  # fault: encoded at our highest (flexible) version instead of v0
        out = bytearray(4) + struct.pack(">i", correlation_id)
        self.responses[ApiKey.API_VERSIONS].encode(body, encode_version, out)
        if self.faults.apiversions_unsupported_trailing_tags:
            out.append(0)  # fault: an empty tagged-field section after a v0 (non-flexible) body
        struct.pack_into(">i", out, 0, len(out) - 4)
        return bytes(out)
