"""Barco's discovery endpoint (``--barco-port``, 9250, the primary): GET /v1/brokers announces the other
endpoints' ports, GET /status (notes §1).

A mixin of :class:`~wirecheck.broker.barco.server.BarcoPersonality`, which fills ``ports`` as its
listeners are bound.
"""

from __future__ import annotations

import json

from wirecheck.broker.barco.faults import BarcoFaults
from wirecheck.broker.barco.http import Request, Response


class Discovery:
    faults: BarcoFaults
    ports: dict[str | None, int]

    async def _discovery(self, request: Request) -> Response:
        if request.path == "/status":
            if self.faults.discovery_status_404:
                return Response(404, b"Not found")
            return Response(200, b"OK") if request.method == "GET" else Response(405, b"Method not allowed")
        if request.path == "/v1/brokers":
            if request.method != "GET":
                return Response(405, b"Method not allowed")
            doc = {"names": ["barco-0"], "length": 1, "producerPort": self.ports.get("producer-http"),
                   "producerBinaryPort": self.ports.get("producer"), "consumerPort": self.ports.get("consumer")}
            if self.faults.discovery_binary_port_missing:
                del doc["producerBinaryPort"]
            return Response(200, json.dumps(doc).encode(), content_type="application/json")
        return Response(404, b"Not found")
