"""The segment store personality with its controller: the controller starts once the store is bound (it must
know the store's port to hand it out in getURI) and stops with the store."""

from __future__ import annotations

import logging

from typing import TYPE_CHECKING

from wirecheck.broker.pravega.controller.persist import MetadataFile
from wirecheck.broker.pravega.server import PravegaPersonality

if TYPE_CHECKING:
    from wirecheck.broker.pravega.controller.server import ControllerServer

log = logging.getLogger("wirecheck.broker.pravega.controller")

LISTENER_NAME = "pravega-controller"  # its key in the broker's ready file


class PravegaWithController(PravegaPersonality):
    def __init__(self, config, options):
        super().__init__(config, options)
        self.host = config.host
        self.tls = config.tls is not None
        self.data_dir = config.data_dir  # the controller's metadata is kept beside the store's journal
        self.fsync = config.fsync == "batch"
        self.controller: ControllerServer | None = None

    async def start_side_listeners(self, main_port: int, ephemeral: bool) -> dict[str, int]:
        port = self.options.controller_port
        if port is not None and port < 0:
            return {}
        try:  # gRPC is the broker extra's: a plain `pip install wirecheck` serves the segment store alone
            from wirecheck.broker.pravega.controller.server import DEFAULT_PORT, ControllerServer
        except ImportError as missing:
            log.warning("pravega: no controller: %s (pip install 'wirecheck[broker]')", missing)
            return {}
        if port is None:
            port = 0 if ephemeral else DEFAULT_PORT
        if self.tls:
            # The controller speaks plaintext gRPC and reaches the store in plaintext: not with a TLS broker.
            log.warning("pravega: no controller with --tls-cert (the controller has no TLS)")
            return {}
        state = None if self.data_dir is None else MetadataFile(self.data_dir / "pravega", self.fsync)
        self.controller = ControllerServer(self.host, main_port, state)
        return {LISTENER_NAME: await self.controller.start(port)}

    async def close(self) -> None:
        if self.controller is not None:
            await self.controller.stop()
        await super().close()
