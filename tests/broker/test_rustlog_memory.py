"""RustLog broker: a maximum-size Produce and Fetch allocate at most about 2x MAX_FRAME (tracemalloc).

The broker runs in this process (a thread), so the client side is kept allocation-free during the measurement:
the request is encoded beforehand and the response is read into a preallocated buffer.
"""

from __future__ import annotations

import base64
import json
import struct
import tracemalloc

from tests.broker.rustlog_support import MAX_FRAME, ThreadBroker, create_topic

MAX_RECORD = 7_864_000
SLACK = 1 << 20  # interpreter noise: small objects, the event loop, tracemalloc's own bookkeeping


def receive_into(sock, buffer: bytearray) -> int:
    view, got = memoryview(buffer), 0
    while got < 4 or got < 4 + struct.unpack_from(">I", buffer)[0]:
        n = sock.recv_into(view[got:])
        assert n, "closed"
        got += n
    return got


def test_largest_produce_and_fetch_stay_near_twice_the_frame():
    record = b"\x07" * MAX_RECORD
    with ThreadBroker() as broker, broker.client() as client:
        create_topic(client, "m")
        request = json.dumps({"type": "Produce", "topic": "m", "partition": 0,
                              "records": [base64.b64encode(record).decode()]}).encode()
        request = struct.pack(">I", len(request)) + request
        fetch = json.dumps({"type": "Fetch", "group_id": "", "topic": "m", "partition": 0, "offset": 0,
                            "max_bytes": 2**63}).encode()
        fetch = struct.pack(">I", len(fetch)) + fetch
        buffer = bytearray(MAX_FRAME + 8)
        del record
        tracemalloc.start()
        try:
            baseline = tracemalloc.get_traced_memory()[0]
            client.sock.sendall(request)
            receive_into(client.sock, buffer)
            stored = tracemalloc.get_traced_memory()[0] - baseline  # the record now held by the log
            produce_peak = tracemalloc.get_traced_memory()[1] - baseline
            tracemalloc.reset_peak()
            before_fetch = tracemalloc.get_traced_memory()[0]
            client.sock.sendall(fetch)
            size = receive_into(client.sock, buffer)
            fetch_peak = tracemalloc.get_traced_memory()[1] - before_fetch
        finally:
            tracemalloc.stop()
        assert json.loads(buffer[4:size])["next_offset"] == 1
        assert stored >= MAX_RECORD
        assert produce_peak - stored <= 2 * MAX_FRAME + SLACK, (produce_peak, stored)
        assert fetch_peak <= 2 * MAX_FRAME + SLACK, fetch_peak
