"""The fault proxy's modes over real loopback sockets, and the Kafka answers it rewrites to name itself."""

import socket
import threading

import pytest

from wirecheck.protocols.kafka import messages
from wirecheck.targets.safety.kafka_address import KafkaAddressRewriter
from wirecheck.targets.safety.proxy import FaultProxy


@pytest.fixture
def echo():
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=pump, args=(conn,), daemon=True).start()

    def pump(conn):
        with conn:
            try:
                while data := conn.recv(4096):
                    conn.sendall(data)
            except ConnectionResetError:
                pass  # the proxy reset its side

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()
    server.close()


@pytest.fixture
def proxy(echo):
    p = FaultProxy(echo)
    p.start()
    yield p
    p.stop()


def connect(proxy):
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    sock.settimeout(5)
    return sock


def test_pass_forwards_both_ways(proxy):
    with connect(proxy) as sock:
        sock.sendall(b"hello")
        assert sock.recv(5) == b"hello"


def test_reset_resets_open_connections_and_lets_new_ones_flow(proxy):
    with connect(proxy) as sock:
        sock.sendall(b"x")
        assert sock.recv(1) == b"x"
        proxy.set_mode("reset")
        with pytest.raises(ConnectionResetError):
            sock.sendall(b"y")
            sock.recv(1)
    with connect(proxy) as again:
        again.sendall(b"z")
        assert again.recv(1) == b"z"


def test_drop_closes_new_connections(proxy):
    proxy.set_mode("drop")
    with connect(proxy) as sock:
        try:
            assert sock.recv(1) == b""
        except ConnectionResetError:
            pass


def test_blackhole_forwards_nothing_then_resets(proxy):
    with connect(proxy) as sock:
        proxy.set_mode("blackhole")
        sock.sendall(b"lost")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(4)
        proxy.set_mode("pass")
        sock.settimeout(5)
        with pytest.raises(ConnectionResetError):
            sock.recv(4)


def test_unknown_mode_is_refused(proxy):
    with pytest.raises(ValueError, match="not one of"):
        proxy.set_mode("melt")


def test_metadata_and_coordinator_answers_name_the_proxy():
    rewriter = KafkaAddressRewriter(("127.0.0.1", 9092), ("127.0.0.1", 5555))
    metadata = messages.encode_request(3, 12, 7, "c", {"Topics": None, "AllowAutoTopicCreation": False})
    coordinator = messages.encode_request(10, 4, 8, "c", {"KeyType": 1, "CoordinatorKeys": ["t"]})
    rewriter.request(metadata[:5])
    rewriter.request(metadata[5:] + coordinator)
    answers = (messages.encode_response(3, 12, 7, {"Brokers": [{"NodeId": 0, "Host": "127.0.0.1", "Port": 9092}]})
               + messages.encode_response(10, 4, 8, {"Coordinators": [
                   {"Key": "t", "NodeId": 0, "Host": "127.0.0.1", "Port": 9092, "ErrorCode": 0}]}))
    out = rewriter.response(answers[:11]) + rewriter.response(answers[11:])
    first = messages.decode_response(3, 12, out[:4 + int.from_bytes(out[:4], "big")])
    second = messages.decode_response(10, 4, out[4 + int.from_bytes(out[:4], "big"):])
    assert first["body"]["Brokers"][0]["Port"] == 5555
    assert second["body"]["Coordinators"][0]["Port"] == 5555


def test_other_answers_pass_unchanged():
    rewriter = KafkaAddressRewriter(("127.0.0.1", 9092), ("127.0.0.1", 5555))
    rewriter.request(messages.encode_request(18, 3, 1, "c", {"ClientSoftwareName": "x", "ClientSoftwareVersion": "1"}))
    answer = messages.encode_response(18, 3, 1, {"ErrorCode": 0, "ApiKeys": []})
    assert rewriter.response(answer) == answer
