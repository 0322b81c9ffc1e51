"""RustLog personality of the reference broker: the JSON protocol of the seed "RustLog Protocol Specification".

Storage: in memory by default; ``--segment-records`` records per segment, ``--retention-records`` records kept
per partition (whole older segments dropped). With ``--data-dir``, a durable segment log per partition under
``<data-dir>/rustlog/<topic>/<partition>/`` (see ``log.py``) and topic metadata in ``topic.json``.

fsync policy: with ``fsync="batch"`` (the default) each Produce is acknowledged only after its records were
written and the segment files fsynced (and the directory fsynced when a segment or partition directory was
created), all in a worker thread so the event loop keeps serving other connections. ``fsync="none"`` writes
without fsync (faster; a machine crash may lose acknowledged records, a process crash does not). Committed
consumer offsets are in memory only, as the seed says.
"""

from dataclasses import dataclass

from wirecheck.targets.reference.core import BrokerConfig
from wirecheck.targets.reference.personality import PersonalityInfo
from wirecheck.targets.reference.rustlog.faults import FAULTS
from wirecheck.targets.reference.rustlog.server import RustLogPersonality

DEFAULT_PORT = 7070


@dataclass
class RustLogOptions:
    """None of its own: RustLog's storage settings (segment size, retention, fsync) are the shared ones."""


def create(config: BrokerConfig, options: RustLogOptions | None = None) -> RustLogPersonality:
    return RustLogPersonality(config)


PERSONALITY = PersonalityInfo("rustlog", DEFAULT_PORT, FAULTS, RustLogOptions, create)

__all__ = ["DEFAULT_PORT", "FAULTS", "PERSONALITY", "RustLogOptions", "create"]
