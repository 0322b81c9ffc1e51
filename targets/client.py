"""The strict client every protocol's cases use: connect, send, receive, "the target closed", decode or diverge.

A call names the clause it checks; whatever the target does instead becomes a :class:`Divergence` of that
clause, with the conversation already in the case's transcript. A protocol subclasses :class:`StrictClient`
and supplies only what is its own: its catalogue, the clause a malformed answer frame violates, and its error
model (which error codes an answer frame carries). Protocols with versioned APIs advertised by the target
(Kafka's and Fluvio's ApiVersions) add :class:`AdvertisedVersions`.
"""

from __future__ import annotations

from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.targets.session import FramedSession
from wirecheck.targets.transport.outcome import Outcome, Reply


def short(obj, limit: int = 300) -> str:
    """A one-line rendering of an answer for expected/actual text."""
    text = obj if isinstance(obj, str) else repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class StrictClient:
    """One connection to the target.

    Subclasses set ``framing_clause`` (the clause an incomplete or unframeable answer violates; empty: the
    clause of the call) and may
    override :meth:`error_codes_of` (the error codes an answer frame carries, for :meth:`closes`).
    """

    framing_clause: str = ""

    def __init__(self, target, session: FramedSession | None = None):
        self.target = target
        self.catalogue = target.catalogue
        self.session: FramedSession = session or target.connect()

    # -- divergences ----------------------------------------------------------------------------------------

    def diverge(self, clause_id: str, expected: str, actual: str, **extra) -> Divergence:
        return Divergence(self.catalogue[clause_id], expected, actual, **extra)

    # -- raw exchange ---------------------------------------------------------------------------------------

    def send_frame(self, frame: bytes, decode: bool = True) -> bool:
        """Send bytes as they are; False when the peer has already gone (the next receive says how)."""
        return self.session.send(bytes(frame), decode=decode)

    def frame(self, clause_id: str, what: str = "an answer", deadline: float | None = None) -> bytes:
        """The next whole answer frame; anything else violates ``clause_id`` (or the framing clause when an
        answer began but can never complete)."""
        return self.frame_of(self.session.recv(deadline), clause_id, what)

    def frame_of(self, reply: Reply, clause_id: str, what: str = "an answer") -> bytes:
        if reply.is_frame:
            return reply.frame
        if reply.partial or reply.outcome is Outcome.UNFRAMEABLE:
            raise self.diverge(self.framing_clause or clause_id, "a complete frame", str(reply))
        raise self.diverge(clause_id, what, str(reply))

    # -- the error model ------------------------------------------------------------------------------------

    def error_codes_of(self, frame: bytes, context=None) -> set[int] | None:
        """The error codes an answer frame carries; None when it is not an error answer this client can read.

        ``context`` is whatever the protocol needs to decode the frame (e.g. the request's API and version).
        """
        return None

    # -- connection ending ----------------------------------------------------------------------------------

    def closes(self, clause_id: str, allowed_codes: tuple[int, ...] = (), deadline: float | None = None,
               context=None, what: str = "the connection closed") -> list[set[int]]:
        """The target must end the connection. Error answers carrying one of ``allowed_codes`` may come first
        (none allowed when ``allowed_codes`` is empty); any other answer, or the connection left open, diverges.

        Returns the error codes of the answers that came first.
        """
        seen = []
        allowed = f" (an error {list(allowed_codes)} first is allowed)" if allowed_codes else ", no answer"
        while True:
            reply = self.session.recv(deadline)
            if reply.ended:
                return seen
            if not reply.is_frame:
                raise self.diverge(clause_id, f"{what}{allowed}", f"{reply}: the connection stayed open")
            codes = self.error_codes_of(reply.frame, context) if allowed_codes else None
            if not codes or not codes & set(allowed_codes):
                raise self.diverge(clause_id, f"{what}{allowed}",
                                   f"an answer ({len(reply.frame)} bytes): {self.show(reply.frame)}")
            seen.append(codes)

    def show(self, frame: bytes) -> str:
        """An answer frame as text for a divergence (the endpoint's describer)."""
        endpoint = self.session.endpoint
        return short((endpoint.describe_answer or endpoint.describe)(frame))

    def close(self) -> None:
        self.session.close()


class AdvertisedVersions:
    """Version negotiation for protocols whose target advertises (min, max) per API key.

    The host class supplies ``fetch_advertised() -> {api_key: (min, max)}``, ``api_name(key)`` and
    ``our_versions(key) -> (min, max)`` (what our codec encodes).
    """

    session: FramedSession  # the host class's connection (StrictClient's)
    _advertised: dict[int, tuple[int, int]] | None = None
    #: --differential: what the reference broker advertised in answer to the same request (None otherwise)
    _oracle_advertised: dict[int, tuple[int, int]] | None = None

    def advertised(self) -> dict[int, tuple[int, int]]:
        if self._advertised is None:
            self._advertised = self.fetch_advertised()
            reply = getattr(self.session, "oracle_reply", None)  # a mirrored session: the oracle's answer
            if reply is not None and reply.is_frame:
                try:
                    self._oracle_advertised = self.advertised_in(reply.frame)
                except Exception:  # noqa: BLE001 - the oracle's answer only narrows the choice; a bad one, not at all
                    self._oracle_advertised = None
        return self._advertised

    def both_speak(self, api_key: int, top: int, low: int) -> int:
        """``top`` lowered to what the reference broker advertises as well (--differential), so that both servers
        get a version they speak and their answers compare; ``top`` itself when there is no such version."""
        oracle = (self._oracle_advertised or {}).get(api_key)
        if oracle is None or not max(low, oracle[0]) <= min(top, oracle[1]):
            return top
        return min(top, oracle[1])

    def oracle_range(self, api_key: int) -> tuple[int, int] | None:
        """What the reference broker advertised for ``api_key`` (--differential), None otherwise or when absent."""
        self.advertised()
        return (self._oracle_advertised or {}).get(api_key)

    def require(self, api_key: int, version: int | None = None) -> tuple[int, int]:
        """The advertised range of ``api_key``; Unimplemented if absent (or ``version`` outside it)."""
        ranges = self.advertised()
        if api_key not in ranges:
            raise Unimplemented(f"{self.api_name(api_key)} ({api_key}) is not advertised")
        low, high = ranges[api_key]
        if version is not None and not low <= version <= high:
            raise Unimplemented(f"{self.api_name(api_key)} v{version} is not advertised ({low}-{high})")
        return low, high

    def common_version(self, api_key: int, cap: int | None = None, low: int = 0) -> int:
        """The highest version the target advertises, our codec encodes, and is within [low, cap]."""
        advertised_low, advertised_high = self.require(api_key)
        ours_low, ours_high = self.our_versions(api_key)
        top = min(advertised_high, ours_high, advertised_high if cap is None else cap)
        bottom = max(low, advertised_low, ours_low)
        if top < bottom:
            raise Unimplemented(f"{self.api_name(api_key)} advertised as {advertised_low}-{advertised_high}: "
                                f"no version in common with {max(low, ours_low)}-{top}")
        return self.both_speak(api_key, top, bottom)

    def fetch_advertised(self) -> dict[int, tuple[int, int]]:
        raise NotImplementedError

    def advertised_in(self, frame: bytes) -> dict[int, tuple[int, int]]:
        """The ranges an answer frame to ``fetch_advertised``'s request advertises (the oracle's, decoded)."""
        raise NotImplementedError

    def api_name(self, api_key: int) -> str:
        return str(api_key)

    def our_versions(self, api_key: int) -> tuple[int, int]:
        raise NotImplementedError
