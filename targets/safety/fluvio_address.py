"""Fluvio clients start at the SC, which names each SPU's public endpoint in its SPU objects (Watch and List
answers, fluvio-sc-schema); the client then connects to that SPU for produce and fetch. Behind the fault proxy those
answers must name the proxy, or the data path bypasses it.

Decision: the proxy rewrites them (rather than the SC advertising the proxy), so the same proxy stands in front of
the reference broker and any user's SC. On the SC connection the requests are read only for their api key, version
and correlation id; a Watch or List answer whose object is ``SPU`` is decoded with the suite's codec
(protocols/fluvio/sc.py), each SPU's public endpoint (ingress address and port, and the local one when given)
replaced by a proxy listener in front of it (FaultProxy.forward: the same faults as the SC's), and re-encoded.
Watch answers stream under one correlation id, so a Watch stays known for the connection's life. Every other byte
passes unchanged, and so does an answer that does not decode: the client then meets what the target sent.
"""

from __future__ import annotations

import struct

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import sc

REWRITTEN = (sc.WATCH, sc.LIST)


class FluvioAddressRewriter:
    """One SC connection's rewriter (FaultProxy's ``rewriter`` factory makes one per connection)."""

    def __init__(self, target: tuple[str, int], proxy):
        self.target, self.proxy = target, proxy  # proxy: targets.safety.proxy.ProxyAddress (has forward())
        self._requests = bytearray()
        self._responses = bytearray()
        self._asked: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
        self._framed = True  # False once a stream is not Fluvio framing: everything passes from there on

    def request(self, chunk: bytes) -> bytes:
        if not self._framed:
            return chunk
        self._requests += chunk
        while len(self._requests) >= 4:
            size = struct.unpack_from(">i", self._requests)[0]
            if size < 8:
                self._framed = False
                break
            if len(self._requests) < 4 + size:
                break
            key, version, correlation = struct.unpack_from(">hhi", self._requests, 4)
            if key in REWRITTEN:
                self._asked[correlation] = (key, version)
            del self._requests[:4 + size]
        return chunk

    def response(self, chunk: bytes) -> bytes:
        if not self._framed:
            return chunk
        self._responses += chunk
        out = bytearray()
        while len(self._responses) >= 4:
            size = struct.unpack_from(">i", self._responses)[0]
            if size < 4:
                self._framed = False
                break
            if len(self._responses) < 4 + size:
                break
            frame = bytes(self._responses[:4 + size])
            del self._responses[:4 + size]
            correlation = struct.unpack_from(">i", frame, 4)[0]
            asked = self._asked.get(correlation)
            if asked is not None and asked[0] == sc.LIST:
                del self._asked[correlation]  # a List is answered once; a Watch streams
            out += self._rewrite(frame, *asked) if asked else frame
        if not self._framed:
            out += self._responses
            self._responses.clear()
        return bytes(out)

    def _rewrite(self, frame: bytes, key: int, version: int) -> bytes:
        try:
            label, inner = sc.decode_object(key, version, frame[8:])
        except DecodeError:
            return frame
        if label != sc.SPU:
            return frame
        items = list(inner.get("all", [])) + [item for _kind, item in inner.get("changes", [])]
        items += inner.get("inner", [])
        for item in items:
            self._redirect(item["spec"])
        codec = sc.metadata_update(label) if key == sc.WATCH else sc.list_response(label)
        body = bytearray()
        codec.write(body, inner, version)
        answer = bytearray(frame[4:8])
        sc.OBJECT.write(answer, {"label": label, "body": bytes(body)}, version)
        return struct.pack(">i", len(answer)) + bytes(answer)

    def _redirect(self, spec: dict) -> None:
        public = spec["public_endpoint"]
        for address in public["ingress"]:
            host = address.get("ip") or address.get("hostname") or "localhost"
            proxied = self.proxy.forward((host, public["port"]))
            address["ip"], address["hostname"] = None, proxied[0]
        if public["ingress"]:
            public["port"] = proxied[1]
        local = spec.get("public_endpoint_local")
        if local is not None:
            local["host"], local["port"] = self.proxy.forward((local["host"], local["port"]))
