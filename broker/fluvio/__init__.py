"""The Fluvio SPU personality of the reference broker (``python -m wirecheck.broker --protocols fluvio``).

It serves the SPU's public port: ApiVersions (18), Produce (0), Fetch (1), FetchOffsets (1002), StreamFetch
(1003) with UpdateOffsets (1005), the consumer offsets (1006-1008, unlisted as on the SPU), from the byte-level
notes (specs/fluvio.md) and the seed (fluvio-protocol-reference.md); and the Streaming Controller (sc.py) on its
"sc" endpoint. It mirrors the SPU's wire behaviour and takes a strict-but-safe path where the
SPU is undefined or buggy (notes §12); every such decision is written next to its code (D1-D8 in server.py,
produce.py and fetch.py; records.py, messages.py, wire.py) and is implementation-defined for the suite. The
handlers live by API family (api.py), the faults and variants in one typed object each (faults.py).

Topics (decision): the SPU has no CreateTopic API on its port, so a Produce to an unknown topic creates it, with
one partition, if its name is a valid Fluvio topic name (storage.py). Produce to a partition the topic does not
have, and Fetch / FetchOffsets / StreamFetch of anything not yet created, get the SPU's "no leader" codes (6,
3001). A suite therefore gets a topic on this broker by producing to partition 0 first, or through the SC. The
system topic "consumer-offset" (one partition) always exists, so clients find the consumer offsets' leader.

Options (:class:`FluvioOptions`, flags ``--fluvio-<option>``): auto_create (default on), default_partitions (1),
topics created at start, max_request_size (33554432, STORAGE_MAX_REQUEST_SIZE), max_store_bytes (1 GiB, in memory
only; past it, Produce gets PartitionFull (72)). From ``BrokerConfig``: ``--retention-records`` (records kept per
partition, default all), ``--data-dir`` (topics, consumer offsets and one batch log per partition under
``<data-dir>/fluvio/``, storage.py; default in memory), ``--fsync`` (each batch synced before Produce answers,
default) and ``--cache-bytes`` (with ``--data-dir``, the batches kept in memory for reads, default 32 MiB).
"""

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.fluvio.faults import FAULTS, VARIANTS
from wirecheck.broker.fluvio.options import FluvioOptions
from wirecheck.broker.fluvio.sc import DEFAULT_PORT as SC_PORT
from wirecheck.broker.fluvio.server import FluvioPersonality
from wirecheck.broker.personality import PersonalityInfo

DEFAULT_PORT = 9005  # the SPU's public port


def create(config: BrokerConfig, options: FluvioOptions | None = None) -> FluvioPersonality:
    return FluvioPersonality(config, options or FluvioOptions())


PERSONALITY = PersonalityInfo("fluvio", DEFAULT_PORT, FAULTS, FluvioOptions, create, endpoints={"sc": SC_PORT},
                              variants=VARIANTS,
                              storage=frozenset({"data_dir", "fsync", "retention_records", "cache_bytes"}))

__all__ = ["DEFAULT_PORT", "FAULTS", "PERSONALITY", "VARIANTS", "FluvioOptions", "create"]
