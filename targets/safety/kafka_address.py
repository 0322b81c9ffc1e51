"""Kafka clients learn broker addresses from Metadata and FindCoordinator answers and connect there: behind a proxy,
those answers must name the proxy, or clients bypass it after their first request.

Decision: the proxy rewrites them (rather than the target advertising the proxy's port), so the same proxy stands
in front of the reference broker, Apache Kafka and any user's target without reconfiguring it. The requests are
read only for their api key, version and correlation id; the answers to Metadata (3) and FindCoordinator (10) are
decoded with the suite's codec (protocols/kafka/messages.py), every Host/Port equal to the target's replaced by the
proxy's, and re-encoded. Every other byte passes unchanged. An answer that does not decode passes unchanged too:
the client then meets what the target sent.
"""

from __future__ import annotations

import struct

from wirecheck.protocols.kafka import messages

METADATA, FIND_COORDINATOR = 3, 10


class KafkaAddressRewriter:
    """One connection's rewriter (FaultProxy's ``rewriter`` factory makes one per connection)."""

    def __init__(self, target: tuple[str, int], proxy: tuple[str, int]):
        self.target, self.proxy = target, proxy
        self._requests = bytearray()
        self._responses = bytearray()
        self._pending: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)

    def request(self, chunk: bytes) -> bytes:
        self._requests += chunk
        while len(self._requests) >= 4:
            size = struct.unpack_from(">i", self._requests)[0]
            if size < 8 or len(self._requests) < 4 + size:
                if size < 8:
                    self._requests.clear()  # not Kafka framing: nothing more to learn from this stream
                break
            key, version, correlation = struct.unpack_from(">hhi", self._requests, 4)
            if key in (METADATA, FIND_COORDINATOR):
                self._pending[correlation] = (key, version)
            del self._requests[:4 + size]
        return chunk

    def response(self, chunk: bytes) -> bytes:
        self._responses += chunk
        out = bytearray()
        while len(self._responses) >= 8:
            size = struct.unpack_from(">i", self._responses)[0]
            if size < 4:
                out += self._responses  # not Kafka framing: pass what there is
                self._responses.clear()
                break
            if len(self._responses) < 4 + size:
                break
            frame = bytes(self._responses[:4 + size])
            del self._responses[:4 + size]
            correlation = struct.unpack_from(">i", frame, 4)[0]
            asked = self._pending.pop(correlation, None)
            out += self._rewrite(frame, *asked) if asked else frame
        return bytes(out)

    def _rewrite(self, frame: bytes, key: int, version: int) -> bytes:
        try:
            decoded = messages.decode_response(key, version, frame)
        except (ValueError, KeyError):
            return frame
        body = decoded["body"]
        entries = body.get("Brokers", []) if key == METADATA else [body, *body.get("Coordinators", [])]
        for entry in entries:
            if entry.get("Port") == self.target[1] and entry.get("Host") in (self.target[0], "localhost"):
                entry["Host"], entry["Port"] = self.proxy
        return messages.encode_response(key, version, decoded["header"]["CorrelationId"], body)
