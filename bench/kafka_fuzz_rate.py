"""How fast Kafka frames are generated and mutated (no network): frames per second, with machine info.

    python bench/kafka_fuzz_rate.py [--examples 2000]

Rows:
* Hypothesis: valid request frames of any api key/version (generation + encoding);
* Hypothesis: mutated request frames (generation + traced encoding + one structural mutation);
* Hypothesis: mutated record batches;
* bulk (seeded random.Random over the same codecs, no Hypothesis): valid frames, mutated frames;
* the codec alone: encode / decode one Metadata v12 request; the generated scapy layer: build / dissect it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import machine_info  # noqa: E402

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from protocols.kafka import layers, messages  # noqa: E402
from strategies import kafka as kafka_strategies  # noqa: E402


def hypothesis_rate(strategy, examples: int, consume) -> float:
    count = 0

    @settings(max_examples=examples, phases=[Phase.generate], database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value):
        nonlocal count
        consume(value)
        count += 1

    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def loop_rate(action, seconds: float = 1.0) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            action()
        count += 100
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    args = parser.parse_args()
    print(machine_info())
    print(f"examples per Hypothesis row: {args.examples}")
    rows = [
        ("hypothesis valid request frames", hypothesis_rate(kafka_strategies.request_frames(), args.examples, len)),
        ("hypothesis mutated request frames",
         hypothesis_rate(kafka_strategies.mutated_requests(), args.examples, lambda m: len(m.frame))),
        ("hypothesis mutated record batches",
         hypothesis_rate(kafka_strategies.mutated_batches(), args.examples, lambda m: len(m.batch))),
    ]
    rng = random.Random(0)

    def bulk_valid():
        api_key, version, body = kafka_strategies.random_request(rng)
        messages.encode_request(api_key, version, 1, "bench", body)

    rows += [
        ("bulk valid request frames", loop_rate(bulk_valid, 2.0)),
        ("bulk mutated request frames", loop_rate(lambda: kafka_strategies.random_mutant(rng), 2.0)),
    ]
    body = {"Topics": [{"TopicId": None, "Name": f"topic-{i}"} for i in range(3)], "AllowAutoTopicCreation": True,
            "IncludeTopicAuthorizedOperations": False}
    body["Topics"] = [{"Name": t["Name"]} for t in body["Topics"]]
    frame = messages.encode_request(3, 12, 1, "bench", body)
    rows += [
        ("codec encode Metadata v12 request", loop_rate(lambda: messages.encode_request(3, 12, 1, "bench", body))),
        ("codec decode Metadata v12 request", loop_rate(lambda: messages.decode_request(frame))),
        ("scapy build Metadata v12 request",
         loop_rate(lambda: bytes(layers.request_packet(3, 12, 1, "bench", body)))),
        ("scapy dissect Metadata v12 request", loop_rate(lambda: layers.KafkaRequest(frame))),
    ]
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"{name:<{width}}  {rate:>12,.0f} /s")


if __name__ == "__main__":
    main()
