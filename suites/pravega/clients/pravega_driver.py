"""The real ``pravega`` Python client, driven by a job on stdin: ``python -m
wirecheck.suites.pravega.clients.pravega_driver``.

Job: ``{"action", "controller": "tcp://HOST:PORT", "scope", "stream", ...}`` with action one of

- ``write-read`` (``keyless``: events without a routing key, ``keyed``: {routing key: events}, ``text``: one
  event written as a string; events base64; ``group``): a two-segment stream written by one writer (keyed events
  interleaved across keys), then read through a new reader group's one reader until every event came;
- ``byte-stream`` (``data`` base64, ``chunk``, ``from``, ``length``): a one-segment stream written as a byte
  stream in chunks, its tail offset, then read back from the start, and ``length`` bytes from ``from``;
- ``stream-lifecycle``: scope and stream created twice each, an event written, the stream sealed, an event
  written after the seal, the stream and the scope deleted.

Output: one JSON line of what the client observed (judged by the case), its errors as text. The client holds the
GIL while it waits on the server, so a blocked call cannot be timed out from inside: before each call that can
block the driver prints a ``{"waiting_for": ...}`` line, and the case's time limit stops it; the last such line
says what never came. Reads are asyncio calls and have a limit of their own.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from importlib import metadata

VERSION = metadata.version("pravega")
READ_SECONDS = 20.0  # the case's limit is longer: a reader that gives up says what it waited for


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode()


def raw(text: str) -> bytes:
    return base64.b64decode(text)


def waiting(what: str, **seen) -> None:
    print(json.dumps({"waiting_for": what, **seen}), flush=True)


def attempt(call):
    """(the call's result, None) or (None, the client's error)."""
    try:
        return call(), None
    except Exception as exc:  # noqa: BLE001 - the client's errors are what the case judges
        return None, f"{type(exc).__name__}: {exc}"


def manager(job: dict):
    import pravega_client

    waiting(f"the controller at {job['controller']}")
    made = pravega_client.StreamManager(job["controller"])
    waiting(f"the creation of scope {job['scope']} and stream {job['stream']}")
    return made


def write_read(job: dict) -> dict:
    streams = manager(job)
    scope, stream = job["scope"], job["stream"]
    created = [streams.create_scope(scope), streams.create_stream(scope, stream, 2)]
    writer = streams.create_writer(scope, stream)
    keyed = {key: [raw(e) for e in events] for key, events in job["keyed"].items()}
    waiting("the writer's appends")
    for event in job["keyless"]:
        writer.write_event_bytes(raw(event))
    for i in range(max(map(len, keyed.values()))):  # the keys' events interleaved
        for key, events in keyed.items():
            if i < len(events):
                writer.write_event_bytes(events[i], key)
    writer.write_event(job["text"])
    waiting("the writer's flush")
    writer.flush()
    count = len(job["keyless"]) + sum(map(len, keyed.values())) + 1
    waiting(f"the creation of reader group {job['group']}")
    group = streams.create_reader_group(job["group"], scope, stream)
    reader = group.create_reader("reader-0")
    events: list[bytes] = []

    async def collect() -> None:
        async with asyncio.timeout(READ_SECONDS):
            while len(events) < count:
                waiting(f"event {len(events) + 1} of {count} through the reader group", read=len(events))
                segment_slice = await reader.get_segment_slice_async()
                events.extend(bytes(event.data()) for event in segment_slice)
                reader.release_segment(segment_slice)

    try:
        asyncio.run(collect())
    except TimeoutError:
        return {"waiting_for": f"event {len(events) + 1} of {count} through the reader group after "
                               f"{READ_SECONDS:.0f} s", "created": created, "read": [b64(e) for e in events]}
    finally:
        reader.reader_offline()
    return {"created": created, "read": [b64(e) for e in events]}


def byte_stream(job: dict) -> dict:
    streams = manager(job)
    scope, stream = job["scope"], job["stream"]
    created = [streams.create_scope(scope), streams.create_stream(scope, stream, 1)]  # a byte stream: one segment
    data, chunk = raw(job["data"]), job["chunk"]
    byte_stream_ = streams.create_byte_stream(scope, stream)
    waiting("the byte stream's writes")
    for start in range(0, len(data), chunk):
        byte_stream_.write(data[start:start + chunk])
    waiting("the byte stream's flush")
    byte_stream_.flush()
    tail = byte_stream_.current_tail_offset()
    byte_stream_.seek(0, 0)
    received = bytearray()
    buffer = bytearray(4096)
    while len(received) < len(data):
        waiting(f"bytes from offset {len(received)} of {len(data)}")
        n = byte_stream_.readinto(buffer)
        if n <= 0:
            break
        received += buffer[:n]
    byte_stream_.seek(job["from"], 0)
    part = bytearray(job["length"])
    waiting(f"{job['length']} bytes from offset {job['from']}")
    n = byte_stream_.readinto(part)
    return {"created": created, "tail": tail, "read": b64(received), "part": b64(part[:max(n, 0)])}


def stream_lifecycle(job: dict) -> dict:
    streams = manager(job)
    scope, stream = job["scope"], job["stream"]
    seen: dict = {"scope_created": [streams.create_scope(scope), streams.create_scope(scope)],
                  "stream_created": [streams.create_stream(scope, stream, 2), streams.create_stream(scope, stream, 2)]}
    writer = streams.create_writer(scope, stream)
    waiting("an event written and flushed", **seen)
    seen["written"] = attempt(lambda: (writer.write_event("before the seal"), writer.flush()))[1]
    waiting("the seal", **seen)
    seen["sealed"] = streams.seal_stream(scope, stream)
    waiting("an event written after the seal", **seen)
    seen["written_after_seal"] = attempt(lambda: (writer.write_event("after the seal"), writer.flush()))[1]
    waiting("the deletion of the stream and the scope", **seen)
    seen["deleted"] = [streams.delete_stream(scope, stream), streams.delete_scope(scope)]
    return seen


ACTIONS = {"write-read": write_read, "byte-stream": byte_stream, "stream-lifecycle": stream_lifecycle}


def main() -> int:
    job = json.loads(sys.stdin.read())
    result = ACTIONS[job["action"]](job)
    print(json.dumps({"client": "pravega-python", "version": VERSION, **result}), flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # the binding's runtime threads still hold Python thread states while the interpreter finalizes, and one that
    # releases its state then aborts the process ("PyGILState_Release: thread state ... must be current", seen
    # under load after the result was printed): the result is written, so the process ends without finalizing
    os._exit(code)
