"""The ``target`` a case holds: the address, sessions that record into the case's transcript (the protocol's login
step run on each), unique resource names, the protocol's options, preconditions and what --differential compares."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol, TypeAlias, cast

from wirecheck.protocols.clauses import Clause
from wirecheck.protocols.spec import ProtocolSpec
from wirecheck.protocols.clients import AREA as CLIENTS_AREA
from wirecheck.protocols.verdicts import Blocked, Divergence, HarnessError
from wirecheck.reports.replay import RACED_NOTE, SETUP_END_NOTE, SETUP_NOTE, UNREPLAYABLE_NOTE
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.differential import CLIENT_APART, MirroredSession, Tally, mirrored
from wirecheck.targets.runner.case import CLIENT_STARTING, CaseState, survives_clause
from wirecheck.targets.runner.target_info import TargetInfo
from wirecheck.targets.runner.validate import parse_topics
from wirecheck.targets.session import Session
from wirecheck.targets.transport import open_session

if TYPE_CHECKING:
    from wirecheck.targets.runner.run import Run
    from wirecheck.targets.transport.h2c import H2Session
    from wirecheck.targets.transport.http1 import Http1Session

#: what ``target.connect`` returns: a session of the endpoint's transport (framed, http1, h2c), a framed one
#: mirrored to the reference broker under --differential
CaseSession: TypeAlias = "Session | MirroredSession | Http1Session | H2Session"


class LoginStep(Protocol):
    """A protocol's login step (``ProtocolSpec.login``): ``login(target, session)`` in its suite's ``login`` module,
    run on a new session before the case uses it."""

    def __call__(self, target: "Target", session: CaseSession, /) -> None: ...


def login_step(spec: ProtocolSpec) -> LoginStep:
    """The login step of a protocol that has one: ``login`` of ``<suite>.login``."""
    name = f"{spec.suite}.login"
    try:
        step = getattr(importlib.import_module(name), "login", None)
    except ModuleNotFoundError as missing:
        if missing.name != name:
            raise
        step = None
    if not callable(step):
        raise HarnessError(f"{spec.name} declares a login step, but {name} defines no login(target, session)")
    return cast(LoginStep, step)


class Target:
    """What a case holds: the address, sessions that record into the case's transcript, unique names."""

    def __init__(self, run: "Run", state: CaseState):
        self._run = run
        self._state = state
        self.info = state.target_info
        self.case_id = state.case_id  # protocols with a client id field stamp it into requests
        self.spec = state.spec
        self.address = self.info.address
        self.deadline = run.deadline
        self.fuzz = run.budget
        self.options = run.target_options(state.spec.name)
        self.transcript = state.transcript
        self.catalogue = state.spec.catalogue
        self._sessions: list[CaseSession] = []
        #: --differential: sessions are mirrored to the reference broker
        self.differential = run.options.differential
        self._comparing = True  # False once the case's answers depend on the servers' own timers
        self._apart: str | None = None  # why the case's answers are counted apart from here on (_count_apart)
        self._chosen = run.server_chosen(self.spec)  # --differential: the values each server chose
        if self.differential:
            state.tally = state.tally or Tally()
        self._sent = bytearray()  # --differential: what the case sent (the entries of a server-wide listing it names)
        if state.case_id.split(".")[1:2] == [CLIENTS_AREA] and self.differential:  # until the next client case
            CLIENT_STARTING.set(lambda command: self._count_apart(CLIENT_APART, command))

    def connect(self, deadline: float | None = None, endpoint: str | None = None, login: bool = True) -> CaseSession:
        """A session to the primary endpoint, or to the named one (of its transport: framed, http1, h2c); the
        protocol's login step (``ProtocolSpec.login``) runs on it first unless ``login`` is False."""
        address = self.endpoint_address(endpoint)
        session: CaseSession
        try:
            session = open_session(address, self.spec.endpoint(endpoint), self.transcript, deadline or self.deadline,
                                   tls=self._run.tls_for(self.info))
        except OSError as exc:
            raise Divergence(survives_clause(self.spec), f"a connection to {address[0]}:{address[1]}",
                             f"connect failed: {exc}") from None
        oracle = self._run.oracle(self.spec.name)
        if oracle is not None:  # --differential: the same bytes to the reference broker, answers compared
            session = self._mirrored(session, oracle, endpoint, deadline)
            if isinstance(session, MirroredSession):
                session.comparing = self._comparing
                session.answers_apart(self._apart)
        self._sessions.append(session)
        if login and self.spec.login:
            login_step(self.spec)(self, session)
        return session

    def _mirrored(self, session: Session | Http1Session | H2Session, oracle: TargetInfo, endpoint: str | None,
                  deadline: float | None) -> CaseSession:
        name = endpoint if endpoint is not None and endpoint != self.spec.primary.name else None
        shared = self.spec.endpoint(name).shares_port_with if name else ""
        address = oracle.address if name is None else oracle.endpoints.get(shared or name)
        if address is None:
            return session
        try:
            twin = open_session(address, self.spec.endpoint(endpoint), Transcript(self.spec.name),
                                deadline or self.deadline)
        except OSError as exc:
            session.close()
            raise HarnessError(f"--differential: the oracle ({address[0]}:{address[1]}) does not accept a connection: "
                              f"{exc}") from None
        mirror = mirrored(session, twin, self.spec, self.spec.endpoint(endpoint), self._state.differences.append,
                          self._chosen, self._sent, self._state.tally)
        if isinstance(mirror, MirroredSession):  # both the bundled broker: one parser, so hostile answers compare
            mirror.same_implementation = self.info.reference and oracle.reference
        return mirror

    def depends_on_server_timers(self, why: str) -> None:
        """From here on the case's answers depend on when the server's own timers fire (a transaction timeout, a
        session expiry). Two correct servers fire them at different moments, so under --differential the rest of
        the case is no longer compared (its bytes still go to both servers); otherwise nothing changes."""
        self._stop_comparing(why)

    def beyond_comparison(self, why: str) -> None:
        """From here on the two servers' answers may differ by a choice each is free to make (an order the protocol
        leaves to the server decides what the case asks next; the oracle speaks an older version that lacks the
        command the case needs): under --differential the rest of the case is no longer compared (its bytes still
        go to both servers); otherwise nothing changes."""
        self._stop_comparing(why)

    def _stop_comparing(self, why: str) -> None:
        if not self.differential or not self._comparing:
            return
        self._comparing = False
        if self._state.tally is not None:
            self._state.tally.stop(f"stopped: {why}")
        for session in self._sessions:
            if isinstance(session, MirroredSession):
                session.comparing = False
        self.transcript.note(f"differential: answers no longer compared: {why}")

    def _count_apart(self, why: str, command: str) -> None:
        """A real client talks to the target alone from here: the target holds what the client made (records,
        offsets, groups) and the oracle never saw it, so the suite's later answers, which judge the client's
        effects, are no exchange with both servers: counted apart (``Tally.apart``), never compared."""
        if not self.differential or self._apart is not None:
            return
        self._apart = why
        for session in self._sessions:
            if isinstance(session, MirroredSession):
                session.answers_apart(why)
        self.transcript.note(f"differential: answers counted apart from here: {why} ({command})")

    def named_topics(self) -> dict[str, int]:
        """Topics the user named (``--target-option PROTOCOL.topics=NAME[:PARTITIONS],...``): they exist on the
        target, and cases whose checks hold on a topic others write to as well share them."""
        return parse_topics(self.options.get("topics", ""))

    def races(self, what: str) -> None:
        """The case sends on several connections at once: the order the server sees their requests in (which its
        answers follow) is the server's, so a replay of the case says it cannot re-create it, and under
        --differential the two servers' answers are no longer compared (each may order them otherwise)."""
        self.transcript.note(f"{RACED_NOTE}: {what}")
        self._stop_comparing(f"{what}: each server orders racing requests its own way")

    def cannot_replay(self, why: str) -> None:
        """A later request of the case answers a value the server chose that a replay cannot compute anew (a SCRAM
        proof of the server's nonce): a replay that differs after this says so, NOT REPLAYABLE, with ``why``."""
        self.transcript.note(f"{UNREPLAYABLE_NOTE} {why}")

    def endpoint_address(self, endpoint: str | None = None) -> tuple[str, int]:
        """Where an endpoint listens: the target's address for the primary, else a known address (reference
        broker, --target-option, or :meth:`learn_endpoint`); an endpoint sharing another's port uses that one's."""
        if endpoint is None or endpoint == self.spec.primary.name:
            return self.address
        shared = self.spec.endpoint(endpoint).shares_port_with
        if shared:
            return self.endpoint_address(shared)
        if endpoint not in self.info.endpoints:
            raise HarnessError(f"no address known for the {self.spec.name} endpoint {endpoint!r}; give "
                               f"--target-option {self.spec.name}.{endpoint}=HOST:PORT")
        return self.info.endpoints[endpoint]

    def knows_endpoint(self, endpoint: str) -> bool:
        shared = self.spec.endpoint(endpoint).shares_port_with
        return endpoint == self.spec.primary.name or (shared or endpoint) in self.info.endpoints

    def learn_endpoint(self, endpoint: str, address: tuple[str, int]) -> None:
        """An address the suite found (e.g. through a discovery API); kept for the run and the liveness probe."""
        self.info.endpoints.setdefault(endpoint, address)

    def answers(self) -> bool:
        """Does the target answer its hello on a new connection (recorded in the transcript)?"""
        return self._run.answers(self._state)

    def stopped_answering(self) -> str | None:
        """What a new connection met when the target no longer answers at all (refused, closed, reset, silent);
        None while it answers (even wrongly)."""
        alive, dead, what = self._run.liveness(self._state)
        return what if dead else None

    @property
    def survives_clause(self) -> Clause:
        return survives_clause(self.spec)

    def revive(self) -> bool:
        """Restart a target that stopped answering, within this case: True once it answers again. Only with
        ``--target-restart`` (the bulk engine uses it to pin the mutant that killed the target)."""
        return self._run.revive(self._state)

    def unique(self, stem: str = "t") -> str:
        return self._run.unique(stem)

    @contextmanager
    def precondition(self, what: str):
        """Setup the case needs (``with target.precondition("topic created"): ...``): a divergence inside is
        BLOCKED (the clause under test was never reached), unless it is of that very clause."""
        self.transcript.note(f"{SETUP_NOTE} {what}")
        try:
            yield
        except Divergence as div:
            if div.clause.id == self.case_id:
                raise
            raise Blocked(what, div) from div
        finally:
            self.transcript.note(SETUP_END_NOTE)

    def fact(self, name: str, value) -> None:
        """Record a fact about the case's setting in its record (``facts``), e.g. the real client's version."""
        self._state.facts[name] = value

    def fact_of(self, name: str):
        """A fact the case recorded (:meth:`fact`), or None."""
        return self._state.facts.get(name)

    def state_coverage(self, protocol: str, coverage: dict) -> None:
        """A bulk case's state-coverage map, for its record and run.json (``coverage``)."""
        self._state.coverage[protocol] = coverage

    def keep_evidence(self, evidence) -> None:
        """Files (``reports.records.Evidence``) the run writes beside the case's transcript when it keeps it."""
        self._state.evidence.append(evidence)

    def clause(self, clause_id: str) -> Clause:
        return self.catalogue[clause_id]

    def close_all(self) -> None:
        for session in self._sessions:
            try:
                session.close()
            except OSError:
                pass
        self._sessions.clear()
