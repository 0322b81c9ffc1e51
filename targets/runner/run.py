"""The runner: one run's options, its targets (given and surveyed once, or the launched reference broker), the
event stream, reproducer lines, the liveness probe and what happens when a target dies (health.py). Knows nothing
about pytest (targets/plugin.py adapts it)."""

from __future__ import annotations

import itertools
import secrets
import shlex
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wirecheck.protocols.spec import ProtocolSpec
from wirecheck.reports.baseline import Baseline, BaselineError
from wirecheck.protocols.verdicts import Divergence, HarnessError, TargetDied
from wirecheck.targets import probe
from wirecheck.targets.fuzz import FuzzBudget
from wirecheck.targets.transport import client_context
from wirecheck.targets.runner import health
from wirecheck.targets.runner.case import CaseState, survives_clause
from wirecheck.targets.runner.target_info import TargetInfo
from wirecheck.targets.runner.survey import survey
from wirecheck.targets.upstream import title as upstream_title
from wirecheck.targets.runner.validate import UsageProblem, parse_target
from wirecheck.targets.server_chosen import ServerChosen
from wirecheck.reports.events import EventStream
from wirecheck.reports.records import new_run_id, run_head

__all__ = ["Run", "RunOptions", "TargetInfo", "UsageProblem"]

#: what every reference broker the suite starts runs with (before --reference-arg): retention keeps partitions
#: small over a long run; a replay of a case against a fresh broker needs the same settings
REFERENCE_ARGS = ("--retention-records", "5000")


@dataclass
class RunOptions:
    targets: list[str] = field(default_factory=list)  # "[PROTOCOL=]HOST:PORT"
    protocol: str | None = None  # the protocol of a bare HOST:PORT (else probed)
    strict: bool = False
    deadline: float = 2.0
    baseline: str | None = None
    report_dir: str = "wirecheck-reports"
    keep_transcripts: bool = False
    pcap: bool = False
    reference_faults: list[str] = field(default_factory=list)
    reference_variants: list[str] = field(default_factory=list)  # other permitted readings (the oracle takes none)
    reference_args: list[str] = field(default_factory=list)  # more arguments for the launched reference broker
    stop_at_clause: list[str] = field(default_factory=list)
    target_options: list[str] = field(default_factory=list)  # "PROTOCOL.KEY=VALUE"
    tls: bool = False  # speak TLS to the given targets
    tls_ca: str | None = None
    tls_verify: bool = True
    hypothesis_seed: object = None
    argv: list[str] = field(default_factory=list)
    target_restart: str | None = None  # a shell command that (re)starts the given target(s)
    confirm: int | None = None  # re-runs of a failed case (None: the fuzz profile's default)
    differential: bool = False  # also send every conversation to a clean reference broker and compare the answers
    oracles: list[str] = field(default_factory=list)  # --oracle "PROTOCOL=HOST:PORT": that server as the oracle
    upstream: list[str] = field(default_factory=list)  # "PROTOCOL[@VERSION]": the real server, started as the target


def _baseline(path: str) -> Baseline:
    try:
        return Baseline.load(path)
    except BaselineError as exc:
        raise UsageProblem(f"--baseline {exc}") from None


