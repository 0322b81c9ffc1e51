"""Pravega segment-store commands, valid and mutated, built from ``protocols.pravega.commands``.

* ``values``: Hypothesis strategies (``command_values``, ``request_frames``, ``event_payloads``, ``table_entries``)
  for property-based and stateful cases, which shrink a failure to one frame;
* ``mutants``: :class:`BulkMutator`, seeded bulk mutants of traced seed requests through the shared operators,
  each with the reaction the spec permits (and ``hostile_frames``, one mutant for property-based cases);
* ``adapter``: :class:`PravegaFuzz`, the bulk engine's adapter: Hello is the keepalive (any Hello answers it), a
  reply is classified by decoding it and checking its requestId.
"""

from wirecheck.strategies.pravega.adapter import (HELLO, PravegaFuzz, fuzz_adapter, fuzz_setup, offline_adapter,
                                                  setup_frames)
from wirecheck.strategies.pravega.mutants import (NO_HANG, SUCCESS, BulkMutator, Expect, answered, closes,
                                                  error_or_close, hostile_frames, seed_requests, traced)
from wirecheck.strategies.pravega.values import (KEEPALIVE, command_values, event_payloads, layer_examples, longs,
                                                 names, request_frames, table_entries, table_keys, uuids)

__all__ = ["answered", "BulkMutator", "closes", "command_values", "error_or_close", "event_payloads", "Expect",
           "fuzz_adapter", "fuzz_setup", "HELLO", "hostile_frames", "KEEPALIVE", "layer_examples", "longs", "names",
           "NO_HANG", "offline_adapter", "PravegaFuzz", "request_frames", "seed_requests", "setup_frames", "SUCCESS",
           "table_entries", "table_keys", "traced", "uuids"]
