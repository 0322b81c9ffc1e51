"""The runner: one run's options, its targets (given, probed or the launched reference broker), the event
stream, reproducer lines and the liveness probe. Knows nothing about pytest (targets/plugin.py adapts it)."""

from __future__ import annotations

import itertools
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from protocols.spec import ProtocolSpec
from reports.baseline import Baseline
from reports.model import HarnessError
from targets import probe
from targets.fuzz import FuzzBudget
from targets.transport import client_context
from targets.runner.case import CaseState
from reports.events import EventStream


class UsageProblem(HarnessError):
    """A bad option or target given by the user."""


@dataclass
class TargetInfo:
    protocol: str
    address: tuple[str, int]
    reference: bool  # the bundled broker, started by us

    @property
    def text(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"


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
    reference_args: list[str] = field(default_factory=list)  # more arguments for the launched reference broker
    stop_at_clause: list[str] = field(default_factory=list)
    target_options: list[str] = field(default_factory=list)  # "PROTOCOL.KEY=VALUE"
    tls: bool = False  # speak TLS to the given targets
    tls_ca: str | None = None
    tls_verify: bool = True
    hypothesis_seed: object = None
    argv: list[str] = field(default_factory=list)


class Run:
    """Per-process state of a run. In an xdist worker, ``run_id`` comes from the controller."""

    def __init__(self, options: RunOptions, budget: FuzzBudget, specs: dict[str, ProtocolSpec],
                 worker: str = "main", run_id: str | None = None):
        from reports.records import new_run_id

        self.options = options
        self.budget = budget
        self.specs = specs
        self.strict = options.strict
        self.deadline = options.deadline
        self.baseline = Baseline.load(options.baseline) if options.baseline else None
        self.worker = worker
        self.is_controller = run_id is None
        self.run_id = run_id or new_run_id()
        self.events = EventStream()
        self.writer = None  # reports.records.RunWriter, subscribed by the plugin
        self.summary = None  # reports.terminal.TerminalSummary, subscribed by the plugin
        self.nonce = secrets.token_hex(3)
        self._counter = itertools.count()
        self._targets: dict[str, TargetInfo] | None = None
        self.broker = None  # BrokerProcess when we launched the reference
        self.collected_protocols: set[str] = set()  # the reference broker runs only these personalities
        self.report_dir = Path(options.report_dir).resolve() / self.run_id
        self.tls = client_context(options.tls_ca, options.tls_verify) if options.tls else None

    def metadata(self) -> dict:
        """The run's description in run.json."""
        targets = {}
        for text in self.options.targets:
            name, _, address = text.rpartition("=")
            targets[name or self.options.protocol or "probe"] = {"address": address, "reference": False,
                                                                 "faults": []}
        return {
            "profile": self.budget.name,
            "strict": self.strict,
            "baseline": self.options.baseline,
            "targets": targets or {"*": {"address": "reference broker", "reference": True,
                                         "faults": self.options.reference_faults}},
            "argv": self.options.argv,
        }

    def finish(self) -> None:
        if self.broker is not None:
            self.broker.stop()

    # -- targets

    def targets(self) -> dict[str, TargetInfo]:
        if self._targets is None:
            self._targets = self._resolve_targets()
        return self._targets

    def _resolve_targets(self) -> dict[str, TargetInfo]:
        if not self.options.targets:
            return self._launch_reference()
        found: dict[str, TargetInfo] = {}
        for text in self.options.targets:
            name, _, address_text = text.rpartition("=")
            try:
                address = probe.parse_address(address_text)
            except (ValueError, OSError) as exc:
                raise UsageProblem(f"--target {text}: {exc}") from None
            if name:
                names = [name]
            elif self.options.protocol:
                names = [self.options.protocol]
            else:
                names = probe.detect(address, self.specs, self.deadline, tls=self.tls)
                if not names:
                    raise UsageProblem(f"--target {text}: no known protocol answered; "
                                       f"name it: --target PROTOCOL={address_text}")
            for n in names:
                if n not in self.specs:
                    raise UsageProblem(f"--target {text}: unknown protocol {n!r}; known: {sorted(self.specs)}")
                found[n] = TargetInfo(n, address, reference=False)
        return found

    def tls_for(self, info: TargetInfo):
        """The TLS context for a target: given targets use --target-tls; the launched reference speaks TCP."""
        return None if info.reference else self.tls

    def _launch_reference(self) -> dict[str, TargetInfo]:
        from targets.launcher import launch

        workdir = self.report_dir / f"broker-{self.worker}-{next(self._counter)}"
        self.broker = launch(protocols=sorted(self.collected_protocols) or None,
                             faults=self.options.reference_faults, workdir=workdir,
                             extra_args=["--retention-records", "5000", "--segment-records", "1000",
                                         *self.options.reference_args])
        return {name: TargetInfo(name, (self.broker.host, port), reference=True)
                for name, port in self.broker.ports.items() if name in self.specs}

    def target_options(self, protocol: str) -> dict[str, str]:
        """``--target-option PROTOCOL.KEY=VALUE`` settings for one protocol."""
        options = {}
        for text in self.options.target_options:
            key, sep, value = text.partition("=")
            name, dot, key = key.partition(".")
            if not sep or not dot:
                raise UsageProblem(f"--target-option {text!r}: expected PROTOCOL.KEY=VALUE")
            if name == protocol:
                options[key] = value
        return options

    def unique(self, stem: str) -> str:
        """A resource name no other example, worker or run uses (valid as a topic name everywhere)."""
        return f"wc-{self.nonce}-{self.worker}-{next(self._counter)}-{stem}"[:200]

    # -- liveness

    def liveness(self, state: CaseState) -> tuple[bool, str]:
        """After a hostile case: does the target still answer a known-good request on a new connection?

        A dead reference broker is restarted for the cases that follow (this case still fails).
        """
        state.transcript.note("liveness probe: a known-good request on a new connection")
        ok, what = probe.hello_answered(state.info.address, state.spec, self.deadline, state.transcript,
                                        tls=self.tls_for(state.info))
        if ok:
            return True, ""
        if self.broker is not None and state.info.reference and not self.broker.alive:
            what += f"; the reference broker {self.broker.exit_status()}"
            self.broker.stop()
            self._targets = self._launch_reference()
            state.transcript.note("the reference broker was restarted for the cases that follow")
        state.transcript.note(f"liveness probe failed: {what}")
        return False, what

    # -- reproducing

    def reproduce(self, nodeid: str, info: TargetInfo | None) -> str:
        """One command line that runs this case again against the same target with the same seeds."""
        args = ["pytest", nodeid]
        if info is not None and not info.reference:
            args += ["--target", f"{info.protocol}={info.text}"]
        for fault in self.options.reference_faults:
            args += ["--reference-fault", fault]
        for arg in self.options.reference_args:
            args.append(f"--reference-arg={arg}")
        if self.budget.name != "ci":
            args.append(f"--fuzz={self.budget.name}")
        args.append(f"--fuzz-seed={self.budget.seed}")
        if self.strict:
            args.append("--strict")
        if self.tls is not None and info is not None and not info.reference:
            args += ["--target-tls"] + (["--target-ca", self.options.tls_ca] if self.options.tls_ca else []) + \
                (["--target-insecure"] if not self.options.tls_verify else [])
        if self.options.hypothesis_seed is not None:
            args.append(f"--hypothesis-seed={self.options.hypothesis_seed}")
        return shlex.join(args)
