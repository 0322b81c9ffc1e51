"""The real Fluvio Python client (``fluvio`` on PyPI, bindings of the Rust client) against the reference broker:
the Streaming Controller first (ApiVersions, three Watch streams, topic admin), then the SPU it names as leader
(Produce, FetchOffsets, StreamFetch, UpdateOffsets). Everything written is read back byte-identical.

The client finds the SC through a profile in ``$HOME/.fluvio/config``; HOME points at a temporary directory for
the whole module, never at the user's. The client holds the GIL while it waits on the broker, so the broker runs
in another process (the launcher's). The broker logs every request it gets (``--fluvio-request-log``); the last
test checks that the client used the whole SC + SPU path of the notes (§9).
"""

from __future__ import annotations

import itertools
import os

import pytest

from wirecheck.targets.launcher import launch

fluvio = pytest.importorskip("fluvio", reason="the fluvio client (interop extra)")

pytestmark = pytest.mark.interop

_names = itertools.count()

# (listener, api key) the client must have sent once the tests below ran (notes §9 steps 2-7).
EXPECTED_PATH = {("sc", 18), ("sc", 1004), ("sc", 1001), ("sc", 1002), ("sc", 1003),
                 ("spu", 18), ("spu", 0), ("spu", 1002), ("spu", 1003), ("spu", 1005)}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("fluvio-broker")
    request_log = workdir / "requests.log"
    process = launch(["fluvio"], workdir=workdir, extra_args=["--fluvio-request-log", str(request_log)])
    home = tmp_path_factory.mktemp("fluvio-home")
    saved_home = os.environ.get("HOME")
    try:
        sc_address = process.address("fluvio", "sc")
        assert sc_address is not None, f"no SC endpoint in {process.endpoints}"
        (home / ".fluvio").mkdir()
        (home / ".fluvio" / "config").write_text(
            'version = "2.0"\ncurrent_profile = "wirecheck"\n\n'
            '[profile.wirecheck]\ncluster = "wirecheck"\n\n'
            f'[cluster.wirecheck]\nendpoint = "127.0.0.1:{sc_address[1]}"\n'
            'use_spu_local_address = false\n\n'
            '[cluster.wirecheck.tls]\ntls_policy = "disabled"\n')
        os.environ["HOME"] = str(home)
        process.request_log = request_log
        yield process
        assert process.alive, f"broker {process.exit_status()}:\n{process.log_tail()}"
    finally:
        if saved_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved_home
        process.stop()


@pytest.fixture(scope="module")
def admin(broker):
    return fluvio.FluvioAdmin.connect()


@pytest.fixture(scope="module")
def client(broker):
    return fluvio.Fluvio.connect()


@pytest.fixture
def topic(admin):
    name = f"interop-{next(_names)}"
    admin.create_topic(name)
    yield name
    admin.delete_topic(name)


def read(client, topic: str, offset, count: int) -> list[tuple[int, bytes, bytes]]:
    stream = client.partition_consumer(topic, 0).stream(offset)
    return [(r.offset(), bytes(r.key()), bytes(r.value())) for r in itertools.islice(stream, count)]


def test_created_topic_is_listed_and_watched(admin, topic):
    assert topic in [t.name() for t in admin.all_topics()]
    assert [t.name() for t in admin.list_topics([topic])] == [topic]
    partitions = admin.list_partitions([])
    assert f"{topic}-0" in [p.name() for p in partitions]


def test_create_existing_topic_fails(admin, topic):
    with pytest.raises(Exception, match="(?i)exist"):
        admin.create_topic(topic)


def test_delete_missing_topic_fails(admin):
    with pytest.raises(Exception, match="(?i)not found"):
        admin.delete_topic("interop-never-created")


def test_deleted_topic_leaves_the_list(admin):
    name = f"interop-{next(_names)}"
    admin.create_topic(name)
    admin.delete_topic(name)
    assert name not in [t.name() for t in admin.all_topics()]


def test_keyed_records_and_a_batch_read_back_identical(client, topic):
    producer = client.topic_producer(topic)
    keyed = [(b"k-\x00\xff", bytes(range(256))), (b"", b"empty key"), (b"k2", b"")]
    for key, value in keyed:
        producer.send(list(key), list(value)).wait()
    batch = [(f"b{i}".encode(), f"value {i}".encode() * 10) for i in range(20)]
    for output in producer.send_all(batch):
        output.wait()
    producer.flush()
    expected = [(offset, key, value) for offset, (key, value) in enumerate(keyed + batch)]
    assert read(client, topic, fluvio.Offset.beginning(), len(expected)) == expected
    assert read(client, topic, fluvio.Offset.absolute(5), len(expected) - 5) == expected[5:]
    assert read(client, topic, fluvio.Offset.from_end(2), 2) == expected[-2:]


def test_string_records_read_back_identical(client, topic):
    producer = client.topic_producer(topic)
    values = ["hello", "wörld ✓", "x" * 10_000]
    for value in values:
        producer.send_string(value).wait()
    producer.flush()
    stream = client.partition_consumer(topic, 0).stream(fluvio.Offset.beginning())
    assert [r.value_string() for r in itertools.islice(stream, len(values))] == values


def test_client_used_the_sc_and_spu_path(broker, admin, client, topic):
    extra = f"interop-{next(_names)}"
    admin.create_topic(extra)
    admin.all_topics()
    admin.delete_topic(extra)
    producer = client.topic_producer(topic)
    producer.send_string("path").wait()
    assert read(client, topic, fluvio.Offset.beginning(), 1)[0][2] == b"path"
    seen = {(listener, int(key)) for listener, key, _version in
            (line.split() for line in broker.request_log.read_text().splitlines())}
    assert EXPECTED_PATH <= seen, f"missing {sorted(EXPECTED_PATH - seen)}; seen {sorted(seen)}"
