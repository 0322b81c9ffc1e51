"""Kafka clients' own defects (protocols.clients.ClientDefect): answers the protocol permits that a client version
cannot read, and how a client's captured traffic shows the server sent one."""

from __future__ import annotations

from collections.abc import Sequence

from wirecheck.protocols.clients import ClientDefect
from wirecheck.protocols.kafka import messages


def default_tags_sent(exchanges: Sequence[tuple[bytes, bytes]]) -> str | None:
    """Where answers carried known tagged fields at their default values (messages.tagged_defaults), or None."""
    seen: dict[str, set[str]] = {}
    for request, answer in exchanges:
        try:
            header = messages.decode_request(request)["header"]
        except Exception:  # noqa: BLE001 - a request the codec cannot read says nothing of its answer
            continue
        key, version = header["RequestApiKey"], header["RequestApiVersion"]
        if messages.flexible(key, version):
            for name in messages.tagged_defaults(key, version, answer):
                seen.setdefault(f"{messages.api_name(key)} v{version}", set()).add(name)
    if not seen:
        return None
    return "; ".join(f"{api} answers carry {', '.join(sorted(names))} at their default values"
                     for api, names in sorted(seen.items()))


CLIENT_DEFECTS = (
    ClientDefect(
        "librdkafka-default-tags", clients=("confluent-kafka",), versions=("librdkafka 2.16.0",),
        what="librdkafka reads a Produce or Fetch answer's CurrentLeader tagged field written at its default "
             "(-1, -1) as a leader change ('new leader-1 not found in cache'), then misreads the answers after it "
             "(partition 620756994, leader 653670278) and may crash (SIGSEGV); a tagged field is optional data "
             "a writer may put in at any value (KIP-482), and Apache Kafka's Java client, franz-go, Sarama and "
             "kcat (librdkafka 2.0.2, which reads no CurrentLeader) read the same answers",
        source="seen against the reference broker's variant kafka.tagged-defaults-written (tests/quality/"
               "test_client_own_defect.py)",
        shown_by=default_tags_sent),
)
