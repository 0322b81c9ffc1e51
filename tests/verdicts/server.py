"""The vtoy server as its own process (so that it can die): ``python -m tests.verdicts.server --port P``.

--die-on WORD    exit at once (no answer) on the first request starting with WORD
--break-make     answer every MAKE with FAIL (only the setup step breaks)
--flaky-echo     answer every other ECHO wrongly (the first one wrong)
--silent-ping    leave PING (the hello) unanswered, and answer an unknown verb ERR instead of closing
Prints the bound port on its first line of stdout.
"""

from __future__ import annotations

import argparse
import os
import socketserver
import sys
import threading

from tests.verdicts.spec import U16_PREFIX, frame


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        server = self.server
        buffer = b""
        while True:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            buffer += chunk
            frames, used, _ = U16_PREFIX.split(buffer, max_body=0xFFFF)
            buffer = buffer[used:]
            for whole in frames:
                answer = server.answer(whole[2:].decode("ascii", "replace"))
                if answer is None:  # an empty frame or an unknown verb: close
                    return
                if answer:  # "" leaves the request unanswered
                    self.request.sendall(frame(answer))


class VtoyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, die_on: str | None, break_make: bool, flaky_echo: bool, silent_ping: bool = False):
        super().__init__(("127.0.0.1", port), Handler)
        self.die_on, self.break_make, self.flaky_echo = die_on, break_make, flaky_echo
        self.silent_ping = silent_ping
        self.made: set[str] = set()
        self.echoes = 0
        self.lock = threading.Lock()

    def answer(self, text: str) -> str | None:
        verb, _, rest = text.partition(" ")
        if self.die_on and verb == self.die_on:
            os._exit(3)
        with self.lock:
            if verb == "PING":
                return "" if self.silent_ping else "PONG"
            if verb == "MAKE":
                if self.break_make:
                    return "FAIL"
                self.made.add(rest)
                return f"MADE {rest}"
            if verb == "READ":
                return f"DATA {rest}" if rest in self.made else "NONE"
            if verb == "ECHO":
                self.echoes += 1
                return f"ECHX {rest}" if self.flaky_echo and self.echoes % 2 else text
        return "ERR" if self.silent_ping else None  # anything else: close


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--die-on")
    parser.add_argument("--break-make", action="store_true")
    parser.add_argument("--flaky-echo", action="store_true")
    parser.add_argument("--silent-ping", action="store_true")
    args = parser.parse_args()
    server = VtoyServer(args.port, args.die_on, args.break_make, args.flaky_echo, args.silent_ping)
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
