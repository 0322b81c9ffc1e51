"""What the engine needs to know about a protocol: one ``ProtocolSpec`` per protocol, pure data.

A protocol is reached through one or more *endpoints* (Fluvio has an SPU and an SC; Barco a binary producer,
an HTTP producer and a consumer API over HTTP/1.1 and h2c). Each endpoint names its transport, its default
port and, for framed TCP, how the stream is split into frames. The spec also names what the rest of the
engine asks for: the probe (a harmless request and a check of its answer), the describer that shows a frame to
a human, the capture sniffer and checks, the clause catalogue, and the reference broker's faults with the
clause each one breaks. Shared code iterates over the registry (:mod:`protocols.registry`) and never names a
protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from wirecheck.protocols.clauses import Catalogue
from wirecheck.protocols.framing import Framing

if TYPE_CHECKING:  # scapy is imported by the layers that implement ``dissect``, not by the spec
    from scapy.packet import Packet

    from wirecheck.protocols.clients import ClientDefect
    from wirecheck.protocols.states import StateModel

#: ProtocolSpec.unordered_lists: a list whose entries have no name of their own but a value the server chose (a
#: generated member id): its entries are ordered by all they hold but such values (volatile_fields)
BY_CONTENT = "*"

#: length-prefixed frames over TCP; HTTP/1.1 (h11); HTTP/2 over cleartext TCP with prior knowledge (h2)
TRANSPORTS = ("framed", "http1", "h2c")


def describe_bytes(frame: bytes) -> str:
    """The fallback describer: length and the first bytes in hex."""
    return f"{len(frame)} bytes: {frame[:48].hex()}{'...' if len(frame) > 48 else ''}"


@dataclass(frozen=True)
class Endpoint:
    name: str  # "spu", "sc", "producer", "consumer", ... (the first endpoint of a spec is its primary one)
    default_port: int
    transport: str = "framed"
    framing: Framing | None = None  # framed transport only
    max_body: int = 1 << 20  # the largest body a conforming peer may send us; larger claims are a violation
    hello: Callable[[], bytes] | None = None  # a harmless, always-valid request (probe and liveness)
    is_hello_answer: Callable[[bytes], bool] | None = None  # does this whole answer answer ``hello`` correctly?
    #: the clause a wrong answer to ``hello`` breaks (the target is alive, but its hello is wrong): the liveness
    #: probe and a named protocol's survey report the hello under it, never under the survives clause
    hello_clause: str = ""
    describe: Callable[[bytes], str] = describe_bytes  # one whole frame -> readable text, never raises
    #: one whole answer frame (target -> suite) -> text, never raises; None: ``describe`` reads both directions.
    #: For protocols where an answer can also parse as a request (Kafka), so answers are never shown as requests.
    describe_answer: Callable[[bytes], str] | None = None
    #: (answer frame, the request frame it answers or None) -> the answer as a scapy layer (the scapy adapter)
    dissect: Callable[[bytes, bytes | None], Packet] | None = None
    #: another endpoint of the same protocol whose port this one shares (e.g. HTTP/1.1 and h2c on one port)
    shares_port_with: str = ""
    #: (answer frame, request frame) -> does the answer answer that request (Kafka: the same correlation id)? Lets
    #: differential mode skip a request the server rightly left unanswered (a Produce with acks=0); None: answers
    #: come in request order, one each
    answers_request: Callable[[bytes, bytes], bool] | None = None

    def __post_init__(self):
        if self.transport not in TRANSPORTS:
            raise ValueError(f"endpoint {self.name}: unknown transport {self.transport!r}; known: {TRANSPORTS}")
        if self.transport == "framed" and self.framing is None:
            raise ValueError(f"endpoint {self.name}: a framed endpoint needs a Framing")
        if (self.hello is None) != (self.is_hello_answer is None):
            raise ValueError(f"endpoint {self.name}: hello and is_hello_answer go together")


@dataclass(frozen=True)
class CaptureSupport:
    """What the capture pipeline needs from a protocol, in a module of its own (imported lazily, on executors).

    The module (e.g. ``protocols.kafka.capture``) exposes ``sniff(client_bytes) -> bool`` (do a client's first
    bytes look like this protocol), ``check(client_frames, server_frames) -> list[Finding]`` (frame-level
    checks of one reassembled connection) and optionally ``screen(frames, side) -> (frames, findings)`` (frames
    the framing splits but the protocol forbids, e.g. empty ones). ``unframeable_clause`` is the clause a
    length that can never frame violates.
    """

    module: str
    unframeable_clause: str


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    catalogue: Catalogue
    endpoints: tuple[Endpoint, ...]
    #: reference-broker fault (namespaced "<protocol>.<fault>", the name --fault and --reference-fault take) -> the
    #: clause the suite reports FAILED when the broker runs with it; tests/quality checks that the broker's list
    #: and this one agree and that the suite catches each fault under this clause
    faults: Mapping[str, str] = field(default_factory=dict)
    #: reference-broker variant (namespaced, the name --variant and --reference-variant take) -> the clause whose
    #: other permitted reading it takes; the whole suite must pass against it (tests/quality/test_variants.py)
    variants: Mapping[str, str] = field(default_factory=dict)
    #: reference-broker fault that breaks a safety guarantee (``<name>.safety-...``) -> the anomalies of
    #: reports/safety/checker.py that catch it: no conformance exchange shows them, a safety history does
    safety_faults: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the module of the protocol's safety workload (``wirecheck safety``), empty when it has none: ``Workload``
    #: (bootstrap, topic, run, rng, log, slot) with create_topic(), role(name) and final_read(owed), ``TOPIC_PREFIX``
    #: and ``address_rewriter(target, proxy)`` (its answers rewritten to name the fault proxy; ``proxy`` also has
    #: ``forward(address)``: a listener in front of another of the target's ports); optional ``ROLES`` (role ->
    #: client processes; default send 3, txn 2, poll 2), ``BOOTSTRAP`` (the reference broker's port its clients
    #: start from when not the primary one, e.g. a controller that hands out the data port; ``--target`` names that
    #: one) and ``UNJUDGED`` (anomaly kind -> why its clients cannot show it: the checker skips exactly those). A
    #: name, not the module: the workload drives real clients, and protocols/ imports no other layer
    safety: str = ""
    #: reference-broker fault -> the client scenario clauses (``<protocol>.clients.*``) it must also break: a real
    #: client cannot work with a server that has it (tests/quality/test_client_faults.py runs each)
    client_faults: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the real clients the suite's ``clients`` cases drive (name -> protocols.clients.RealClient)
    clients: Mapping[str, object] = field(default_factory=dict)
    #: client scenario (or (client, scenario)) -> the clauses of this catalogue it depends on: a scenario that fails
    #: in a run where one of them FAILED is BLOCKED by it, not a second defect (protocols.clients.dependencies,
    #: reports.rootcause.reattribute)
    client_depends_on: Mapping[str | tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: what real clients of this protocol cannot read although the protocol permits it (protocols.clients
    #: .ClientDefect): a failing scenario whose traffic shows it is the client's own defect (XFAIL)
    client_defects: tuple["ClientDefect", ...] = ()
    capture: CaptureSupport | None = None
    #: fields of a case's parameters that name the message and its version in records (e.g. "api", "api_version")
    message_param: str = "message"
    version_param: str = "version"
    #: where the protocol's cases, strategies and scapy layers live (by convention suites.<name>,
    #: strategies.<name> and protocols.<name>.layers). The layers module exposes ``message_layers()`` (name ->
    #: layer class, every message); the strategies module ``layer_examples()`` (name -> strategy of built layers).
    suite: str = ""
    strategies: str = ""
    layers: str = ""
    #: the protocol has a login step: its suite's ``login`` module (``<suite>.login``) defines ``login(target,
    #: session)`` (targets/runner/target.py ``LoginStep``), run on every session a case opens (``target.connect``,
    #: unless ``login=False``) before the case uses it, e.g. an authentication the target requires. False: sessions
    #: are used as opened. The suite's, not named here: it drives the suite's own client, and protocols/ imports no
    #: other layer.
    login: bool = False
    #: differential mode: answer fields two conforming servers may fill differently (generated ids, hosts, ports,
    #: timestamps, throttle times, messages), as globs over the dotted field path of the decoded answer without
    #: list indices, e.g. "*.throttle_time_ms" or "MetadataResponse*.brokers.host"
    volatile_fields: tuple[str, ...] = ()
    #: differential mode only: fields one implementation always fills the same way but another conforming one may
    #: fill otherwise (advertised version lists, lengths and checksums that follow from them, layout-chosen table
    #: versions, message texts); a replay against the same server still compares them
    implementation_fields: tuple[str, ...] = ()
    #: fields whose value depends on when the server's own background work completes, not on the conversation
    #: (Kafka's group assignments: delivered once the coordinator has computed them, which Kafka 4.3+ batches and,
    #: for share groups, defers until the share partitions' state is initialised): never compared, since two runs
    #: of one server may deliver them at different heartbeats too; the cases judge them (heartbeating until
    #: assigned), and they are no value a later request carries
    timed_fields: tuple[str, ...] = ()
    #: fields that follow from the rest of the answer (a frame's length or size): never compared, since what they
    #: follow from is, and never taken for a value the server chose
    derived_fields: tuple[str, ...] = ()
    #: lists in an answer that name everything of a kind on the server (glob as above, of the list -> the entry's
    #: field that names it, "" for a list of names): a replay compares only the entries whose name the case itself
    #: sent, since what other cases of the failing run left on the server is not re-created; differential mode
    #: likewise compares the entries the case has named so far (the target also holds what unmirrored traffic, a
    #: real client's or another run's, created)
    server_listings: Mapping[str, str] = field(default_factory=dict)
    #: lists in an answer whose order the server chooses (glob as above -> the entry's field to order them by),
    #: e.g. the partitions of a ListOffsets answer: compared in the order of that field (BY_CONTENT: of all the
    #: entry holds but what the server chose)
    unordered_lists: Mapping[str, str] = field(default_factory=dict)
    #: lists in an answer where an entry that says nothing may as well be absent (glob as above -> the entry's fields
    #: that must all be empty: 0, null, empty), e.g. a share fetch's partition with no records, no error: such entries
    #: are left out before comparing, and a list they emptied is an empty list
    silent_entries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: differential mode: answer fields a clause covers (glob as above -> clause id); a difference in any other
    #: field is reported under "<name>.differential.same-answer" (SHOULD)
    field_clauses: Mapping[str, str] = field(default_factory=dict)
    #: differential mode: fields the layers leave as bytes that hold structure of their own (glob as above -> the
    #: function turning the bytes into plain values), e.g. Kafka's record batches
    field_decoders: Mapping[str, Callable[[bytes], object]] = field(default_factory=dict)
    #: replay: (request as recorded, the same request with server-chosen values carried over) -> the edited
    #: request with the checksums the protocol embeds (e.g. record batch CRCs) made valid again; None: none to fix
    reseal: Callable[[bytes, bytes], bytes] | None = None
    #: differential mode: answer fields holding a value the server chooses that means one thing wherever it
    #: appears (glob as above -> its kind, e.g. "broker-id"). Two servers choose differently (broker 0, broker 111),
    #: so such a field is never a difference by itself: the target's value is mapped one to one onto the oracle's
    #: at its first sighting, and every later sighting must keep to that mapping
    chosen_fields: Mapping[str, str] = field(default_factory=dict)
    #: request fields that carry such a value back (glob over "<Message>.<path>" without indices -> its kind): the
    #: oracle receives its own value there, as its own client would have sent it
    chosen_request_fields: Mapping[str, str] = field(default_factory=dict)
    #: kind -> the values of that kind that are no choice but a meaning of their own (Kafka's -1: no broker; a
    #: member epoch's 0: join), compared as they are; a kind not named here has -1
    chosen_sentinels: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: kinds whose values count the server's own changes (Kafka's group epochs) -> the field beside such a value
    #: whose value scopes the count ("" for none; Kafka's "MemberId": each member's epoch is its own): two servers
    #: may count different steps, so any two values agree (a sentinel still only with itself) and requests carry the
    #: oracle's value last seen beside the target's in that scope, not a one-to-one mapping
    chosen_counters: Mapping[str, str] = field(default_factory=dict)
    #: differential mode: (request frame, answer frame) -> does the answer only say "not yet" (an error the protocol
    #: defines as transient: a coordinator loading, a new partition's leader not in place)? Where the target
    #: answered otherwise, the oracle is asked the same request again until it does too (bounded), as a client
    #: would: how soon a server gets ready is its own, not an answer to compare
    not_yet: Callable[[bytes, bytes], bool] | None = None
    #: (request frame, rewrite(path, value, the fields beside it) -> value) -> the frame with every field rewritten
    #: (the same bytes when nothing changed); needed by ``chosen_request_fields``
    map_request: Callable[[bytes, Callable[[str, object, dict], object]], bytes] | None = None
    #: the reaction states the bulk fuzzer maps and is guided by (protocols/states.py; ``protocols/<name>/states.py``)
    states: "StateModel | None" = None

    def __post_init__(self):
        if not self.endpoints:
            raise ValueError(f"{self.name}: a protocol needs at least one endpoint")
        names = [e.name for e in self.endpoints]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: duplicate endpoint names {names}")
        object.__setattr__(self, "suite", self.suite or f"wirecheck.suites.{self.name}")
        object.__setattr__(self, "strategies", self.strategies or f"wirecheck.strategies.{self.name}")
        object.__setattr__(self, "layers", self.layers or f"wirecheck.protocols.{self.name}.layers")

    def endpoint(self, name: str | None = None) -> Endpoint:
        """The named endpoint, or the primary (first) one."""
        if name is None:
            return self.endpoints[0]
        for endpoint in self.endpoints:
            if endpoint.name == name:
                return endpoint
        raise KeyError(f"{self.name} has no endpoint {name!r}; it has {[e.name for e in self.endpoints]}")

    # The primary endpoint's properties, for code that talks to a single-endpoint protocol.

    @property
    def primary(self) -> Endpoint:
        return self.endpoints[0]

    @property
    def framing(self) -> Framing | None:
        return self.primary.framing

    @property
    def default_port(self) -> int:
        return self.primary.default_port

    @property
    def max_body(self) -> int:
        return self.primary.max_body

    @property
    def hello(self) -> Callable[[], bytes] | None:
        return self.primary.hello

    @property
    def is_hello_answer(self) -> Callable[[bytes], bool] | None:
        return self.primary.is_hello_answer

    @property
    def describe(self) -> Callable[[bytes], str]:
        return self.primary.describe

    @property
    def describe_answer(self) -> Callable[[bytes], str]:
        return self.primary.describe_answer or self.primary.describe
