"""RustLog broker: a maximum-size Produce and Fetch allocate at most about 2x MAX_FRAME, and durable storage holds
no more than its cache however much is stored (tracemalloc).

The broker runs in this process (a thread), so the client side is kept allocation-free during the measurement:
the request is encoded beforehand and the response is read into a preallocated buffer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import tracemalloc

from tests.broker.rustlog_support import MAX_FRAME, ThreadBroker, create_topic, fetch, payloads_of, produce

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


def test_durable_memory_is_bounded_by_the_cache_not_by_the_data(tmp_path):
    """30 MiB through a 1 MiB batch cache, written, restarted and read back: the broker keeps the batch index and
    the cache, never the records (a hash stands in for them on the client side, so the client holds nothing)."""
    cache, batches, batch = 1 << 20, 300, [bytes([i]) * 1024 for i in range(100)]  # 100 KiB a batch
    config = dict(data_dir=tmp_path, cache_bytes=cache, fsync="none")
    expected = hashlib.sha256(b"".join(batch) * batches).hexdigest()
    tracemalloc.start()
    try:
        with ThreadBroker(**config) as broker, broker.client() as client:
            create_topic(client, "m")
            baseline = tracemalloc.get_traced_memory()[0]
            for _ in range(batches):
                assert produce(client, "m", batch)["type"] == "ProduceResponse"
            written = tracemalloc.get_traced_memory()[0] - baseline
        with ThreadBroker(**config) as broker, broker.client() as client:
            baseline = tracemalloc.get_traced_memory()[0]
            digest, offset = hashlib.sha256(), 0
            while offset < batches * len(batch):
                response = fetch(client, "m", offset, max_bytes=1 << 20)
                for payload in payloads_of(response):
                    digest.update(payload)
                offset = response["next_offset"]
                del response
            read = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert digest.hexdigest() == expected
    assert written <= cache + SLACK, written  # 30 MiB stored
    assert read <= cache + SLACK, read
