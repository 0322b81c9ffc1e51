"""Differential mode (``--differential``): every conversation a case has with the target is also had, byte for
byte, with the bundled reference broker (the oracle), and each answer is compared with the oracle's.

Both answers are decoded with the protocol's scapy layers (``Endpoint.dissect``) and flattened to dotted field
paths (``MetadataResponse.brokers[0].port``). Fields that two conforming servers may fill differently are
declared per protocol, never decided here: ``ProtocolSpec.volatile_fields`` (ids, hosts, ports, timestamps,
throttle times: chosen anew on every run) and ``implementation_fields`` (advertised version lists, lengths and
checksums that follow from them, layout-chosen versions: the same on every run of one server). Values a server
chooses that mean one thing wherever they appear (``chosen_fields``: Kafka's broker ids, 0 here and 111 there) are
compared through a one-to-one mapping learnt at their first sighting, and written back into the requests that
carry them (``targets.server_chosen``): a different choice is never a difference. Where the protocol negotiates
versions, the cases pick a version both servers advertise (``targets.client.AdvertisedVersions``).

The oracle is a clean bundled reference broker, or any server given with ``--oracle PROTOCOL=HOST:PORT``.

A difference is evidence, not a verdict: the reference broker is one conforming reading of the spec, and a
correct server may read it otherwise wherever the spec permits (the broker's variants prove the suite accepts
each such reading). So the case's own checks judge the target exactly as in a run without ``--differential``,
and the first difference on each connection is recorded beside the verdict (the case record's message, the
transcript, the terminal summary), named by its field path and by the clause that covers the field
(``ProtocolSpec.field_clauses``, else ``<name>.differential.same-answer``). Only ``--strict`` makes a case that
passed its checks but answered otherwise DIVERGENT, failing the run. After the first difference on a connection
the two servers' states may differ, so that connection's later answers are not compared; every case counts the
answers it compared against the answers exchanged (:class:`Tally`), and a case that compared fewer says so in its
record ("compared 3 of 9 answers"), never a silent OK. Values the target chose that later requests carry (a member
id) go to the oracle as the values it chose itself (``targets.server_chosen``). What ended a
connection (closed or reset) counts as the same outcome. An endpoint without layers (e.g. Fluvio's SC) is still
mirrored, so that both servers hold the same state, and only its outcomes are compared.
"""

from __future__ import annotations

import re
import socket
import time
from fnmatch import fnmatchcase
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from wirecheck.protocols.clauses import Clause, differential_clause_id
from wirecheck.protocols.spec import BY_CONTENT, Endpoint, ProtocolSpec
from wirecheck.protocols.verdicts import Differs
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.session import Session
from wirecheck.targets.transport.outcome import Outcome, Reply
from wirecheck.targets.transport.stream import Stream

if TYPE_CHECKING:
    from wirecheck.targets.server_chosen import ServerChosen
    from wirecheck.targets.transport.h2c import H2Session
    from wirecheck.targets.transport.http1 import Http1Session

_INDEX = re.compile(r"\[\d+\]")
#: why the suite's answers after a real client started are counted apart (Target._count_apart)
CLIENT_APART = "answers after a real client talked to the target alone"
MAX_SHOWN = 1500  # characters of each decoded answer in a divergence
#: how long the oracle may keep saying "not yet" (MirroredSession._once_oracle_ready): Kafka's loading a fresh
#: __consumer_offsets took up to about 3 s on a busy two-core machine (suites/kafka/client.py READY_WAIT_S)
ORACLE_READY_WAIT_S = 15.0
ORACLE_BACKOFF_S, ORACLE_BACKOFF_MAX_S = 0.1, 1.0  # Kafka's retry.backoff.ms and retry.backoff.max.ms (KIP-580)
REQUEST_LIMIT = 1 << 31  # hostile requests may claim any length; they are split here only to pair answers


Decoders = Callable[[str], Callable[[bytes], object] | None]


def flatten(packet, prefix: str = "", decoder: Decoders = lambda path: None) -> dict[str, object]:
    """A scapy packet as {dotted field path: value}: nested packets, lists and JSON-like values included, a list
    as its elements (``path[i]``) and its length (``path.count``); ``decoder(path)`` may turn bytes into values."""
    from scapy.packet import NoPayload

    fields: dict[str, object] = {}
    path = f"{prefix}{type(packet).__name__}"
    for described in packet.fields_desc:
        _leaves(packet.getfieldval(described.name), f"{path}.{described.name}", fields, decoder)
    if not isinstance(packet.payload, NoPayload):
        fields.update(flatten(packet.payload, prefix, decoder))
    return fields


