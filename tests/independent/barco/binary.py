"""Binary producer protocol (section 2): 13-byte framed requests and responses over raw TCP."""

from __future__ import annotations

import asyncio
import logging
import struct
import zlib
from dataclasses import dataclass

from . import defects
from .storage import MAX_MESSAGE_SIZE, Store, valid_topic

log = logging.getLogger("barco.binary")

HEADER = struct.Struct(">BBHBII")  # version, flags, stream id, opcode, body length, head crc
HEADER_SIZE = HEADER.size  # 13
VERSION = 1
FLAG_WITH_TIMESTAMP = 0x01

OP_STARTUP = 1
OP_READY = 2
OP_ERROR = 3
OP_PRODUCE = 4
OP_PRODUCE_RESPONSE = 5
OP_HEARTBEAT = 6

ERR_SERVER = 0
ERR_ROUTING = 1
ERR_LEADER_NOT_FOUND = 2

# largest body we accept: timestamp + key + topic + MaxMessageSize of messages part
MAX_BODY = 8 + 1 + 255 + 1 + 255 + MAX_MESSAGE_SIZE
MAX_ERROR_MESSAGE = 500  # keeps error bodies <= 512 bytes (section 2.5)
MID_FRAME_TIMEOUT = 10.0  # a frame that has started must be finished within this time
DISCARD_CHUNK = 64 * 1024
MAX_DISCARD = 64 * 1024 * 1024  # oversized bodies up to this size are skipped; beyond it we close


def header_crc(first9: bytes) -> int:
    return zlib.crc32(first9) & 0xFFFFFFFF


def encode_frame(stream_id: int, opcode: int, body: bytes = b"") -> bytes:
    """A response frame: version 1, flags 0, echoed stream id, valid IEEE CRC (section 2.5)."""
    version = 0 if defects.on("response-version-zero") else VERSION
    flags = 0x80 if defects.on("response-flags-set") else 0
    if defects.on("stream-id-not-echoed"):
        stream_id = (stream_id + 1) & 0xFFFF
    first9 = struct.pack(">BBHBI", version, flags, stream_id, opcode, len(body))
    crc = header_crc(first9)
    if defects.on("bad-response-crc"):
        crc ^= 1
    return first9 + struct.pack(">I", crc) + body


def encode_error(stream_id: int, code: int, message: str) -> bytes:
    text = message.encode("utf-8")[:MAX_ERROR_MESSAGE]
    if defects.on("error-body-length-prefix"):
        text = struct.pack(">H", len(text)) + text
    return encode_frame(stream_id, OP_ERROR, bytes([code]) + text)


class ProduceError(Exception):
    pass


@dataclass
class ProduceRequest:
    timestamp: int | None
    key: bytes
    topic: str
    messages: list[bytes]


def parse_messages(part: bytes) -> list[bytes]:
    """``{u32 len}{bytes}`` repeated; the lengths must add up to the part exactly."""
    messages = []
    pos = 0
    while pos < len(part):
        if len(part) - pos < 4:
            raise ProduceError("Invalid message framing: trailing bytes after the last message")
        (length,) = struct.unpack_from(">I", part, pos)
        pos += 4
        if length > len(part) - pos:
            raise ProduceError("Invalid message framing: message length exceeds the body")
        messages.append(part[pos : pos + length])
        pos += length
    return messages


def parse_produce(flags: int, body: bytes) -> ProduceRequest:
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        if len(body) - pos < n:
            raise ProduceError("EOF")
        piece = body[pos : pos + n]
        pos += n
        return piece

    timestamp = None
    if flags & FLAG_WITH_TIMESTAMP:
        timestamp = struct.unpack(">q", take(8))[0]
    key = take(take(1)[0])
    topic = take(take(1)[0])
    if not valid_topic(topic):
        raise ProduceError("Invalid topic")
    part = body[pos:]
    if len(part) > MAX_MESSAGE_SIZE:
        raise ProduceError(f"Messages part larger than {MAX_MESSAGE_SIZE} bytes")
    messages = parse_messages(part)
    if not messages:
        raise ProduceError("Produce request must contain at least one message")
    return ProduceRequest(timestamp, key, topic.decode("utf-8"), messages)


class BinaryProducerServer:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass
        except Exception:  # never let one connection take the server down
            log.exception("binary producer connection failed")
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except Exception:
                pass

    async def _read_header(self, reader: asyncio.StreamReader) -> bytes | None:
        first = await reader.read(1)  # waiting for a new frame: no timeout
        if not first:
            return None
        rest = await asyncio.wait_for(reader.readexactly(HEADER_SIZE - 1), MID_FRAME_TIMEOUT)
        return first + rest

    async def _discard(self, reader: asyncio.StreamReader, n: int) -> None:
        while n > 0:
            piece = await asyncio.wait_for(reader.read(min(n, DISCARD_CHUNK)), MID_FRAME_TIMEOUT)
            if not piece:
                raise asyncio.IncompleteReadError(b"", n)
            n -= len(piece)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started = False
        while True:
            header = await self._read_header(reader)
            if header is None:
                return
            version, flags, stream_id, opcode, body_length, crc = HEADER.unpack(header)
            if header_crc(header[:9]) != crc:
                return  # bad head CRC: close without a response
            if version != VERSION:
                writer.write(encode_error(stream_id, ERR_SERVER, f"Unsupported protocol version {version}"))
                await writer.drain()
                return
            if body_length > MAX_BODY:
                # answer at once, then skip the body so the frame boundary is kept
                writer.write(encode_error(stream_id, ERR_SERVER, f"Body length {body_length} exceeds {MAX_BODY} bytes"))
                await writer.drain()
                if not started or body_length > MAX_DISCARD:
                    return
                await self._discard(reader, body_length)
                continue
            body = await asyncio.wait_for(reader.readexactly(body_length), MID_FRAME_TIMEOUT)

            if not started:
                if opcode == OP_STARTUP:
                    started = True
                    writer.write(encode_frame(stream_id, OP_READY))
                    await writer.drain()
                    continue
                if not defects.on("no-startup-required"):
                    code = ERR_LEADER_NOT_FOUND if defects.on("first-frame-wrong-error-code") else ERR_SERVER
                    writer.write(encode_error(stream_id, code, "Invalid first message"))
                    await writer.drain()
                    return
                started = True  # defect: carry on as if STARTUP had been sent

            if opcode == OP_PRODUCE:
                writer.write(self._produce(stream_id, flags, body))
            elif opcode == OP_HEARTBEAT:
                reply_op = OP_PRODUCE_RESPONSE if defects.on("heartbeat-wrong-opcode") else OP_READY
                writer.write(encode_frame(stream_id, reply_op))
            else:
                writer.write(encode_error(stream_id, ERR_SERVER, "Only producer operations are supported"))
            await writer.drain()

    def _produce(self, stream_id: int, flags: int, body: bytes) -> bytes:
        try:
            request = parse_produce(flags, body)
        except ProduceError as exc:
            return encode_error(stream_id, ERR_SERVER, str(exc))
        messages = request.messages
        if defects.on("produce-drops-last-message") and len(messages) >= 2:
            messages = messages[:-1]
        timestamp = request.timestamp
        if defects.on("produce-ignores-timestamp"):
            timestamp = None
        self.store.append(request.topic, request.key, messages, timestamp)
        return encode_frame(stream_id, OP_PRODUCE_RESPONSE)
