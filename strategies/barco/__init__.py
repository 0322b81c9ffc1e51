"""Barco binary producer: Hypothesis strategies for every frame and request (``values``), seeded bulk mutants
of traced frames through the shared operators with the reaction the clauses permit (``mutants``), and the bulk
engine's adapter (``adapter``).
"""

from wirecheck.strategies.barco.adapter import (FUZZ_ENDPOINT, KEEPALIVE_STREAM, BarcoFuzz, fuzz_adapter, fuzz_setup,
                                                offline_adapter)
from wirecheck.strategies.barco.mutants import (NO_HANG, OVERSIZE_MAY_WAIT, OVERSIZE_REFUSED, BulkMutator,
                                                traced_frame, traced_produce)
from wirecheck.strategies.barco.values import (INVALID_TOPICS, control_frames, invalid_produce_bodies, layer_examples,
                                               message_lists, partition_keys, produce_frames, stream_ids, timestamps,
                                               topic_names, unknown_op_frames)

__all__ = ["BarcoFuzz", "BulkMutator", "control_frames", "fuzz_adapter", "FUZZ_ENDPOINT", "fuzz_setup",
           "invalid_produce_bodies", "INVALID_TOPICS", "KEEPALIVE_STREAM", "layer_examples", "message_lists",
           "NO_HANG", "offline_adapter", "OVERSIZE_MAY_WAIT", "OVERSIZE_REFUSED", "partition_keys", "produce_frames",
           "stream_ids", "timestamps", "topic_names", "traced_frame", "traced_produce", "unknown_op_frames"]
