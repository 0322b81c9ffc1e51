"""A target of the run: where a protocol's server listens, whether it is the bundled reference broker, its other
endpoints, and what the probe found at the start of the run."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TargetInfo:
    protocol: str
    address: tuple[str, int]
    reference: bool  # the bundled broker, started by us
    #: addresses of the protocol's other endpoints (by endpoint name): from the reference broker, from
    #: ``--target-option PROTOCOL.ENDPOINT=HOST:PORT``, or learned by the suite (e.g. through a discovery API)
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: the launched reference broker's listeners that are no endpoint of the spec (no hello to probe), by their
    #: ready-file name, e.g. "pravega-controller" (gRPC): for the real clients that need them
    side_listeners: dict[str, tuple[str, int]] = field(default_factory=dict)
    found: str = ""  # what the probe found at the start of the run ("answers like rustlog")
    #: a protocol the user named whose hello was not answered right at the start (what came instead; "" when it
    #: was): the cases run all the same, the hello's own case reports it, and the liveness probe then counts
    #: only a refused connection as a death
    hello_failed: str = ""

    @property
    def text(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"
