"""Barco's HTTP producer (``--barco-producer-http-port``, 9251): POST /v1/topic/:topic/messages, GET /status
(notes §3). Decision D8 (chunked bodies) is the suite's (protocols/barco/clauses.py).

A mixin of :class:`~wirecheck.broker.barco.server.BarcoPersonality`, which provides ``ports`` and
``_store``.
"""

from __future__ import annotations

from wirecheck.broker.barco import codec
from wirecheck.broker.barco.faults import BarcoFaults, BarcoVariants
from wirecheck.broker.barco.http import Request, Response
from wirecheck.broker.barco.store import StoreFull


class HttpProducer:
    faults: BarcoFaults
    variants: BarcoVariants
    ports: dict[str | None, int]

    async def _producer_http(self, request: Request) -> Response:
        if request.path == "/status" and not self.faults.producer_http_status_404:
            port = self.ports.get("producer-http")
            return Response(200, f"Producer server listening on {port}".encode())
        parts = request.path.split("/")
        if len(parts) < 5 or parts[:3] != ["", "v1", "topic"] or parts[-1] != "messages":
            return Response(404, b"Not found")
        if len(parts) > 5 and self.variants.router_decodes_path:
            return Response(404, b"Not found")  # /v1/topic/a/b/messages: no route (the topic was a%2Fb)
        topic = "/".join(parts[3:-1]).encode()
        if request.method == "GET":
            if self.faults.http_get_allowed:
                return Response(200, b"OK")
            return Response(405, b"Producer server doesn't allow getting topic messages")
        if request.method != "POST":
            return Response(405, b"Method not allowed")
        if codec.topic_problem(topic, notes_rule_only=self.variants.topic_any_bytes):
            return Response(400, b"Invalid topic")
        empty_taken = not request.body and self.faults.http_empty_body_stored
        chunked_refused = request.chunked and not self.variants.http_chunked_accepted  # D8 permits both
        if chunked_refused or not (empty_taken or 0 < len(request.body) <= codec.MAX_MESSAGE):
            return Response(400, b"Content length must be defined (HTTP/1.1 chunked not supported), greater than 0 "
                                 b"and less than 1048576 bytes")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "application/x-ndjson" and not self.faults.ndjson_one_record:
            messages = [line.rstrip(b"\r") for line in request.body.split(b"\n") if line.rstrip(b"\r")]
        elif kind == "application/vnd.polar.producer.frames":
            try:
                messages = codec.split_framed(memoryview(request.body))
            except codec.Malformed as exc:  # the variant: 422, the content understood but not processable
                status = 422 if self.variants.frames_invalid_422 else 400
                return Response(status, f"Invalid frames: {exc}".encode())
        else:
            messages = [request.body]
        if not messages:
            return Response(400, b"No messages")
        if self.faults.http_produce_not_stored:
            return Response(200, b"OK", content_type="text/html; charset=utf-8")
        try:
            self._store(topic, (request.param("partitionKey") or "").encode(), messages)
        except StoreFull:
            return Response(500, b"Internal server error")
        return Response(200, b"OK", content_type="text/html; charset=utf-8")
