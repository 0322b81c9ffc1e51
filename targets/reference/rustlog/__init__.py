"""RustLog personality of the reference broker: the JSON protocol of the seed "RustLog Protocol Specification".

Storage: in memory by default. With ``--data-dir``, a durable segment log per partition under
``<data-dir>/rustlog/<topic>/<partition>/`` (see ``log.py``) and topic metadata in ``topic.json``.

fsync policy: with ``fsync="batch"`` (the default) each Produce is acknowledged only after its records were
written and the segment files fsynced (and the directory fsynced when a segment or partition directory was
created), all in a worker thread so the event loop keeps serving other connections. ``fsync="none"`` writes
without fsync (faster; a machine crash may lose acknowledged records, a process crash does not). Committed
consumer offsets are in memory only, as the seed says.
"""

from targets.reference.core import BrokerConfig
from targets.reference.rustlog.faults import FAULTS
from targets.reference.rustlog.server import RustLogPersonality

DEFAULT_PORT = 7070

__all__ = ["DEFAULT_PORT", "FAULTS", "create"]


def create(config: BrokerConfig) -> RustLogPersonality:
    return RustLogPersonality(config)
