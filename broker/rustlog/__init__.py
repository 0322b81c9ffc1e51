"""RustLog personality of the reference broker: the JSON protocol of the seed "RustLog Protocol Specification".

Storage: in memory by default (``log.py``); ``--segment-records`` records per segment, ``--retention-records``
records kept per partition (whole older segments dropped). With ``--data-dir``, a durable log per partition under
``<data-dir>/rustlog/<topic>/<partition>/`` (``durable.py``: one shared-batch-log entry per Produce batch, in
files of up to 128 MiB) and topic metadata in ``topic.json``. There a segment is no longer a file: it stays the
unit of ``segment_count`` and of retention (offsets [k*segment_records, (k+1)*segment_records)), and a file is
deleted once retention has passed all of it. Memory in durable mode is the batch index plus one batch cache of
``--cache-bytes`` shared by all partitions; reads beyond it come from the files.

fsync policy: with ``fsync="batch"`` (the default) each Produce is acknowledged only after its batch was written
and its file fsynced (and the directory fsynced when a file or partition directory was created), all in a worker
thread so the event loop keeps serving other connections. ``fsync="none"`` writes without fsync (faster; a
machine crash may lose acknowledged records, a process crash does not). Committed consumer offsets are in memory
only, as the seed says.
"""

from dataclasses import dataclass, field

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.personality import PersonalityInfo, parse_mapping
from wirecheck.broker.rustlog.faults import FAULTS, VARIANTS
from wirecheck.broker.rustlog.server import RustLogPersonality

DEFAULT_PORT = 7070


@dataclass
class RustLogOptions:
    """Topics that exist at start; RustLog's storage settings (segment size, retention, fsync) are the shared ones."""

    topics: dict[str, int] = field(default_factory=dict, metadata={
        "help": "topics created at start, NAME:PARTITIONS,...", "parse": parse_mapping})


def create(config: BrokerConfig, options: RustLogOptions | None = None) -> RustLogPersonality:
    personality = RustLogPersonality(config)
    personality.store.provision((options or RustLogOptions()).topics)
    return personality


PERSONALITY = PersonalityInfo("rustlog", DEFAULT_PORT, FAULTS, RustLogOptions, create, variants=VARIANTS,
                              storage=frozenset({"data_dir", "fsync", "segment_records", "retention_records",
                                                 "cache_bytes"}))

__all__ = ["DEFAULT_PORT", "FAULTS", "PERSONALITY", "RustLogOptions", "create"]
