"""The controller's gRPC listener (grpc.aio, in the broker's event loop), bound to the broker's host."""

from __future__ import annotations

import logging

import grpc

from wirecheck.broker.pravega.controller import controller_pb2_grpc as pb_grpc
from wirecheck.broker.pravega.controller.persist import MetadataFile
from wirecheck.broker.pravega.controller.service import ControllerService
from wirecheck.broker.pravega.controller.store_link import WireSegmentStore

DEFAULT_PORT = 9090  # Pravega's controller port

log = logging.getLogger("wirecheck.broker.pravega.controller")


class CallLog(grpc.aio.ServerInterceptor):
    """Logs each call's method at DEBUG: which calls a client makes is what an interop failure asks first."""

    async def intercept_service(self, continuation, handler_call_details):
        log.debug("call %s", handler_call_details.method.rsplit("/", 1)[-1])
        return await continuation(handler_call_details)


class ControllerServer:
    """Serves ControllerService for the segment store at ``host:store_port``."""

    def __init__(self, host: str, store_port: int, state: MetadataFile | None = None):
        self.host = host
        self.state = state
        self.store = WireSegmentStore(host, store_port)
        self.store_port = store_port
        self.port: int | None = None
        self._server: grpc.aio.Server | None = None

    async def start(self, port: int) -> int:
        """Listen on ``port`` (0: ephemeral) and return the port bound."""
        self._server = grpc.aio.server(interceptors=[CallLog()])
        self.port = self._server.add_insecure_port(f"{self.host}:{port}")
        if self.port == 0:
            raise OSError(f"cannot bind the controller to {self.host}:{port}")
        service = ControllerService(self.store, self.host, self.store_port, (self.host, self.port), self.state)
        pb_grpc.add_ControllerServiceServicer_to_server(service, self._server)
        await self._server.start()
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(grace=1.0)
            self._server = None
        await self.store.close()
