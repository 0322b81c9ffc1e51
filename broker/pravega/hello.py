"""The connection's own commands: Hello (version ranges, notes §6) and KeepAlive."""

from __future__ import annotations

import struct

from wirecheck.broker.pravega.codes import HELLO, KEEP_ALIVE, OLDEST_COMPATIBLE, WIRE_VERSION
from wirecheck.broker.pravega.connection import Close, ConnectionState
from wirecheck.broker.pravega.family import CommandFamily
from wirecheck.broker.pravega.wire import Reader


class HelloCommands(CommandFamily):
    def hello(self, state: ConnectionState, r: Reader):
        high, low = r.i32(), r.i32()
        state.greeted = True
        mine = (4, 4) if self.faults.hello_version_too_low else (WIRE_VERSION, OLDEST_COMPATIBLE)
        if self.faults.hello_echoes_client_range:
            mine = (high, low)
        reply = self.writer().i32(mine[0]).i32(mine[1]).frame(HELLO)
        if (low > WIRE_VERSION or high < OLDEST_COMPATIBLE) and not self.faults.incompatible_hello_stays_open:
            return Close(reply)
        return reply

    def keep_alive(self, state: ConnectionState, r: Reader):
        if self.faults.keepalive_ignored:
            return None
        return struct.pack(">ii", KEEP_ALIVE, 0)
