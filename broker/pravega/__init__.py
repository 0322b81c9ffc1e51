"""The Pravega segment store personality of the reference broker (``python -m wirecheck.broker --protocols
pravega``).

It serves the segment store's wire protocol, version 17 (oldest compatible 5), from the byte-level notes
(specs/pravega.md): Hello, KeepAlive, the append path (SetupAppend, AppendBlock/AppendBlockEnd with PartialEvent
and Padding trailers, ConditionalAppend, ConditionalBlockEnd, CreateTransientSegment), reads with long polls at
the tail, segment create/info/seal/truncate/delete/merge/merge-batch/policy/locate-offset, segment attributes
with compare-and-set, and table segments with versioned keys (update, remove, read, key and entry iteration,
delta reads). Every decision where upstream is implementation-defined is written in server.py (D1-D7). Each
family of commands is one module (hello.py, appends.py, reads.py, segments.py, attributes.py, tables.py), its
handlers registered by wire command type code (codes.py) in server.py's dispatch table; the faults and variants
are the typed objects of faults.py.

Options (:class:`PravegaOptions`, flags ``--pravega-<option>``): auth_token (empty: any delegation token is
accepted, as a segment store with auth off; set: requests carrying another token get AuthTokenCheckFailed),
max_store_bytes, max_parked_reads, controller_port (the gRPC controller beside the store, controller/). From
``BrokerConfig``: ``--data-dir`` (segment bytes in one log per segment, metadata in a journal replayed on start,
see store.py), ``--fsync``, ``--cache-bytes`` (the durable mode's read cache), ``--max-frame``. Default port 12345
(service.listener.port).
"""

from wirecheck.broker.core import BrokerConfig
from wirecheck.broker.personality import PersonalityInfo
from wirecheck.broker.pravega.faults import FAULTS, VARIANTS
from wirecheck.broker.pravega.options import PravegaOptions
from wirecheck.broker.pravega.controller.attach import PravegaWithController
from wirecheck.broker.pravega.server import PravegaPersonality

DEFAULT_PORT = 12345


def create(config: BrokerConfig, options: PravegaOptions | None = None) -> PravegaPersonality:
    return PravegaWithController(config, options or PravegaOptions())


PERSONALITY = PersonalityInfo("pravega", DEFAULT_PORT, FAULTS, PravegaOptions, create, variants=VARIANTS,
                              storage=frozenset({"data_dir", "fsync", "cache_bytes"}))

__all__ = ["DEFAULT_PORT", "FAULTS", "PERSONALITY", "PravegaOptions", "create"]
