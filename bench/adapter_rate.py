"""Round trips per second through the scapy adapter (TargetSocket.sr1) and the byte Session (Session.request).

Both paths run on one connection each against the bundled reference broker, with the same request and the
same transcript recording. The adapter builds the request layer, sends it, and dissects the answer into its
layer; the byte path sends pre-encoded bytes and gets the answer frame. The ratio is why bulk fuzzing uses the
byte path.

    python bench/adapter_rate.py [--round-trips 2000] [--protocol rustlog|kafka|fluvio]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from machine import machine_info  # noqa: E402
from wirecheck.protocols.registry import spec_for  # noqa: E402
from wirecheck.protocols.transcript import Transcript  # noqa: E402
from wirecheck.targets.adapter import TargetSocket  # noqa: E402
from wirecheck.targets.launcher import launch  # noqa: E402
from wirecheck.targets.session import Session  # noqa: E402


def request_layer(protocol: str):
    """A fresh request layer (built on every round trip, as a case would)."""
    if protocol == "rustlog":
        from wirecheck.protocols.rustlog.layers import Ping, RustLogFrame

        return RustLogFrame() / Ping()
    if protocol == "kafka":
        from wirecheck.protocols.kafka.layers import KafkaRequest, body_class

        return KafkaRequest(api_key=18, api_version=3, correlation_id=1, client_id="bench") / body_class(
            18, 3, "request")(ClientSoftwareName="bench", ClientSoftwareVersion="1")
    from wirecheck.protocols.fluvio.layers import ApiVersionsRequestV2, FluvioRequest

    return FluvioRequest(correlation_id=1) / ApiVersionsRequestV2(client_version="0.18.2", client_os="linux",
                                                                  client_arch="x86_64")


def rate(run, round_trips: int) -> float:
    started = time.perf_counter()
    run(round_trips)
    return round_trips / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--protocol", default="rustlog", choices=["rustlog", "kafka", "fluvio"])
    args = parser.parse_args()
    print(f"# {machine_info()}")
    spec = spec_for(args.protocol)
    broker = launch([args.protocol])
    try:
        address = broker.address(args.protocol)
        request = bytes(request_layer(args.protocol))

        def byte_path(n):
            with Session(address, spec, Transcript(spec.name, spec.describe)) as session:
                for _ in range(n):
                    assert session.request(request).is_frame

        def adapter_path(n):
            with TargetSocket.connect(address, spec, Transcript(spec.name, spec.describe)) as target:
                for _ in range(n):
                    assert target.sr1(request_layer(args.protocol)) is not None

        byte_path(200), adapter_path(200)  # warm up: imports, generated classes, the broker's first connections
        raw = rate(byte_path, args.round_trips)
        scapy = rate(adapter_path, args.round_trips)
    finally:
        broker.stop()
    print(f"{args.protocol}: {args.round_trips} round trips: Session.request {raw:,.0f} rt/s, "
          f"TargetSocket.sr1 {scapy:,.0f} rt/s ({raw / scapy:.1f}x slower through scapy)")


if __name__ == "__main__":
    main()
