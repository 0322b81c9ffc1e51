"""Fetch answers per second of the reference broker's RustLog personality, the broker's side only.

In process, no socket: the personality's Fetch handler is called directly, so the number is what building answers
costs (reading the log, base64, JSON), not a client's decoding. A partition of ``--records`` records of
``--record-size`` bytes (Produce batches of 1000) is read from offset 0 to the end in Fetches of ``--max-bytes``,
``--passes`` times, in memory and with ``--data-dir`` (``--fsync none``; the default 32 MiB cache holds it all at
the default size, so this is the cached path).

    python bench/rustlog_fetch_rate.py [--records 200000] [--record-size 100] [--max-bytes 4194304] [--passes 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402

from wirecheck.broker.core import BrokerConfig  # noqa: E402
from wirecheck.broker.rustlog import create  # noqa: E402

BATCH = 1000


def next_offset(answer) -> int:
    """The answer's next_offset: the number after its last colon (the wrapper ends with it)."""
    return int(answer[bytes(answer).rfind(b":") + 1:-1])


async def measure(data_dir: Path | None, args) -> float:
    personality = create(BrokerConfig(data_dir=data_dir, fsync="none"))
    try:
        await personality.create_topic("bench", 1)
        rng = random.Random(31)
        records = [base64.b64encode(rng.randbytes(args.record_size)).decode() for _ in range(BATCH)]
        for _ in range(0, args.records, BATCH):
            await personality.produce("bench", 0, records)
        started, fetched = time.perf_counter(), 0
        for _ in range(args.passes):
            offset = 0
            while offset < args.records:
                following = next_offset(await personality.fetch("g", "bench", 0, offset, args.max_bytes))
                fetched += following - offset
                offset = following
        return fetched / (time.perf_counter() - started)
    finally:
        personality.store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000, help="a multiple of 1000 (default 200000)")
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--max-bytes", type=int, default=4 << 20)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    print(machine_info())
    print("command: python bench/rustlog_fetch_rate.py " + " ".join(sys.argv[1:]))
    print("| storage | records/s fetched |\n|---|---:|")
    print(f"| memory | {await measure(None, args):,.0f} |")
    with tempfile.TemporaryDirectory(prefix="wirecheck-fetch-") as scratch:
        print(f"| data-dir, fsync=none | {await measure(Path(scratch), args):,.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
