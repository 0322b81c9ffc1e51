"""Fluvio SPU requests, valid and mutated, built from ``protocols.fluvio``.

* ``values``: Hypothesis strategies (``records_``, ``batches``, ``record_sets``, ``produce_bodies``,
  ``fetch_bodies``, ``request_frames``) for property-based cases, which shrink a failure to one frame;
* ``mutants``: :class:`BulkMutator`, seeded bulk mutants of traced Produce requests through the shared operators,
  each with the reaction the spec permits (and ``hostile_frames``, one mutant for property-based cases);
* ``adapter``: :class:`FluvioFuzz`, the bulk engine's adapter.
"""

from wirecheck.strategies.fluvio.adapter import FluvioFuzz, fuzz_adapter, fuzz_setup, offline_adapter
from wirecheck.strategies.fluvio.mutants import (CLOSE_WAIT, NO_HANG, BulkMutator, Request, answer_preferred,
                                                 answered, close_preferred, closes, hostile_frames, traced_produce)
from wirecheck.strategies.fluvio.values import (batches, codec_values, fetch_bodies, layer_examples, produce_bodies,
                                                produce_frame, record_sets, records_, request_frames)

__all__ = ["answer_preferred", "answered", "batches", "BulkMutator", "close_preferred", "CLOSE_WAIT", "closes",
           "codec_values", "fetch_bodies", "FluvioFuzz", "fuzz_adapter", "fuzz_setup", "hostile_frames",
           "layer_examples", "NO_HANG", "offline_adapter", "produce_bodies", "produce_frame", "record_sets",
           "records_", "Request", "request_frames", "traced_produce"]
