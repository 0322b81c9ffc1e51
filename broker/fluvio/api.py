"""The SPU's public API keys, and what a dispatch table holds for each key: its versions and its handler.

A handler takes the :class:`Call` of one request whose header has been read and answers with an :data:`Answer`.
The SPU's handlers live by API family: versions.py (ApiVersions), produce.py (Produce), fetch.py (Fetch,
StreamFetch, UpdateOffsets), offsets.py (FetchOffsets and the consumer offsets); its table is in server.py. The
SC (sc.py) routes its own keys through a table of the same shape: Watch and List in sc.py, Create and Delete in
sc_admin.py.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from wirecheck.broker.fluvio.faults import FluvioVariants
from wirecheck.broker.fluvio.wire import Reader

log = logging.getLogger("wirecheck.broker.fluvio")

# SpuServerApiKey (notes §3.1)
PRODUCE, FETCH, API_VERSIONS = 0, 1, 18
FETCH_OFFSETS, STREAM_FETCH, UPDATE_OFFSETS = 1002, 1003, 1005
UPDATE_CONSUMER_OFFSET, DELETE_CONSUMER_OFFSET, FETCH_CONSUMER_OFFSETS = 1006, 1007, 1008

#: What a handler answers. bytes: the response body, sent once the request is known to have no bytes the variant
#: trailing-bytes-close refuses; True: handled (answered already, or later, or never), the connection stays open;
#: False: the connection ends without a response.
Answer = bytes | bool

S = TypeVar("S")  # a connection's state: connection.ConnectionState on the SPU, sc.Session on the SC


@dataclass(frozen=True)
class Call(Generic[S]):
    """One request whose header is read: its connection, the reader at its body, its version and the
    correlation id its answer carries."""

    state: S
    r: Reader
    version: int
    reply_id: int


@dataclass(frozen=True)
class Route(Generic[S]):
    """One entry of the dispatch table: an API key, the versions accepted (None: every one), the handler, and
    whether ApiVersions lists it."""

    key: int
    versions: tuple[int, int] | None
    handle: Callable[[Call[S]], Awaitable[Answer]]
    listed: bool = True


def trailing(r: Reader, variants: FluvioVariants) -> bool:
    """Variant trailing-bytes-close: bytes after a complete request end the connection (the SPU ignores
    them, A15; §7's decode-error reaction is the other permitted one)."""
    if r.remaining and variants.trailing_bytes_close:
        log.debug("closing: %d bytes after the request", r.remaining)
        return True
    return False
