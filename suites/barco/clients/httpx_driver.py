"""httpx, driven by a job on stdin: ``python -m wirecheck.suites.barco.clients.httpx_driver``.

Job: ``{"producer": URL, "consumer": URL, "steps": [...], "seconds": N}`` (the steps of steps.py). The producer
is spoken to over HTTP/1.1 (its only protocol, notes §1), the consumer API over HTTP/2 with prior knowledge, one
connection per endpoint for the whole job, as an application holding a client would. Output: one JSON line, the
steps' answers (steps.py) with httpx's version.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata

import httpx
from wirecheck.suites.barco.clients.steps import Answer, run_steps

REQUEST_SECONDS = 10.0


def main() -> None:
    job = json.loads(sys.stdin.read())
    clients = {"producer": httpx.Client(base_url=job["producer"], timeout=REQUEST_SECONDS),
               # http1=False: HTTP/2 with prior knowledge on a plain-text URL
               "consumer": httpx.Client(base_url=job["consumer"], http1=False, http2=True, timeout=REQUEST_SECONDS)}

    def send(endpoint: str, method: str, path: str, headers: dict, body: bytes | None) -> Answer:
        reply = clients[endpoint].request(method, path, headers=headers, content=body)
        return Answer(reply.status_code, reply.http_version.removeprefix("HTTP/"),
                      reply.headers.get("content-type", ""), reply.content)

    try:
        result = run_steps(job["steps"], send, job["seconds"])
    finally:
        for client in clients.values():
            client.close()
    print(json.dumps({"client": "httpx", "version": metadata.version("httpx"), **result}), flush=True)


if __name__ == "__main__":
    main()
