"""The HTTP endpoints: discovery (section 6), HTTP producer (section 3)."""

from __future__ import annotations

import json
import time
from urllib.parse import unquote_to_bytes, urlsplit

from . import defects
from .binary import ProduceError, parse_messages
from .http_transport import App, Request, Response, text
from .storage import MAX_MESSAGE_SIZE, Store, valid_topic

FRAMES_TYPES = ("application/vnd.polar.producer.frames", "application/vnd.barco.producer.frames")


class Ports:
    """The real (possibly ephemeral) ports, filled in once every listener is bound."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.discovery = 0
        self.producer_http = 0
        self.consumer = 0
        self.producer_binary = 0


class DiscoveryApp(App):
    max_body = 16 * 1024

    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    async def handle(self, req: Request) -> Response:
        if req.path == "/status":
            if req.method not in ("GET", "HEAD"):
                return text(405, "Method not allowed")
            return text(200, f"Discovery server listening on {self.ports.discovery}")
        if req.path == "/v1/brokers":
            if req.method not in ("GET", "HEAD"):
                return text(405, "Method not allowed")
            doc = {
                "length": 1,
                "names": [self.ports.host],
                "producerPort": self.ports.producer_http,
                "producerBinaryPort": self.ports.producer_binary,
                "consumerPort": self.ports.consumer,
            }
            if defects.on("discovery-missing-binary-port"):
                del doc["producerBinaryPort"]
            return Response(200, json.dumps(doc).encode(), "application/json")
        return text(404, "Not found")


def media_type(req: Request) -> str:
    return req.headers.get("content-type", "").split(";", 1)[0].strip().lower()


SIZE_MESSAGE = (
    "Content length must be defined (HTTP/1.1 chunked not supported), greater than 0 and less than "
    f"{MAX_MESSAGE_SIZE} bytes"
)


def split_records(content_type: str, body: bytes) -> list[bytes]:
    if content_type == "application/x-ndjson":
        if defects.on("http-producer-ndjson-one-record"):
            return [body]
        lines = []
        for line in body.split(b"\n"):
            if line.endswith(b"\r"):
                line = line[:-1]
            if line:
                lines.append(line)
        return lines
    if content_type in FRAMES_TYPES:
        return parse_messages(body)
    return [body]


class ProducerHttpApp(App):
    allow_h2 = False  # HTTP/1.1 only (section 1)
    max_body = MAX_MESSAGE_SIZE

    def __init__(self, store: Store, ports: Ports) -> None:
        self.store = store
        self.ports = ports
        if defects.on("http-producer-ignores-size-limit"):
            self.max_body = 4 * MAX_MESSAGE_SIZE

    @staticmethod
    def _topic(req: Request) -> bytes | None:
        """The topic segment of /v1/topic/<topic>/messages, split BEFORE percent-decoding."""
        raw_path = urlsplit(req.target).path
        parts = raw_path.split("/")
        # ['', 'v1', 'topic', '<topic>', 'messages']
        if len(parts) == 5 and parts[:3] == ["", "v1", "topic"] and parts[4] == "messages":
            return unquote_to_bytes(parts[3])
        return None

    def precheck(self, req: Request) -> Response | None:
        if self._topic(req) is None or req.method != "POST":
            return None
        if "transfer-encoding" in req.headers:
            return text(400, SIZE_MESSAGE)
        raw = req.headers.get("content-length", "").strip()
        if not raw.isdigit():
            return text(400, SIZE_MESSAGE)
        length = int(raw)
        limit = self.max_body if defects.on("http-producer-ignores-size-limit") else MAX_MESSAGE_SIZE
        if length <= 0 or length > limit:
            return text(400, SIZE_MESSAGE)
        return None

    async def handle(self, req: Request) -> Response:
        if req.path == "/status":
            return text(200, f"Producer server listening on {self.ports.producer_http}")
        topic = self._topic(req)
        if topic is None:
            return text(404, "Not found")
        if req.method == "GET":
            return text(405, "Producer server doesn't allow getting topic messages")
        if req.method != "POST":
            return text(405, "Method not allowed")
        early = self.precheck(req)
        if early is not None:
            return early
        if not valid_topic(topic):
            return text(400, "Invalid topic")
        timestamp = None
        raw_ts = req.arg("timestamp")
        if raw_ts is not None:
            try:
                timestamp = int(raw_ts)
            except ValueError:
                return text(400, "Invalid timestamp")
            if not -(1 << 63) <= timestamp < (1 << 63):
                return text(400, "Invalid timestamp")
        key = (req.arg("partitionKey") or "").encode("utf-8")
        try:
            records = split_records(media_type(req), req.body)
        except ProduceError as exc:
            return text(400, str(exc))
        if not records:
            return text(400, "The body contains no messages")
        existed = bool(self.store.readers_of(topic.decode("utf-8")))
        self.store.append(topic.decode("utf-8"), key, records, timestamp)
        if existed and defects.on("http-producer-existing-topic-204"):
            return Response(204, b"", None)
        return Response(200, b"OK", "text/html; charset=utf-8")


def now_micros() -> int:
    return time.time_ns() // 1000
