"""The Pravega protocol's login step (``ProtocolSpec.login``): every connection a case opens starts with Hello,
as the Java client's do, so that a server that wants one first fails the hello.not-required cases only."""

from __future__ import annotations

from wirecheck.suites.pravega.client import Pravega


def login(target, session) -> None:
    """Any Hello answers it (its range is the hello cases' business)."""
    with target.precondition("Hello on a new connection"):
        Pravega(target, session).hello()