def _leaves(value, key: str, out: dict[str, object], decoder: Decoders) -> None:
    from scapy.packet import Packet

    if isinstance(value, (bytes, bytearray)) and (decode := decoder(key)) is not None:
        value = decode(bytes(value))
    if isinstance(value, Packet):
        out.update(flatten(value, key + ".", decoder))
    elif isinstance(value, dict):
        for name, item in value.items():
            _leaves(item, f"{key}.{name}", out, decoder)
        out[f"{key}.keys"] = sorted(map(str, value))
    elif isinstance(value, list) and any(isinstance(v, (Packet, dict, list)) for v in value):
        for i, item in enumerate(value):
            _leaves(item, f"{key}[{i}]", out, decoder)
        out[f"{key}.count"] = len(value)
    else:
        out[key] = value


_ANY_INDEX = re.compile(r"\[(\d+)\]")


def own_entries(flat: dict[str, object], listings: Mapping[str, str], sent: bytes | bytearray | None,
                chosen: tuple[str, ...] = ()) -> dict[str, object]:
    """``flat`` with each server-wide listing cut to the entries whose name occurs in ``sent`` (every entry when
    ``sent`` is None), renumbered in the order of their names (the order a server lists everything it has in is its
    own); a listing may sit inside another list (each DescribeConfigs result lists every config of its resource).
    A list named BY_CONTENT is ordered by its entries' fields but those matching ``chosen`` (globs)."""
    def named(value) -> bool:
        return sent is None or (value if isinstance(value, bytes) else str(value).encode()) in sent

    out: dict[str, object] = {}
    entries: dict[tuple[str, str], dict[int, dict[str, object]]] = {}  # (list path, its name field): entries
    for path, value in flat.items():
        entry = next(((path[:index.start()], int(index.group(1)), path[index.end():], listings[pattern])
                      for index in _ANY_INDEX.finditer(path)
                      if (pattern := _first_match(path[:index.start()], listings)) is not None), None)
        if entry is not None:
            base, number, rest, name_field = entry
            entries.setdefault((base, name_field), {}).setdefault(number, {})[rest] = value
        elif path.endswith(".count") and _first_match(path[:-len(".count")], listings) is not None:
            continue  # counted again below
        elif isinstance(value, list) and (pattern := _first_match(path, listings)) is not None:
            if listings[pattern]:  # a listing with no entries at all: as an emptied one
                out[f"{path}.count"] = 0
            else:  # a list of names (or of plain entries), in their own order as the entries above
                out[path] = sorted((item for item in value if named(item)), key=repr)
        else:
            out[path] = value
    for (base, name_field), by_index in entries.items():
        def key(fields: dict[str, object], base=base, name_field=name_field) -> str:
            if name_field == BY_CONTENT:
                return repr(sorted((rest, repr(value)) for rest, value in fields.items()
                                   if _first_match(f"{base}{rest}", chosen) is None))
            return str(_entry_name(fields, name_field))
        own = sorted((fields for _, fields in sorted(by_index.items()) if named(_entry_name(fields, name_field))),
                     key=key)
        for number, fields in enumerate(own):
            out.update({f"{base}[{number}]{rest}": value for rest, value in fields.items()})
        out[f"{base}.count"] = len(own)
    return out


def without_silent(flat: dict[str, object], pattern: str, silent: tuple[str, ...]) -> dict[str, object]:
    """``flat`` without the entries of the lists matching ``pattern`` whose ``silent`` fields are all empty (0, null,
    empty), the others renumbered in their order; a list left with no entry is an empty list (``path: []``), as
    flatten writes one."""
    entries: dict[str, dict[int, dict[str, object]]] = {}
    out: dict[str, object] = {}
    for path, value in flat.items():
        index = next((index for index in _ANY_INDEX.finditer(path)
                      if _first_match(path[:index.start()], (pattern,))), None)
        if index is not None:
            entries.setdefault(path[:index.start()], {}).setdefault(int(index.group(1)), {})[path[index.end():]] = value
        elif not (path.endswith(".count") and _first_match(path[:-len(".count")], (pattern,))):
            out[path] = value
    for base, by_index in entries.items():
        kept = [fields for _, fields in sorted(by_index.items()) if not _says_nothing(fields, silent)]
        for number, fields in enumerate(kept):
            out.update({f"{base}[{number}]{rest}": value for rest, value in fields.items()})
        if kept:
            out[f"{base}.count"] = len(kept)
        else:
            out[base] = []
    return out


