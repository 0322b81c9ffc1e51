"""Probing: every endpoint of every registered protocol is recognised on its own port and no other, over framed
TCP, TLS and HTTP; liveness says what happened when the answer is wrong or missing."""

import socket

import pytest

from wirecheck.protocols.registry import all_specs, registered
from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.clauses import Catalogue
from wirecheck.targets import probe
from wirecheck.targets.launcher import launch
from wirecheck.targets.transport import client_context
from tests.http_servers import H2Server, Http1Server
from tests.tls_support import make_certificates
from tests.unit.test_transport_tls import TlsPongServer


@pytest.fixture(scope="module")
def broker():
    process = launch(["rustlog", "kafka", "fluvio"])
    yield process
    process.stop()


def test_detect_names_exactly_the_protocol_of_each_port(broker):
    specs = {name: spec for name, spec in all_specs().items() if name in broker.ports}
    for name in specs:
        assert probe.detect(broker.address(name), specs) == [name]
        assert probe.detect_endpoints(broker.address(name), specs) == [(name, specs[name].primary.name)]


def test_liveness_of_a_spec_and_of_its_endpoint(broker):
    spec = all_specs()["kafka"]
    assert probe.hello_answered(broker.address("kafka"), spec, 1.0) == (True, "")
    assert probe.hello_answered(broker.address("kafka"), spec.primary, 1.0) == (True, "")
    ok, what = probe.hello_answered(broker.address("rustlog"), spec, 0.5)
    assert not ok and what  # RustLog does not answer a Kafka ApiVersions correctly


def test_a_dead_port_cannot_connect():
    with socket.create_server(("127.0.0.1", 0)) as unused:
        address = unused.getsockname()[:2]
    ok, what = probe.hello_answered(address, all_specs()["rustlog"], 0.5)
    assert not ok and what.startswith("cannot connect")


def test_probe_over_tls(tmp_path):
    certificates = make_certificates(tmp_path)
    server = TlsPongServer(certificates.server_context())
    spec = all_specs()["rustlog"]
    assert probe.hello_answered(server.address, spec, 1.0, tls=client_context(certificates.ca_file)) == (True, "")
    ok, what = probe.hello_answered(server.address, spec, 1.0, tls=client_context(None))
    assert not ok and "certificate verify failed" in what
    server.close()


def _status_is_consumer(body: bytes) -> bool:
    return body.startswith(b"Consumer server listening")


def http_spec(transport: str) -> ProtocolSpec:
    """A throwaway protocol whose only endpoint is an HTTP consumer API (registered for the test)."""
    endpoint = Endpoint("consumer", 9252, transport=transport, hello=lambda: b"/status", hello_clause="toy.status",
                        is_hello_answer=_status_is_consumer)
    return ProtocolSpec(f"toy-{transport}", Catalogue("toy", []), (endpoint,))


@pytest.mark.parametrize("transport, server_class", [("http1", Http1Server), ("h2c", H2Server)])
def test_detect_an_http_endpoint(transport, server_class):
    server = server_class()
    with registered(http_spec(transport)):
        # the test server imitates Barco's consumer API (GET /status), so Barco rightly claims it too
        assert probe.detect(server.address, all_specs(), deadline=0.3) == ["barco", f"toy-{transport}"]
    wrong = Endpoint("consumer", 9252, transport=transport, hello=lambda: b"/nowhere", hello_clause="toy.status",
                     is_hello_answer=_status_is_consumer)
    ok, what = probe.hello_answered(server.address, wrong, 1.0)
    assert not ok and "404" in what
    server.close()