class Run:
    """Per-process state of a run. In an xdist worker, ``run_id`` comes from the controller."""

    def __init__(self, options: RunOptions, budget: FuzzBudget, specs: dict[str, ProtocolSpec],
                 worker: str = "main", run_id: str | None = None):
        self.options = options
        self.budget = budget
        self.specs = specs
        self.strict = options.strict
        self.deadline = options.deadline
        self.baseline = _baseline(options.baseline) if options.baseline else None
        self.worker = worker
        self.is_controller = run_id is None
        self.run_id = run_id or new_run_id()
        self.events = EventStream()  # the outputs subscribe (the plugin wires them)
        self.head: dict = {}  # run.json as the run starts (``open_records``)
        self.nonce = secrets.token_hex(3)
        self._counter = itertools.count()
        self._targets: dict[str, TargetInfo] | None = None
        self.broker = None  # BrokerProcess when we launched the reference
        self.oracle_broker = None  # --differential: the clean reference broker answers are compared with
        self.upstreams: list = []  # UpstreamProcess: the real servers this run started (--upstream, controller only)
        self.upstream_targets: dict[str, str] = {}  # the --target each became -> the server and version (to workers)
        self.upstream_options: list[str] = []  # the --target-option each needs besides its address (to workers)
        self._oracles: dict[str, TargetInfo] | None = None
        self._chosen: dict[str, ServerChosen] = {}  # --differential: per protocol, what each server chose
        self.collected_protocols: set[str] = set()  # the reference broker runs only these personalities
        self.report_dir = Path(options.report_dir).resolve() / self.run_id
        self.tls = client_context(options.tls_ca, options.tls_verify) if options.tls else None
        self.board = health.DownBoard(self.report_dir / "down")
        self._restart_failed: set[str] = set()  # restarted once without coming back: not tried again
        self.say: Callable[[str], None] = lambda line: None  # one terminal line now (the plugin sets it)
        self.surveys: list[dict] | None = None
        self.target_lines: list[str] = []  # one per given target: its address and what the probe found  # one per --target: address, protocols, what the probe found
        self.confirm = options.confirm if options.confirm is not None else (2 if budget.name == "nightly" else 0)

    def metadata(self) -> dict:
        """The run's description in run.json: each given target with the protocol it was probed as."""
        targets = {}
        for found in self.surveys or []:
            entry = {"address": found["address"], "reference": False, "faults": [], "found": found["found"],
                     "upstream": upstream_title(self.upstream_targets.get(found["target"]))}
            for name in found["protocols"] or [found["named"] or "probe"]:
                targets[name] = dict(entry, probed_as=name if found["protocols"] else None)
        return {
            "profile": self.budget.name,
            "strict": self.strict,
            "baseline": self.options.baseline,
            "targets": targets or {"*": {"address": "reference broker", "reference": True,
                                         "faults": self.options.reference_faults,
                                         "variants": self.options.reference_variants}},
            "argv": self.options.argv,
            "confirm": self.confirm,
        }

    def open_records(self) -> dict:
        """run.json as the run starts, once its targets are known (``metadata``): the writer's and the end's."""
        self.head = run_head(self.run_id, self.metadata())
        return self.head

    def finish(self) -> None:
        for broker in (self.broker, self.oracle_broker):
            if broker is not None:
                broker.stop()
        for server in self.upstreams:
            server.stop()
        if self.is_controller:  # once every worker is done: what --target-restart started ends with the run
            health.stop_restarted(self.report_dir)

    # -- targets

    def start_upstreams(self, given: dict | None = None) -> None:
        """``--upstream PROTOCOL[@VERSION]``: the controller starts each real server (its log and data in the
        report directory) and tests it as a ``--target``; an xdist worker receives the controller's
        ``upstream_handover()``. The
        server's expected divergences (targets/upstream/expectations/) join the run's baseline: each is XFAIL with
        its source, and one that no longer fails is XPASS."""
        from wirecheck.targets import upstream

        if given is None:
            for text in self.options.upstream:
                try:
                    name, version = upstream.parse(text)
                    server = upstream.SERVERS[name].start(self.report_dir / f"upstream-{name}-{version}", version)
                except HarnessError as exc:  # not installed, or did not start: the run cannot begin
                    raise UsageProblem(f"--upstream {text}: {exc}") from None
                self.upstreams.append(server)
                host, port = server.address
                self.upstream_targets[f"{name}={host}:{port}"] = f"{name}@{version}"
                # what the suite needs to know of it besides its address (Pravega's controller endpoint)
                self.upstream_options += [f"{name}.{key}={value}" for key, value in server.options.items()]
        else:
            self.upstream_targets, self.upstream_options = dict(given["targets"]), list(given["options"])
        self.options.targets.extend(self.upstream_targets)
        self.options.target_options.extend(self.upstream_options)
        for server in self.upstream_targets.values():
            try:
                expected = upstream.expectations(server)
            except BaselineError as exc:
                raise UsageProblem(f"--upstream {server}: its expectations: {exc}") from None
            if expected is not None:
                self.baseline = expected if self.baseline is None else self.baseline.merged(expected)

    def upstream_handover(self) -> dict:
        """What an xdist worker needs of the servers the controller started (``start_upstreams(given=...)``)."""
        return {"targets": self.upstream_targets, "options": self.upstream_options}

    def survey_targets(self, given: list[dict] | None = None) -> list[str]:
        """Probe every ``--target`` once (an xdist worker receives its controller's ``given`` surveys instead) and
        return one line per target. A target that answers none of its protocols is down from the start; when no
        given target is usable the run cannot do anything: :class:`UsageProblem`."""
        if not self.options.targets:
            return []
        self.surveys = given if given is not None else [self._survey(text) for text in self.options.targets]
        usable = False
        lines = []
        for found in self.surveys:
            named = found["named"]
            line = f"{found['address']}: {found['found']}"
            if named and named not in found["protocols"] and found.get("answers"):
                # a named protocol always runs: its broken hello is a conformance failure, not a usage error
                line = (f"{found['address']}: does not answer the {named} hello right ({found['found']}); tested as "
                        f"{named}, as named")
            elif named and named not in found["protocols"] and found["found"].startswith("answers"):
                line = f"{found['address']}: does not answer like {named}; {found['found']}"
            lines.append(line)
            if (found["protocols"] and (not named or named in found["protocols"])) or (named and found.get("answers")):
                usable = True
            elif named:
                self.board.mark(named, f"target {line}", shared=False)
        self.target_lines = lines
        if not usable:
            raise UsageProblem("no target can run a case: " + "; ".join(f"--target {line}" for line in lines))
        return lines

    def _survey(self, text: str) -> dict:
        name, address = parse_target(text, self.specs)
        named = name or self.options.protocol
        found = survey(address, self.specs, self.deadline, tls=self.tls, named=named)
        if named and named not in found.protocols and self.options.target_restart:
            ok, _ = health.restart(self.options.target_restart, self.report_dir,
                                   lambda: probe.hello_answered(address, self.specs[named], self.deadline,
                                                                tls=self.tls))
            if ok:
                found = survey(address, self.specs, self.deadline, tls=self.tls, named=named)
        return {"target": text, "named": named, "address": found.text, "protocols": list(found.protocols),
                "found": found.found, "answers": found.answers}

    def targets(self) -> dict[str, TargetInfo]:
        if self._targets is None:
            self._targets = self._given_targets() if self.options.targets else self._launch_reference()
        return self._targets

    def _given_targets(self) -> dict[str, TargetInfo]:
        if self.surveys is None:
            self.survey_targets()
        assert self.surveys is not None  # survey_targets sets it: this runs only with --target
        found: dict[str, TargetInfo] = {}
        for entry in self.surveys:
            named = entry["named"]
            host, _, port = entry["address"].rpartition(":")
            for name in [named] if named else entry["protocols"]:
                found[name] = TargetInfo(name, (host, int(port)), reference=False, found=entry["found"],
                                         endpoints=self._endpoint_options(name),
                                         hello_failed="" if name in entry["protocols"] else entry["found"])
        return found

    def _endpoint_options(self, protocol: str) -> dict[str, tuple[str, int]]:
        """``--target-option PROTOCOL.ENDPOINT=HOST:PORT`` for the protocol's endpoint names."""
        names = {endpoint.name for endpoint in self.specs[protocol].endpoints}
        found = {}
        for key, value in self.target_options(protocol).items():
            if key in names:
                try:
                    found[key] = probe.parse_address(value)
                except (ValueError, OSError) as exc:
                    raise UsageProblem(f"--target-option {protocol}.{key}={value}: {exc}") from None
        return found

    def tls_for(self, info: TargetInfo) -> ssl.SSLContext | None:
        """The TLS context for a target: given targets use --target-tls; the launched reference speaks TCP."""
        return None if info.reference else self.tls

    def _launch_reference(self) -> dict[str, TargetInfo]:
        self.broker = self._launch(self.options.reference_faults, "broker", self.options.reference_variants)
        return self._reference_targets(self.broker)

    def _launch(self, faults: list[str], stem: str, variants: Sequence[str] = ()):
        from wirecheck.targets.launcher import launch

        workdir = self.report_dir / f"{stem}-{self.worker}-{next(self._counter)}"
        return launch(protocols=sorted(self.collected_protocols) or None, faults=faults, workdir=workdir,
                      extra_args=[*REFERENCE_ARGS, *self.options.reference_args], variants=list(variants))

    def _reference_targets(self, broker) -> dict[str, TargetInfo]:
        """Each personality of a launched broker, with its listeners for the protocol's other endpoints."""
        return {name: TargetInfo(name, (broker.host, port), reference=True,
                                 endpoints={e: (broker.host, p) for e, p in broker.endpoints.get(name, {}).items()},
                                 side_listeners={key: (broker.host, p) for key, p in broker.ports.items()
                                                 if key.startswith(f"{name}-")})
                for name, port in broker.ports.items() if name in self.specs}

    def oracle(self, protocol: str) -> TargetInfo | None:
        """--differential: the server ``--oracle PROTOCOL=HOST:PORT`` names for ``protocol``, else the clean
        reference broker's listener (launched on first use, with --reference-arg but never --reference-fault);
        None without --differential."""
        if not self.options.differential:
            return None
        for text in self.options.oracles:  # the form is checked at the start (validate.py)
            name, address = parse_target(text, self.specs)
            if name == protocol:
                return TargetInfo(name, address, reference=False, found="--oracle")
        if self._oracles is None:
            self.oracle_broker = self._launch([], "oracle")
            self._oracles = self._reference_targets(self.oracle_broker)
        return self._oracles.get(protocol)

    def server_chosen(self, spec: ProtocolSpec) -> ServerChosen:
        """--differential: the values the target and the oracle chose for the protocol (ids of topics, brokers,
        members), learnt by any case of this process and carried by every later one: a case may use a topic an
        earlier case created and learnt the id of."""
        return self._chosen.setdefault(spec.name, ServerChosen.for_spec(spec))

    def target_options(self, protocol: str) -> dict[str, str]:
        """``--target-option PROTOCOL.KEY=VALUE`` settings for one protocol."""
        options = {}
        for text in self.options.target_options:  # the form is checked at the start (validate.py)
            key, _, value = text.partition("=")
            name, _, key = key.partition(".")
            if name == protocol:
                options[key] = value
        return options

    def unique(self, stem: str) -> str:
        """A resource name no other example, worker or run uses (valid as a topic name everywhere)."""
        return f"wc-{self.nonce}-{self.worker}-{next(self._counter)}-{stem}"[:200]

    # -- liveness and dead targets

    def liveness(self, state: CaseState) -> tuple[bool, bool, str]:
        """Does the target still answer a known-good request on a new connection? (answers right, stopped
        answering at all, what happened).

        A dead reference broker is restarted for the cases that follow (this case still fails).
        """
        info = state.target_info
        state.transcript.note("liveness probe: a known-good request on a new connection")
        ok, what = probe.hello_answered(info.address, state.spec, self.deadline, state.transcript,
                                        tls=self.tls_for(info))
        where = ""
        for name, address in info.endpoints.items():  # every other endpoint whose address we know
            if ok and state.spec.endpoint(name).hello is not None:
                ok, what = probe.hello_answered(address, state.spec.endpoint(name), self.deadline, state.transcript,
                                                tls=self.tls_for(info))
                where = f"endpoint {name}: "
        if ok:
            return True, False, ""
        dead = health.stopped_answering(what)  # one endpoint that stopped answering is a death too
        if info.hello_failed:  # its hello never got a right answer: only a refused connection is a death
            dead = what.startswith("cannot connect")
        what = where + what
        if self.broker is not None and info.reference and not self.broker.alive:
            what += f"; the reference broker {self.broker.exit_status()}"
            self.broker.stop()
            self._targets = self._launch_reference()
            state.transcript.note("the reference broker was restarted for the cases that follow")
        state.transcript.note(f"liveness probe failed: {what}")
        return False, dead, what

    def check_target(self, state: CaseState, failure: BaseException | None) -> Divergence | None:
        """After a hostile or failed case (``failure``: what it raised): None while the target answers; a
        :class:`TargetDied` naming the step that preceded the death when it stopped answering (later cases
        for it are then TARGET-DOWN). A target that answers the hello wrongly is alive: its own cases report that."""
        step = health.last_step(state.transcript, getattr(failure, "note", ""))
        alive, dead, what = self.liveness(state)
        if alive or not dead:  # an answer, even a wrong one, is alive: its own cases report a wrong answer, once
            return None
        clause = survives_clause(state.spec)
        note = f"the case had raised: {failure}"[:1000] if failure is not None else ""
        died = TargetDied(clause, step, what, note=note)
        if not state.target_info.reference:
            self.board.mark(state.spec.name, f"target died at case {state.case_id} after {step}")
        return died

    def answers(self, state: CaseState) -> bool:
        info = state.target_info
        ok, _ = probe.hello_answered(info.address, state.spec, self.deadline, state.transcript, tls=self.tls_for(info))
        return ok

    def revive(self, state: CaseState) -> bool:
        """``--target-restart`` within a case, its output appended to the run's restart log."""
        if not self.options.target_restart or state.target_info.reference:
            return False
        info = state.target_info
        state.transcript.note("restarting the target (--target-restart)")
        ok, what = health.restart(self.options.target_restart, self.report_dir,
                                  lambda: probe.hello_answered(info.address, state.spec, self.deadline,
                                                               tls=self.tls_for(info)))
        if not ok:
            state.transcript.note(what)
            self.say(f"wirecheck: {what}")
        return ok

    def down_reason(self, protocol: str) -> str | None:
        """Why the target of ``protocol`` is down (None when it is up), after trying ``--target-restart`` once
        per death."""
        reason = self.board.reason(protocol)
        if reason is None or not self.options.target_restart or protocol in self._restart_failed:
            return reason
        info = self.targets().get(protocol)
        if info is None:
            return reason
        from filelock import FileLock

        self.board.directory.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.board.path(protocol)) + ".lock"):  # one worker restarts; the others wait for it
            reason = self.board.reason(protocol)
            if reason is None:
                return None
            ok, what = health.restart(self.options.target_restart, self.report_dir,
                                      lambda: probe.hello_answered(info.address, self.specs[protocol],
                                                                   self.deadline, tls=self.tls_for(info)))
            if ok:
                self.board.clear(protocol)
                return None
            self._restart_failed.add(protocol)
            self.say(f"wirecheck: {what}")
            self.board.mark(protocol, f"{reason}; {what}")
            return self.board.reason(protocol)

    # -- reproducing

    def reproduce(self, selector: list[str], info: TargetInfo | None) -> str:
        """One command line that runs this case again against the same target with the same seeds;
        ``selector`` names the case for pytest from where the run ran (``case_selector``)."""
        args = ["pytest", *selector]
        if info is not None and not info.reference:
            args += ["--target", f"{info.protocol}={info.text}"]
        for fault in self.options.reference_faults:
            args += ["--reference-fault", fault]
        for variant in self.options.reference_variants:
            args += ["--reference-variant", variant]
        for arg in self.options.reference_args:
            args.append(f"--reference-arg={arg}")
        if self.budget.name != "ci":
            args.append(f"--fuzz={self.budget.name}")
        args += self.budget.reproduce.split()
        if self.strict:
            args.append("--strict")
        if self.options.differential:
            args.append("--differential")
        for oracle in self.options.oracles:
            args += ["--oracle", oracle]
        if self.tls is not None and info is not None and not info.reference:
            args += ["--target-tls"] + (["--target-ca", self.options.tls_ca] if self.options.tls_ca else []) + \
                (["--target-insecure"] if not self.options.tls_verify else [])
        if self.options.hypothesis_seed is not None:
            args.append(f"--hypothesis-seed={self.options.hypothesis_seed}")
        return shlex.join(args)