def _says_nothing(fields: dict[str, object], silent: tuple[str, ...]) -> bool:
    """Are the entry's ``silent`` fields (its own, not a list's below it) all empty: 0, null, empty, no entries?"""
    for rest, value in fields.items():
        own = rest if "[" not in rest else rest[:rest.index("[")]
        name = own.rpartition(".")[2]
        if name == "count" and "[" not in rest:  # a list's length: empty when 0
            name, empty = own[:-len(".count")].rpartition(".")[2], not value
        else:  # a list's entry is never empty; a value is when 0, null or empty
            empty = "[" not in rest and value in (0, None, b"", "", [])
        if name in silent and not empty:
            return False
    return True


def _entry_name(fields: dict[str, object], name: str):
    """An entry's own ``name`` field, directly or inside the entry's layer (``.Topic.Name``); never one nested in
    a list below it."""
    return next((value for rest, value in fields.items() if "[" not in rest and rest.rpartition(".")[2] == name),
                b"\0")


def _first_match(path: str, patterns):
    """The first glob among ``patterns`` that ``path`` matches without its list indices, or None."""
    bare = _INDEX.sub("", path)
    return next((pattern for pattern in patterns if fnmatchcase(bare, pattern)), None)


def _outcome(reply: Reply) -> str:
    if reply.is_frame:
        return "an answer"
    if reply.ended:
        return "the connection ended"
    return str(reply.outcome.value)


@dataclass
class Tally:
    """One case's answers on mirrored connections: how many the target gave (or connections it ended) and how many
    of them were compared with the oracle's, and why comparing stopped before the last (the first reason)."""

    exchanged: int = 0
    compared: int = 0
    stopped: str = ""
    #: answers counted apart, by why: answers no equality with another server judges (a hostile mutant's, judged
    #: by the reaction model; the suite's after a real client talked to the target alone), neither exchanged nor
    #: compared
    apart: dict[str, int] = field(default_factory=dict)

    def stop(self, why: str) -> None:
        self.stopped = self.stopped or why

    def set_apart(self, why: str) -> None:
        self.apart[why] = self.apart.get(why, 0) + 1

    @property
    def complete(self) -> bool:
        return self.compared == self.exchanged

    def text(self) -> str:
        """"compared 3 of 9 answers (why it stopped)"; "" when every answer was compared."""
        if self.complete:
            return ""
        return f"compared {self.compared} of {self.exchanged} answers" + (f" ({self.stopped})" if self.stopped else "")

    def as_dict(self) -> dict:
        return {"compared": self.compared, "exchanged": self.exchanged, "stopped": self.stopped or None} | \
            ({"apart": dict(self.apart)} if self.apart else {})


@dataclass(frozen=True)
class Difference:
    """The first answer on one connection that the target and the oracle gave otherwise."""

    clause: Clause  # the clause that covers the field (or the protocol's differential.same-answer)
    path: str
    target: object
    reference: object
    requests: int  # requests on the connection up to the differing answer
    answers: tuple[str, str]  # (target's, reference broker's) decoded, cut to MAX_SHOWN
    conversation: str  # the last requests on the connection, hex

    def summary(self) -> str:
        return f"first difference at {self.path}: target {self.target!r}, reference broker {self.reference!r}"[:600]

    def as_divergence(self) -> Differs:
        """--strict: the difference as a failure of the case (DIVERGENT)."""
        return Differs(self.clause, self.path, f"the reference broker's answer: {self.answers[1]}", self.answers[0],
                       requests=self.requests, note=f"{self.summary()}; {self.requests} request(s) on this "
                                                    f"connection: {self.conversation}"[:2000])


