"""The Barco / PolarStreams personality of the reference broker (``--protocols barco``): one dev-mode broker.

Endpoints (notes §1): discovery ``--barco-port`` (9250, the primary: GET /v1/brokers announces the others), HTTP
producer ``--barco-producer-http-port`` (9251), consumer API ``--barco-consumer-port`` (9252, HTTP/1.1 and h2c
with prior knowledge on one port), binary producer ``--barco-producer-port`` (9254). 0 = ephemeral.

Storage: chunks per reader in memory (``--retention-records`` records kept per reader) or durable under
``--data-dir`` (``--fsync batch``: fsync before acknowledging; consumer group offsets in offsets.json, written on
each commit). Registrations live in memory. Memory is bounded: frame bodies above 1 MiB plus header overhead
are refused unread, HTTP bodies above 1 MiB are refused, and stored payload bytes are capped in memory mode
(``--barco-max-store-bytes``); durable mode keeps a compact chunk index and reads payloads back through a cache
of ``--cache-bytes`` (store.py). Decisions D1-D8: protocols/barco/clauses.py (read, not imported).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wirecheck.broker.barco.faults import FAULTS, VARIANTS
from wirecheck.broker.barco.server import BarcoPersonality
from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.personality import PersonalityInfo

DEFAULT_PORT = 9250
ENDPOINTS = {"producer-http": 9251, "consumer": 9252, "producer": 9254}


@dataclass
class BarcoOptions:
    consumer_ranges: int = field(default=4, metadata={"help": "consumer ranges per token range (POLAR_CONSUMER_RANGES)"})
    max_store_bytes: int = field(default=256 << 20, metadata={"help": "stored payload bytes in memory mode"})


def create(config: BrokerConfig, options: BarcoOptions | None = None) -> BarcoPersonality:
    return BarcoPersonality(config, options or BarcoOptions())


PERSONALITY = PersonalityInfo("barco", DEFAULT_PORT, FAULTS, BarcoOptions, create, endpoints=ENDPOINTS,
                              variants=VARIANTS,
                              storage=frozenset({"data_dir", "fsync", "retention_records", "cache_bytes"}))
