"""The Pravega controller's committed Python modules are what scripts/gen_pravega_controller.sh makes of
controller.proto today: a change to the .proto without regenerating fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

protoc = pytest.importorskip("grpc_tools.protoc", reason="grpcio-tools (the dev extra) regenerates the modules")

# The modules import each other as wirecheck.targets...: generate them under a wirecheck/ include root.
PACKAGE = Path("broker/pravega/controller")
ROOT = Path(__file__).resolve().parents[2]


def test_generated_modules_match_the_proto(tmp_path):
    generated = tmp_path / "wirecheck" / PACKAGE
    generated.mkdir(parents=True)
    shutil.copy(ROOT / PACKAGE / "controller.proto", generated / "controller.proto")
    status = protoc.main(["protoc", f"-I{tmp_path}", f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}",
                          str(generated / "controller.proto")])
    assert status == 0
    for name in ("controller_pb2.py", "controller_pb2_grpc.py"):
        assert (generated / name).read_text() == (ROOT / PACKAGE / name).read_text(), \
            f"{name} is stale: run scripts/gen_pravega_controller.sh"


def test_service_names_the_controller_api():
    """The method paths the clients call: package io.pravega.controller.stream.api.grpc.v1, ControllerService."""
    from wirecheck.broker.pravega.controller import controller_pb2 as pb

    service = pb.DESCRIPTOR.services_by_name["ControllerService"]
    assert service.full_name == "io.pravega.controller.stream.api.grpc.v1.ControllerService"
    assert {"createScope", "createStream", "getCurrentSegments", "getURI", "getSegments",
            "getSegmentsImmediatelyFollowing", "getDelegationToken"} <= set(service.methods_by_name)