class Comparator:
    """Compares one endpoint's answers from the target and the oracle."""

    def __init__(self, spec: ProtocolSpec, endpoint: Endpoint, across_implementations: bool = False,
                 sent: bytes | bytearray = b""):
        """``across_implementations``: the two answers come from different servers (differential mode), so the
        protocol's ``implementation_fields`` are not compared either (a replay compares a server with itself).
        ``sent``: every byte the case sent (a replay's whole conversation; in differential mode a buffer that grows
        as the case sends): the protocol's ``server_listings`` are compared only in the entries those bytes name,
        since everything else in a listing is what others made on the server."""
        self.spec = spec
        self.sent = sent
        self.endpoint = endpoint
        self.ignored = spec.volatile_fields + spec.derived_fields + spec.timed_fields + \
            (spec.implementation_fields if across_implementations else ())
        self.describe = endpoint.describe_answer or endpoint.describe
        self._decoders = dict(spec.field_decoders)

    def decoder(self, path: str):
        pattern = _first_match(path, self._decoders)
        return None if pattern is None else self._decoders[pattern]

    def fields(self, answer: bytes, request: bytes | None, volatile: bool = False) -> dict[str, object] | None:
        """The answer's fields, volatile ones left out (or, with ``volatile``, only those), or None when the
        layers cannot decode it."""
        if self.endpoint.dissect is None:
            return None
        try:
            packet = self.endpoint.dissect(answer, request)
        except Exception:  # noqa: BLE001 - an answer the layers cannot decode is compared as bytes
            return None
        patterns = self.ignored
        flat = flatten(packet, decoder=self.decoder)
        if self.spec.server_listings:
            flat = own_entries(flat, self.spec.server_listings, self.sent)
        for pattern, fields in self.spec.silent_entries.items():  # innermost first, as declared
            flat = without_silent(flat, pattern, fields)
        # each server's own order: compared in the order of the entries' keys, one list at a time (so a list inside
        # another, a group's members, is ordered too)
        for pattern, key in self.spec.unordered_lists.items():
            flat = own_entries(flat, {pattern: key}, None, self.spec.volatile_fields)
        if volatile:  # the values the server chose (not those of its implementation, nor what follows from the rest)
            return {path: value for path, value in flat.items() if _first_match(path, self.spec.volatile_fields)}
        return {path: value for path, value in flat.items() if _first_match(path, patterns) is None}

    def chosen_kind(self, path: str) -> str | None:
        """The kind of server-chosen value a field holds (``ProtocolSpec.chosen_fields``), or None."""
        pattern = _first_match(path, self.spec.chosen_fields)
        return None if pattern is None else self.spec.chosen_fields[pattern]

    def difference(self, request: bytes | None, ours: Reply, oracle: Reply,
                   chosen: "ServerChosen | None" = None) -> tuple[str, object, object] | None:
        """(first differing field path, target's value, oracle's value), or None when they agree. With ``chosen``,
        the protocol's chosen fields agree when they keep to its one-to-one mapping (learnt here at first sight);
        without, they must be equal (a replay: the same server)."""
        if _outcome(ours) != _outcome(oracle):
            return "outcome", _outcome(ours), _outcome(oracle)
        if not ours.is_frame or self.endpoint.dissect is None:  # without layers, only the outcome is compared
            return None
        mine, theirs = self.fields(ours.frame, request), self.fields(oracle.frame, request)
        if mine is None or theirs is None:  # what the layers cannot decode is compared byte for byte
            if mine is None and theirs is None:
                return None if ours.frame == oracle.frame else ("bytes", ours.frame[:64].hex(), oracle.frame[:64].hex())
            return "decoding", "decodes" if mine is not None else "does not decode", \
                "decodes" if theirs is not None else "does not decode"
        chosen_beside: list[dict[str, object]] = []  # the oracle's volatile fields, read once a scope is needed

        def beside(path: str, name: str):
            if not chosen_beside:
                chosen_beside.append(self.fields(oracle.frame, request, volatile=True) or {})
            field_path = f"{path.rsplit('.', 1)[0]}.{name}"
            return chosen_beside[0].get(field_path, theirs.get(field_path))

        for path in list(mine) + [p for p in theirs if p not in mine]:
            a, b = mine.get(path, "<absent>"), theirs.get(path, "<absent>")
            kind = self.chosen_kind(path) if chosen is not None and path in mine and path in theirs else None
            if kind is None or chosen is None:
                if a != b:
                    return path, a, b
                continue
            # a counted value's scope as the oracle wrote it beside the value (requests carry the oracle's too)
            scope = chosen.scope_of(kind, lambda name, path=path: beside(path, name))
            if not chosen.same(kind, a, b, scope):
                return path, a, b
        return None

    def clause_for(self, path: str) -> Clause:
        pattern = _first_match(path, self.spec.field_clauses)
        clause_id = self.spec.field_clauses[pattern] if pattern else differential_clause_id(self.spec.name)
        return self.spec.catalogue[clause_id]

    def shown(self, reply: Reply) -> str:
        text = self.describe(reply.frame) if reply.is_frame else str(reply)
        return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


