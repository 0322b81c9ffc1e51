"""Barco clients learn the producer and consumer ports from discovery (GET /v1/brokers on the primary port, notes
§6) and connect there: behind a proxy, that answer must name ports of the proxy, or clients bypass it.

Decision: the proxy rewrites the answer (rather than the target announcing the proxy's ports), so the same proxy
stands in front of the reference broker and any user's target. Each port the document announces is replaced by
the port of a listener the proxy opens in front of it (FaultProxy.forward: the same faults on every port); the body
is re-encoded and its Content-Length fixed. Only a connection that sends nothing but GET requests is parsed (a
discovery client's); on any other (a producer's POST, a consumer's PUT, HTTP/2's preface) every byte passes
unchanged from its first request on. A chunked or otherwise unreadable answer passes unchanged too: the client then
meets what the target sent.
"""

from __future__ import annotations

import json
from collections import deque

DISCOVERY_PATH = b"/v1/brokers"
PORT_KEYS = ("producerPort", "producerBinaryPort", "consumerPort")
MAX_HEAD = 65536


class BarcoAddressRewriter:
    """One connection's rewriter (FaultProxy's ``rewriter`` factory makes one per connection)."""

    def __init__(self, target: tuple[str, int], proxy):
        self.target, self.proxy = target, proxy  # proxy: targets.safety.proxy.ProxyAddress (has forward())
        self._requests = bytearray()
        self._responses = bytearray()
        self._asked: deque[bool] = deque()  # per request in order: was it GET /v1/brokers
        self.passthrough = False

    def request(self, chunk: bytes) -> bytes:
        if self.passthrough:
            return chunk
        self._requests += chunk
        while not self.passthrough:
            end = self._requests.find(b"\r\n\r\n")
            if end < 0:
                self.passthrough = len(self._requests) > MAX_HEAD
                break
            line = bytes(self._requests[:end]).split(b"\r\n", 1)[0].split(b" ")
            if len(line) != 3 or line[0] != b"GET":
                self.passthrough = True  # not a discovery client's connection
                break
            self._asked.append(line[1].split(b"?", 1)[0] == DISCOVERY_PATH)
            del self._requests[:end + 4]
        return chunk

    def response(self, chunk: bytes) -> bytes:
        if self.passthrough and not self._asked:
            if self._responses:
                chunk, self._responses = bytes(self._responses) + chunk, bytearray()
            return chunk
        self._responses += chunk
        out = bytearray()
        while self._responses:
            end = self._responses.find(b"\r\n\r\n")
            if end < 0:
                break
            length = _content_length(bytes(self._responses[:end]))
            if length is None:  # chunked, or no length: pass the rest of the connection unchanged
                out += self._responses
                self._responses.clear()
                self._asked.clear()
                self.passthrough = True
                break
            whole = end + 4 + length
            if len(self._responses) < whole:
                break
            head, body = bytes(self._responses[:end]), bytes(self._responses[end + 4:whole])
            del self._responses[:whole]
            asked = self._asked.popleft() if self._asked else False
            out += self._rewrite(head, body) if asked else head + b"\r\n\r\n" + body
        return bytes(out)

    def _rewrite(self, head: bytes, body: bytes) -> bytes:
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return head + b"\r\n\r\n" + body
        if not isinstance(doc, dict):
            return head + b"\r\n\r\n" + body
        for key in PORT_KEYS:
            port = doc.get(key)
            if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
                doc[key] = self.proxy.forward((self.target[0], port))[1]
        new_body = json.dumps(doc).encode()
        lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"content-length:")]
        lines.append(b"content-length: %d" % len(new_body))
        return b"\r\n".join(lines) + b"\r\n\r\n" + new_body


def _content_length(head: bytes) -> int | None:
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"transfer-encoding":
            return None
        if name == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
    status = head.split(b" ", 2)[1:2]
    if length is None and status and status[0] in (b"204", b"304"):
        return 0
    return length
