"""Pravega clients start at the controller (gRPC over HTTP/2), which names the segment store of each segment
(``getURI``: a NodeUri) and the controllers (``getControllerServerList``); the client then connects there. Behind
the fault proxy those answers must name the proxy, or the data path bypasses it.

Decision: the proxy rewrites them (rather than the controller advertising the proxy), so the same proxy stands in
front of the reference broker and any user's controller. On the controller connection the client's HTTP/2 frames
are read only for each stream's ``:path`` (HEADERS and CONTINUATION blocks through one HPACK decoder, as the
server's; every block, so its dynamic table stays in step); the server's DATA frames of a getURI or
getControllerServerList stream are held until a whole gRPC message has come, whose NodeUris (``endpoint`` 1,
``port`` 2; upstream's controller.proto) are replaced by proxy listeners in front of them (FaultProxy.forward: the
same faults) and sent on as one DATA frame. Flow control counts DATA bytes: a message that got shorter is padded
back to its size (a PADDED frame), so both ends' windows agree; one that got longer (a longer host name) leaves the
server a few bytes of window more. Anything that does not parse (no HTTP/2 preface, a compressed message, a header
block HPACK refuses) makes the connection pass every byte unchanged from there on: the client then meets what the
target sent.
"""

from __future__ import annotations

import struct

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, CONTINUATION = 0x0, 0x1, 0x9
END_STREAM, END_HEADERS, PADDED, PRIORITY = 0x1, 0x4, 0x8, 0x20
#: ControllerService methods whose answers name servers: getURI answers a NodeUri, getControllerServerList a
#: ServerResponse{repeated NodeUri nodeURI = 1}
NODE_URI, SERVER_LIST = "/getURI", "/getControllerServerList"
FRAME = struct.Struct(">BHBBI")  # 24-bit length as u8 + u16, type, flags, stream id


class Unparsed(Exception):
    """A stream this rewriter does not follow: the connection passes through from here on."""


def _frames(buffer: bytearray):
    """Whole frames taken off the front of ``buffer``: (type, flags, stream, payload)."""
    while len(buffer) >= 9:
        high, low, kind, flags, stream = FRAME.unpack_from(buffer)
        length = high << 16 | low
        if len(buffer) < 9 + length:
            return
        payload = bytes(buffer[9:9 + length])
        del buffer[:9 + length]
        yield kind, flags, stream & 0x7FFFFFFF, payload


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return FRAME.pack(len(payload) >> 16, len(payload) & 0xFFFF, kind, flags, stream) + payload


def _unpadded(flags: int, payload: bytes) -> bytes:
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise Unparsed("bad padding")
    return payload[1:len(payload) - payload[0]]