class RequestQueue:
    """The request frames sent on one connection, in order: servers answer in request order, so an answer is
    decoded with the oldest request not yet answered."""

    def __init__(self, framing, answers_request: Callable[[bytes, bytes], bool] | None = None):
        self._framing = framing
        self._answers_request = answers_request  # Endpoint.answers_request
        self._unsplit = bytearray()  # sent bytes not yet a whole frame
        self._frames: list[bytes] = []
        #: the requests the last answer passed over: left unanswered by the server that gave it
        self.passed_over: list[bytes] = []

    def sent(self, data: bytes) -> None:
        self._unsplit += data
        frames, used, problem = self._framing.split(self._unsplit, REQUEST_LIMIT)
        self._frames += frames
        del self._unsplit[:len(self._unsplit) if problem else used]  # an unframeable request never gets a frame

    @property
    def waiting(self) -> bool:
        """Are requests sent that no answer has answered yet?"""
        return bool(self._frames or self._unsplit)

    def awaits(self, answer: bytes) -> bool:
        """Does the answer answer a request still waiting (one sent after the request being answered now)?"""
        return self._answers_request is not None and any(self._answers_request(answer, r) for r in self._frames)

    def answered(self, answer: bytes | None = None) -> bytes | None:
        """The request an answer frame answers (None when none is waiting). Where the endpoint tells which request
        an answer answers, requests left unanswered before it (Kafka's acks=0) are skipped; otherwise such a
        request pairs later answers with the wrong request, and both sides are decoded with the same one, so
        equal answers still compare equal."""
        self.passed_over = []
        if answer is not None and self._answers_request is not None:
            for number, request in enumerate(self._frames):
                if self._answers_request(answer, request):
                    self.passed_over = self._frames[:number]
                    del self._frames[:number + 1]
                    return request
        return self._frames.pop(0) if self._frames else None


class _Sockets:
    """``session.sock`` of a mirrored session: a half-close reaches both servers; anything else the target's."""

    def __init__(self, ours: socket.socket, oracle: socket.socket):
        self._ours, self._oracle = ours, oracle

    def shutdown(self, how: int) -> None:
        for sock in (self._oracle, self._ours):
            try:
                sock.shutdown(how)
            except OSError:
                pass

    def __getattr__(self, name):
        return getattr(self._ours, name)


