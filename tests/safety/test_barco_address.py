"""Barco's discovery answer rewritten to name the proxy (targets/safety/barco_address.py): every announced port
becomes a listener of the proxy in front of it, the body's length is fixed, and other connections pass unchanged."""

import json

from wirecheck.targets.safety.barco_address import BarcoAddressRewriter


class Proxy(tuple):
    """A ProxyAddress stand-in: forward() hands out a port per target port and remembers what it was asked."""

    def __new__(cls):
        proxy = super().__new__(cls, ("127.0.0.1", 1000))
        proxy.asked = []
        return proxy

    def forward(self, address):
        self.asked.append(address)
        return ("127.0.0.1", 20000 + address[1] % 1000)


def answer(doc: dict, extra: bytes = b"") -> bytes:
    body = json.dumps(doc).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s%s" % (
        len(body), body, extra)


def split(response: bytes) -> tuple[bytes, dict]:
    head, _, body = response.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    assert length == len(body)
    return head, json.loads(body)


DOC = {"names": ["barco-0"], "length": 1, "producerPort": 9251, "producerBinaryPort": 9253, "consumerPort": 9252}


def test_discovery_ports_name_the_proxy_in_pieces():
    proxy = Proxy()
    rewriter = BarcoAddressRewriter(("127.0.0.1", 9250), proxy)
    rewriter.request(b"GET /v1/brokers HTTP/1.1\r\nhost: x\r\n\r\n")
    whole = answer(DOC)
    out = b"".join(rewriter.response(whole[i:i + 7]) for i in range(0, len(whole), 7))
    _, doc = split(out)
    assert (doc["producerPort"], doc["producerBinaryPort"], doc["consumerPort"]) == (20251, 20253, 20252)
    assert sorted(proxy.asked) == [("127.0.0.1", 9251), ("127.0.0.1", 9252), ("127.0.0.1", 9253)]


def test_other_requests_and_connections_pass_unchanged():
    rewriter = BarcoAddressRewriter(("127.0.0.1", 9250), Proxy())
    rewriter.request(b"GET /status HTTP/1.1\r\n\r\n")
    status = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nOK"
    assert rewriter.response(status) == status
    producer = BarcoAddressRewriter(("127.0.0.1", 9251), Proxy())
    producer.request(b"POST /v1/topic/t/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n12")
    assert producer.response(answer(DOC)) == answer(DOC)  # never parsed: a producer's connection
    h2 = BarcoAddressRewriter(("127.0.0.1", 9252), Proxy())
    h2.request(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    assert h2.response(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00") == b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def test_a_chunked_answer_passes_unchanged():
    rewriter = BarcoAddressRewriter(("127.0.0.1", 9250), Proxy())
    rewriter.request(b"GET /v1/brokers HTTP/1.1\r\n\r\n")
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    assert rewriter.response(chunked) == chunked
