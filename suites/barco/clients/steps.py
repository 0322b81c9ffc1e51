"""A Barco client scenario as a list of HTTP steps, run by any HTTP client (curl, httpx): one scenario, written
once, whichever client sends its requests. The runner only sends and records; the case judges the answers.

Steps (JSON): ``{"op": "produce", "topic", "body" (base64), "content_type", "key"?}``, ``{"op": "register",
"consumer", "group", "topic"}``, ``{"op": "poll", "consumer", "accept"?, "until"?}`` (``until``: poll again
until that many records came, or some came and then nothing more in a few polls, or the runner's time ran out),
``{"op": "commit" | "goodbye", "consumer"}``.

Result: ``{"steps": [{"op", "answers": [{"status", "http_version" ("1.1" or "2"), "content_type", "body"
(base64)} or {"error"}]}]}``, and ``waiting_for`` when the time ran out before a step ended.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from wirecheck.protocols.barco import wire

POLL_PAUSE = 0.1  # between polls that brought too few records (the reference broker answers at once)
SETTLED = 3  # empty polls in a row, after some records came, that end the wait: the reader is at its end


@dataclass(frozen=True)
class Answer:
    status: int
    http_version: str  # "1.1" or "2"
    content_type: str
    body: bytes

    def as_json(self) -> dict:
        return {"status": self.status, "http_version": self.http_version, "content_type": self.content_type,
                "body": base64.b64encode(self.body).decode()}


#: (endpoint "producer" | "consumer", method, path with query, headers, body) -> the answer; raises OSError (or
#: any exception) when the client got none
Send = Callable[[str, str, str, dict, bytes | None], Answer]


def request_of(step: dict) -> tuple[str, str, str, dict, bytes | None]:
    """The HTTP request of one step (a poll's, each time)."""
    op = step["op"]
    if op == "produce":
        query = f"?{urlencode({'partitionKey': step['key']})}" if step.get("key") else ""
        return ("producer", "POST", f"/v1/topic/{quote(step['topic'])}/messages{query}",
                {"content-type": step["content_type"]}, base64.b64decode(step["body"]))
    consumer = urlencode({"consumerId": step["consumer"]})
    if op == "register":
        query = urlencode({"consumerId": step["consumer"], "group": step["group"], "topic": step["topic"],
                           "onNewGroup": "startFromEarliest"})
        return "consumer", "PUT", f"/v1/consumer/register?{query}", {}, None
    if op == "poll":
        return "consumer", "POST", f"/v1/consumer/poll?{consumer}", (
            {"accept": step["accept"]} if step.get("accept") else {}), None
    return "consumer", "POST", f"/v1/consumer/{op}?{consumer}", {}, None


def record_count(answer: Answer) -> int:
    """How many records a poll answer brought, to know when to stop polling (0 for anything not understood: the
    case says what is wrong with it)."""
    if answer.status != 200:
        return 0
    try:
        if answer.content_type.startswith("application/json"):
            return sum(len(item.get("values", [])) for item in json.loads(answer.body))
        return sum(len(item.records()) for item in wire.parse_poll_response(answer.body))
    except (ValueError, TypeError, AttributeError, wire.WireError):
        return 0


def run_steps(steps: list[dict], send: Send, seconds: float) -> dict:
    deadline = time.monotonic() + seconds
    done: list[dict] = []
    for step in steps:
        answers: list[dict] = []
        done.append({"op": step["op"], "answers": answers})
        got = empty = 0
        while True:
            try:
                answer = send(*request_of(step))
            except Exception as exc:  # noqa: BLE001  (any failure of the client is the observation)
                answers.append({"error": f"{type(exc).__name__}: {exc}"})
                return {"steps": done}
            answers.append(answer.as_json())
            count = record_count(answer)
            got, empty = got + count, (0 if count else empty + 1)
            if "until" not in step or got >= step["until"] or (got and empty >= SETTLED):
                break
            if time.monotonic() > deadline:
                return {"steps": done, "waiting_for": f"{step['until']} records from the polls of consumer "
                                                      f"{step['consumer']} ({got} came in {len(answers)} polls)"}
            time.sleep(POLL_PAUSE)
    return {"steps": done}