class MirroredSession:
    """A framed session to the target whose every byte also goes to the oracle, and whose every answer is
    compared with the oracle's answer to the same bytes. Reads as a :class:`targets.session.Session`."""

    def __init__(self, ours: Session, oracle: Session, comparator: Comparator,
                 found: Callable[[Difference], None] = lambda d: None,
                 chosen: "ServerChosen | None" = None, case_sent: bytearray | None = None,
                 tally: Tally | None = None):
        self._ours, self._oracle, self._comparator, self._found = ours, oracle, comparator, found
        self.tally = tally if tally is not None else Tally()  # the case's (shared by its connections)
        self._ended = False  # the target ended this connection (counted once)
        self._case_sent = case_sent  # every byte the case sent on any connection (the comparator reads it)
        #: the case's values the target chose and what the oracle chose for them: a request carrying the target's
        #: (the member id it handed out) goes to the oracle with the oracle's, as its own client would send it
        self._chosen = chosen
        self._sent: list[bytes] = []  # this connection's requests so far: the conversation a difference shows
        self._requests = RequestQueue(ours.framing, ours.endpoint.answers_request)
        self._oracle_early: list[Reply] = []  # the oracle's answers to requests the target has not answered yet
        self.sock = _Sockets(ours.sock, oracle.sock)
        #: False once the answers depend on when each server's own timers fire (Target.depends_on_server_timers),
        #: and after this connection's first difference
        self.comparing = True
        #: while set, why this connection's answers are counted apart (:meth:`answers_apart`)
        self.apart: str | None = None
        #: the target and the oracle are both the bundled reference broker (one implementation, one parser): a
        #: hostile request's answers are compared too, a difference there being a fault, not another reading
        self.same_implementation = False
        self.oracle_reply: Reply | None = None  # the reference broker's last answer (its advertised versions)
        #: why this connection's later answers are counted apart once the oracle ended it by a reaction the
        #: reaction model permits while the target kept it open ("" while the oracle has it)
        self._oracle_gone = ""

    def __getattr__(self, name):
        return getattr(self._ours, name)

    # what every session offers (targets.session.FramedSession), the target's: as __getattr__ would find them
    @property
    def endpoint(self) -> Endpoint:
        return self._ours.endpoint

    @property
    def transcript(self) -> Transcript:
        return self._ours.transcript

    @property
    def deadline(self) -> float:
        return self._ours.deadline

    @deadline.setter
    def deadline(self, seconds: float) -> None:
        """A case's longer (or shorter) wait for this connection: the target's session waits so, and the oracle's."""
        self._ours.deadline = self._oracle.deadline = seconds

    @property
    def stream(self) -> Stream:
        return self._ours.stream

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._oracle.close()
        self._ours.close()

    def end_writing(self) -> None:
        self._oracle.end_writing()
        self._ours.end_writing()

    def send(self, data: bytes, decode: bool = True) -> bool:
        self._sent.append(bytes(data))
        if self._case_sent is not None:
            self._case_sent += data
        self._requests.sent(data)
        self._oracle.send(self._chosen.apply(data) if self._chosen else data, decode=decode)
        return self._ours.send(data, decode=decode)

    def recv(self, deadline: float | None = None) -> Reply:
        ours = self._ours.recv(deadline)
        # The oracle is not under test: when the target reacted, a loaded machine must not make the oracle's
        # reaction look like silence, so it gets twice as long; when the target was silent, as long as it had.
        patience = deadline if deadline is not None else self._ours.deadline
        request = self._requests.answered(ours.frame) if ours.is_frame else None
        oracle = self._oracle_answer(request, patience if ours.outcome is Outcome.SILENT else 2 * patience)
        oracle = self._once_oracle_ready(request, ours, oracle, 2 * patience)
        self.oracle_reply = oracle
        self._check(request, ours, oracle)
        if self._chosen is not None:
            self._chosen.learn(self._comparator, request, ours, oracle)
        return ours

    def request(self, data: bytes, deadline: float | None = None) -> Reply:
        self.send(data)
        return self.recv(deadline)

    def expect_end(self, deadline: float | None = None) -> Reply:
        ours = self._ours.expect_end(deadline)
        oracle = self._oracle.expect_end(deadline)
        self._count(ours)
        if self.comparing and self.apart is None and _outcome(ours) != _outcome(oracle) and (ours.ended or oracle.ended):
            self._differs("outcome", _outcome(ours), _outcome(oracle), ours, oracle)
        return ours

    def answers_apart(self, why: str | None) -> None:
        """From here on (until called with None) this connection's answers are not answers to compare: they are
        counted apart under ``why`` (:class:`Tally`). A hostile mutant may be parsed otherwise by every server, each
        reaction judged by the reaction model, so equality with the oracle says nothing about it; when the oracle
        ends the connection meanwhile (a reaction the model permits), the rest of the connection is not compared."""
        self.apart = why

    def _count(self, ours: Reply) -> None:
        """One more answer exchanged: a frame, a silence, or the end of the connection (once: reading a connection
        the target ended exchanges nothing more)."""
        if ours.ended:
            if self._ended:
                return
            self._ended = True
        if self.apart is not None:
            self.tally.set_apart(self.apart)
            return
        if self._oracle_gone:  # the oracle no longer has this connection: its later answers are no exchange with it
            self.tally.set_apart(self._oracle_gone)
            return
        self.tally.exchanged += 1
        self.tally.compared += self.comparing

    def _oracle_answer(self, request: bytes | None, patience: float) -> Reply:
        """The oracle's answer to the request the target's answer answers. Where answers name their request
        (``Endpoint.answers_request``), each server may answer in its own order (Pravega's segment store answers a
        request when it completes): an oracle answer to a request still waiting is kept for when the target answers
        that one, and the oracle's answers to requests the target left unanswered (its answer passed over them: a
        hostile mutant it stayed silent on, a Produce with acks=0) are read past (whether such a request is
        answered is the reaction model's business, or the case's)."""
        answers = self._ours.endpoint.answers_request
        if answers is not None and request is not None:
            for number, early in enumerate(self._oracle_early):
                if answers(early.frame, request):
                    return self._oracle_early.pop(number)
        oracle = self._oracle.recv(patience)
        passed = kept = 0
        while answers is not None and request is not None and oracle.is_frame and not answers(oracle.frame, request):
            if any(answers(oracle.frame, left) for left in self._requests.passed_over):
                passed += 1
            elif self._requests.awaits(oracle.frame):
                self._oracle_early.append(oracle)
                kept += 1
            else:
                break
            oracle = self._oracle.recv(patience)
        if passed or kept:
            self._ours.transcript.note(f"differential: the oracle answered in another order: {kept} answer(s) kept "
                                       f"for later requests, {passed} to requests the target left unanswered read past")
        return oracle

    def _once_oracle_ready(self, request: bytes | None, ours: Reply, oracle: Reply, patience: float) -> Reply:
        """The oracle's answer once it no longer says "not yet" (``ProtocolSpec.not_yet``: a coordinator loading, a
        new partition's leader not in place) where the target answered: the same request asked again after a
        backoff, for up to ORACLE_READY_WAIT_S, as a client would. Only a request nothing was sent after (the
        oracle answers in order), and only while this connection is compared."""
        not_yet = self._comparator.spec.not_yet
        if (not_yet is None or request is None or not (ours.is_frame and oracle.is_frame) or self._requests.waiting
                or not self.comparing or self.apart is not None or not not_yet(request, oracle.frame)
                or not_yet(request, ours.frame)):
            return oracle
        deadline, backoff, asked = time.monotonic() + ORACLE_READY_WAIT_S, ORACLE_BACKOFF_S, 0
        while oracle.is_frame and not_yet(request, oracle.frame) and time.monotonic() + backoff < deadline:
            time.sleep(backoff)
            backoff = min(2 * backoff, ORACLE_BACKOFF_MAX_S)
            self._oracle.send(self._chosen.apply(request) if self._chosen else request)
            oracle = self._oracle.recv(patience)
            asked += 1
        if asked:
            self._ours.transcript.note(f"differential: the oracle answered \"not yet\" where the target answered; "
                                       f"asked it the same request {asked} more time(s)")
        return oracle

    def _check(self, request: bytes | None, ours: Reply, oracle: Reply) -> None:
        """Compare the two answers to ``request`` (while comparing)."""
        self._count(ours)
        if self.apart is not None:
            if self.comparing and oracle.ended and not ours.ended:
                self.comparing = False
                self.tally.stop(f"stopped: the oracle ended a connection the target kept open ({self.apart}; the "
                                f"reaction model permits both)")
                self._oracle_gone = f"answers on a connection the oracle ended ({self.apart}; the reaction model " \
                                    f"permits both)"
            return
        if self.comparing:
            found = self._comparator.difference(request, ours, oracle, self._chosen)
            if found is not None:
                self._differs(*found, ours, oracle)

    def _differs(self, path: str, mine, theirs, ours: Reply, oracle: Reply) -> None:
        comparator = self._comparator
        difference = Difference(comparator.clause_for(path), path, mine, theirs, len(self._sent),
                                (comparator.shown(ours), comparator.shown(oracle)),
                                " | ".join(frame.hex()[:200] for frame in self._sent[-8:]))
        self.comparing = False  # the servers' states may differ from here on
        self.tally.stop(f"stopped at a difference in {path}, request {len(self._sent)} of its connection")
        self._ours.transcript.note(f"differential: {difference.summary()} (later answers on this connection not "
                                   f"compared)")
        self._found(difference)


def mirrored(ours: Session | Http1Session | H2Session, oracle: Session | Http1Session | H2Session, spec: ProtocolSpec,
             endpoint: Endpoint, found: Callable[[Difference], None], chosen: "ServerChosen | None" = None,
             case_sent: bytearray | None = None,
             tally: Tally | None = None) -> Session | Http1Session | H2Session | MirroredSession:
    """``ours`` mirrored to ``oracle`` when the endpoint is framed (HTTP endpoints are not compared yet); each
    connection's first difference goes to ``found``; ``chosen`` carries the values the servers chose, and
    ``case_sent`` collects what the case sent (both shared by the case's connections)."""
    if endpoint.transport != "framed":
        oracle.close()
        return ours
    assert isinstance(ours, Session) and isinstance(oracle, Session)  # a framed endpoint's sessions
    case_sent = bytearray() if case_sent is None else case_sent
    comparator = Comparator(spec, endpoint, across_implementations=True, sent=case_sent)
    return MirroredSession(ours, oracle, comparator, found, chosen, case_sent, tally)
