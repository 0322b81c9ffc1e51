"""A strict client of the Fluvio Streaming Controller (protocols/fluvio/sc.py): the spec's "sc" endpoint, at
``--target-option fluvio.sc=host:port`` (the launched reference broker's "sc" endpoint listener)."""

from __future__ import annotations

from wirecheck.protocols.fields import DecodeError
from wirecheck.protocols.fluvio import messages, sc
from wirecheck.protocols.fluvio.clauses import CATALOGUE as C
from wirecheck.protocols.verdicts import Divergence, Unimplemented
from wirecheck.suites.fluvio.client import Fluvio


class ScClient(Fluvio):
    """One connection to the SC: ApiVersions through the SPU codec, object requests through sc.py."""

    def __init__(self, target):
        if not target.knows_endpoint("sc"):
            raise Unimplemented("no SC endpoint: --target-option fluvio.sc=host:port")
        super().__init__(target, target.connect(endpoint="sc"))

    def request(self, api_key: int, label: str, body: dict, version: int = sc.COMMON_VERSION) -> int:
        correlation_id = self.next_correlation_id()
        self.send_frame(sc.encode_object_request(api_key, version, correlation_id, label, body), decode=False)
        return correlation_id

    def answer(self, correlation_id: int, clause_id: str, deadline: float | None = None) -> bytes:
        frame = self.frame_of(self.session.recv(deadline), clause_id, "an SC answer")
        got, body = sc.decode_answer(frame)
        if got != correlation_id:
            raise Divergence(C["fluvio.framing.correlation-id"], f"correlation id {correlation_id}",
                             f"correlation id {got}")
        return body

    def status(self, api_key: int, label: str, body: dict, clause_id: str) -> dict:
        answer = self.answer(self.request(api_key, label, body), clause_id)
        try:
            return sc.decode_status(answer, sc.COMMON_VERSION)
        except DecodeError as exc:
            raise Divergence(C[clause_id], "a Status that decodes exactly", f"{exc}: {answer[:64].hex()}") from None

    def objects(self, api_key: int, answer: bytes, clause_id: str) -> tuple[str, dict]:
        try:
            return sc.decode_object(api_key, sc.COMMON_VERSION, answer)
        except DecodeError as exc:
            raise Divergence(C[clause_id], "an object answer that decodes exactly",
                             f"{exc}: {answer[:64].hex()}") from None

    def watch(self, label: str, clause_id: str) -> tuple[int, dict]:
        correlation_id = self.request(sc.WATCH, label, {"epoch": 0, "summary": False})
        return correlation_id, self.objects(sc.WATCH, self.answer(correlation_id, clause_id), clause_id)[1]

    def create_topic(self, name: str, clause_id: str, partitions: int = 1) -> dict:
        spec = {"replicas": ("Computed", {"partitions": partitions, "replication_factor": 1,
                                          "ignore_rack_assignment": False}),
                "cleanup_policy": None, "storage": None, "compression_type": 4, "no_deduplication": 0,
                "system": False}
        return self.status(sc.CREATE, sc.TOPIC, {"name": name, "dry_run": False, "timeout": None, "spec": spec},
                           clause_id)

    def delete_topic(self, name: str, clause_id: str) -> dict:
        return self.status(sc.DELETE, sc.TOPIC, {"key": name, "force": False}, clause_id)

    def list_objects(self, label: str, clause_id: str, names: tuple[str, ...] = (), system: bool = False) -> list:
        """List (1003) of one object kind, filtered by name when names are given: the Metadata entries."""
        body = {"name_filters": [{"name": name} for name in names], "summary": False, "system": system}
        got, inner = self.objects(sc.LIST, self.answer(self.request(sc.LIST, label, body), clause_id), clause_id)
        if got != label:
            raise Divergence(C[clause_id], f"a List answer of {label}", f"a List answer of {got}")
        return inner["inner"]

    def sc_api_versions(self) -> dict:
        body = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}
        return self.call(messages.API_VERSIONS, 2, body, "fluvio.sc.api-versions.watch")
