"""The Pravega personality's own options (flags ``--pravega-<option>``, see broker/personality.py)."""

from dataclasses import dataclass, field


def parse_names(text: str) -> tuple[str, ...]:
    """``a/b/0,c/d/0`` -> the names, in order."""
    return tuple(filter(None, (part.strip() for part in text.split(","))))


@dataclass
class PravegaOptions:
    auth_token: str = field(default="", metadata={
        "help": "the delegation token every request must carry (empty: any token is accepted, as with auth off)"})
    max_store_bytes: int = field(default=1 << 30, metadata={
        "help": "bytes all segments and tables may hold in memory together (with --data-dir: tables, names and "
                "attributes; segment bytes are on disk); an operation past it closes the connection"})
    max_parked_reads: int = field(default=1024, metadata={
        "help": "reads parked at a segment's tail per connection; one more closes the connection"})
    controller_port: int | None = field(default=None, metadata={
        "parse": int, "help": "the controller's gRPC port (unset: 9090, or ephemeral when --pravega-port is 0; "
                              "0: ephemeral; -1: no controller)"})
    segments: tuple[str, ...] = field(default=(), metadata={
        "parse": parse_names, "help": "stream segments that exist at start (an operator's streams), NAME,..."})
    tables: tuple[str, ...] = field(default=(), metadata={
        "parse": parse_names, "help": "table segments that exist at start, NAME,..."})