# ---------------------------------------------------------------------------------------------- protobuf, by hand


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise Unparsed("truncated varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7


def _put_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """(field number, wire type, value): varints as ints, length-delimited as bytes; other types refused."""
    fields, at = [], 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(data, at)
            fields.append((number, wire, value))
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise Unparsed("truncated field")
            fields.append((number, wire, data[at:at + size]))
            at += size
        else:
            raise Unparsed(f"wire type {wire}")
    return fields


def _encode(fields: list[tuple[int, int, bytes | int]]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += _put_varint(number << 3 | wire)
        if isinstance(value, int):
            out += _put_varint(value)
        else:
            out += _put_varint(len(value)) + value
    return bytes(out)


# ---------------------------------------------------------------------------------------------- the rewriter


class PravegaAddressRewriter:
    """One controller connection's rewriter (FaultProxy's ``rewriter`` factory makes one per connection)."""

    def __init__(self, target: tuple[str, int], proxy):
        self.target, self.proxy = target, proxy  # proxy: targets.safety.proxy.ProxyAddress (has forward())
        self._requests = bytearray()
        self._responses = bytearray()
        self._preface = True  # the client's preface not yet seen whole
        self._decoder = hpack.Decoder()
        self._decoder.max_allowed_table_size = 1 << 20
        self._block: tuple[int, bytearray] | None = None  # a header block awaiting its CONTINUATION frames
        self._rewritten: dict[int, str] = {}  # stream -> the method (NODE_URI, SERVER_LIST) whose answer it carries
        self._held: dict[int, bytearray] = {}  # such a stream's DATA bytes not yet a whole message
        self._held_size: dict[int, int] = {}  # the flow-controlled bytes of those frames (padding included)
        self.passthrough = False

    def request(self, chunk: bytes) -> bytes:
        if self.passthrough:
            return chunk
        self._requests += chunk
        try:
            if self._preface:
                if len(self._requests) < len(PREFACE):
                    if not PREFACE.startswith(bytes(self._requests)):
                        raise Unparsed("no HTTP/2 preface")
                    return chunk
                if not self._requests.startswith(PREFACE):
                    raise Unparsed("no HTTP/2 preface")
                del self._requests[:len(PREFACE)]
                self._preface = False
            for kind, flags, stream, payload in _frames(self._requests):
                if kind == HEADERS:
                    fragment = _unpadded(flags, payload)[5 if flags & PRIORITY else 0:]
                    self._block = (stream, bytearray(fragment))
                elif kind == CONTINUATION and self._block is not None:
                    self._block[1].extend(payload)
                else:
                    continue
                if flags & END_HEADERS and self._block is not None:
                    stream, block = self._block
                    self._block = None
                    path = str(dict(self._decoder.decode(bytes(block))).get(":path", ""))
                    method = next((m for m in (NODE_URI, SERVER_LIST) if path.endswith(m)), None)
                    if method is not None:
                        self._rewritten[stream] = method
        except (Unparsed, hpack.HPACKError):
            self._pass()
        return chunk

    def response(self, chunk: bytes) -> bytes:
        if self.passthrough:
            return chunk
        self._responses += chunk
        out = bytearray()
        try:
            for kind, flags, stream, payload in _frames(self._responses):
                if kind != DATA or stream not in self._rewritten:
                    if kind == HEADERS and flags & END_STREAM:
                        self._forget(stream)  # trailers only: the answer carried no message
                    out += _frame(kind, flags, stream, payload)
                    continue
                try:
                    out += self._data(flags, stream, payload)
                except Unparsed:  # this frame is not in what was held: it follows it unchanged
                    out += self._flush_held() + _frame(kind, flags, stream, payload)
                    raise
        except Unparsed:
            self._pass()
            out += self._responses
            self._responses.clear()
        return bytes(out)

    def _data(self, flags: int, stream: int, payload: bytes) -> bytes:
        """The frames to send for one DATA frame of a rewritten stream (none while a message is incomplete). Nothing
        is changed before Unparsed is raised: the caller then sends what was held and this frame as they came."""
        held = self._held.get(stream, b"") + _unpadded(flags, payload)
        owed = self._held_size.get(stream, 0) + len(payload)
        if not held and flags & END_STREAM:
            self._forget(stream)
            return _frame(DATA, flags, stream, payload)
        size = struct.unpack_from(">BI", held)[1] if len(held) >= 5 else None
        if size is None or len(held) < 5 + size:
            if flags & END_STREAM:
                raise Unparsed("a gRPC message cut short by the end of its stream")
            self._held[stream], self._held_size[stream] = bytearray(held), owed
            return b""
        if held[0]:
            raise Unparsed("a compressed gRPC message")
        message = self._rewrite(stream, bytes(held[5:5 + size]))
        body = struct.pack(">BI", 0, len(message)) + message + bytes(held[5 + size:])
        self._held.pop(stream, None)
        self._held_size.pop(stream, None)
        if flags & END_STREAM:
            self._forget(stream)
        return self._sized(flags & END_STREAM, stream, body, owed)

    @staticmethod
    def _sized(flags: int, stream: int, body: bytes, owed: int) -> bytes:
        """One DATA frame of ``body``, padded to ``owed`` flow-controlled bytes when it is shorter."""
        if len(body) >= owed:
            return _frame(DATA, flags, stream, body)
        pad = owed - len(body) - 1
        return _frame(DATA, flags | PADDED, stream, bytes([pad]) + body + bytes(pad))

    def _rewrite(self, stream: int, message: bytes) -> bytes:
        if self._rewritten[stream] == SERVER_LIST:
            return _encode([(n, w, self._node(_fields(v)) if n == 1 and isinstance(v, bytes) else v)
                            for n, w, v in _fields(message)])
        return self._node(_fields(message))

    def _node(self, fields: list) -> bytes:
        """A NodeUri{endpoint 1, port 2} naming a proxy listener in front of the server it named."""
        host = next((v.decode() for n, w, v in fields if n == 1 and isinstance(v, bytes)), self.target[0])
        port = next((v for n, w, v in fields if n == 2 and isinstance(v, int)), None)
        if port is None:
            return _encode(fields)
        proxied = self.proxy.forward((host, port))
        kept = [(n, w, v) for n, w, v in fields if n not in (1, 2)]
        return _encode([(1, 2, proxied[0].encode()), (2, 0, proxied[1]), *kept])

    def _forget(self, stream: int) -> None:
        self._rewritten.pop(stream, None)
        self._held.pop(stream, None)
        self._held_size.pop(stream, None)

    def _flush_held(self) -> bytes:
        """What was held back, unchanged (the connection stops being rewritten)."""
        out = b"".join(_frame(DATA, 0, stream, bytes(held)) for stream, held in self._held.items())
        self._held.clear()
        self._held_size.clear()
        return out

    def _pass(self) -> None:
        self.passthrough = True
        self._requests.clear()
