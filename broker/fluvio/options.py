"""The Fluvio personality's own options (flags ``--fluvio-<option>``, see broker/personality.py)."""

from dataclasses import dataclass, field

from wirecheck.broker.personality import parse_mapping

MAX_REQUEST_SIZE = 33_554_432  # STORAGE_MAX_REQUEST_SIZE (§8): a larger batch gets MessageTooLarge (10)


@dataclass
class FluvioOptions:
    auto_create: bool = field(default=True, metadata={"help": "create a topic on its first Produce"})
    default_partitions: int = field(default=1, metadata={"help": "partitions of an auto-created topic"})
    topics: dict[str, int] = field(default_factory=dict, metadata={
        "help": "topics created at start, NAME:PARTITIONS,...", "parse": parse_mapping})
    max_request_size: int = field(default=MAX_REQUEST_SIZE, metadata={
        "help": "largest accepted batch in bytes (STORAGE_MAX_REQUEST_SIZE)"})
    max_store_bytes: int = field(default=1 << 30, metadata={
        "help": "bytes of batches held by all partitions together; past it Produce gets PartitionFull (72)"})
    request_log: str = field(default="", metadata={
        "help": "append 'sc|spu API_KEY VERSION' for every request to this file (interop tests list what a "
                "client sends)"})
