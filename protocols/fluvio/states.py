"""Fluvio's reaction states (protocols/states.py): errors by their ErrorCode variant names, the error cells the
clause catalogue names.

An SPU connection holds one piece of state a request can open: a StreamFetch answered without error opens a
stream (its stream id then names it in UpdateOffsets; SPU/services/public/stream_fetch.rs). The bulk mutants
are Produce requests, which open none; a guided run's step (``Adapter.step``) is a StreamFetch at the log end of
an empty topic, which opens a stream and is not answered while nothing is produced there (notes §5.4: the stream
waits for data), so its silence, proven by the answers after it, is the move to ``stream-open``.
"""

from __future__ import annotations

from wirecheck.protocols.fluvio import errors, messages, sc
from wirecheck.protocols.states import ANY, Cell, StateModel, Transition

NO_STREAM, STREAM = "no-stream", "stream-open"

STATES = StateModel(
    initial=NO_STREAM,
    states={NO_STREAM: "no stream opened on this connection",
            STREAM: "a StreamFetch answered: the SPU streams records on this connection"},
    transitions=(Transition(ANY, "StreamFetch", "answer", STREAM), Transition(ANY, "StreamFetch", "silence", STREAM)),
    error_names=errors.name,
    requests=tuple(sorted({*messages.NAMES.values(), *sc.NAMES.values()})),
    error_vocabulary={name: name for name, *_ in errors.VARIANTS.values()},
    cells=(
        Cell("fluvio.produce.unknown-topic", "Produce", "error:NotLeaderForPartition"),
        Cell("fluvio.produce.unknown-partition", "Produce", "error:NotLeaderForPartition"),
        Cell("fluvio.produce.compression-invalid", "Produce", "error:CompressionError"),
        Cell("fluvio.produce.too-large", "Produce", "error:MessageTooLarge"),
        Cell("fluvio.produce.negative-delta-mixed", "Produce", "error:StorageError"),
        Cell("fluvio.fetch.beyond-end", "Fetch", "error:Other"),
        Cell("fluvio.fetch.unknown-partition", "Fetch", "error:NotLeaderForPartition"),
        Cell("fluvio.offsets.unknown-partition", "FetchOffsets", "error:PartitionNotLeader"),
        Cell("fluvio.stream.unknown-partition", "StreamFetch", "error:NotLeaderForPartition"),
        Cell("fluvio.update-offsets.status", "UpdateOffsets", "error:FetchSessionNotFoud"),
        Cell("fluvio.errors.encoding", ANY, "error:Other"),
        Cell("fluvio.errors.encoding", ANY, "error:RequestTimedOut"),
        Cell("fluvio.sc.create.exists", "Create", "error:TopicAlreadyExists"),
        Cell("fluvio.sc.create.invalid-name", "Create", "error:TopicInvalidName"),
        Cell("fluvio.sc.delete.missing", "Delete", "error:TopicNotFound"),
    ),
    steps=("StreamFetch",),
)
