"""Real clients log in to the SASL-enabled reference broker (``--kafka-sasl-users``): librdkafka (confluent-kafka)
and kafka-python with PLAIN and SCRAM-SHA-256/512, then produce and consume; librdkafka reports a wrong password as
an authentication error."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from kafka import KafkaConsumer, KafkaProducer

from tests.interop.kafka_support import InProcessBroker

pytestmark = pytest.mark.interop
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture(scope="module")
def sasl_bootstrap(tmp_path_factory):
    users = tmp_path_factory.mktemp("sasl") / "users.txt"
    users.write_text("alice:alice-secret\n")
    with InProcessBroker(sasl_users=str(users)) as broker:
        yield f"127.0.0.1:{broker.port}"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_logs_in_and_round_trips(sasl_bootstrap, unique, mechanism):
    confluent = pytest.importorskip("confluent_kafka")
    settings = {"bootstrap.servers": sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "alice-secret"}
    topic = unique("sasl-ck")
    producer = confluent.Producer(settings)
    failures = []
    producer.produce(topic, b"hello", on_delivery=lambda err, msg: err and failures.append(err))
    assert producer.flush(15) == 0 and failures == []
    consumer = confluent.Consumer({**settings, "group.id": unique("sasl-ck-group"), "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        message = None
        for _ in range(75):
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                break
        assert message is not None and message.value() == b"hello"
    finally:
        consumer.close()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_logs_in_and_round_trips(sasl_bootstrap, unique, mechanism):
    settings = dict(bootstrap_servers=sasl_bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism,
                    sasl_plain_username="alice", sasl_plain_password="alice-secret", request_timeout_ms=5000)
    topic = unique("sasl-kp")
    producer = KafkaProducer(max_block_ms=10000, **settings)
    try:
        assert producer.send(topic, b"hello").get(timeout=10).offset == 0
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **settings)
    try:
        assert next(iter(consumer)).value == b"hello"
    finally:
        consumer.close()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_wrong_password_is_refused(sasl_bootstrap, mechanism):
    confluent = pytest.importorskip("confluent_kafka")
    seen = []
    producer = confluent.Producer({"bootstrap.servers": sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
                                   "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "wrong",
                                   "error_cb": seen.append})
    for _ in range(50):
        producer.poll(0.1)
        if seen:
            break
    assert seen and seen[0].code() == confluent.KafkaError._AUTHENTICATION, seen
    assert "Invalid username or password" in seen[0].str()


# -- kcat with SASL/PLAIN: -L, -P, -C ---------------------------------------------------------------------------------
# Debian's kcat links librdkafka 2.0, which offers SASL only to a broker advertising SaslHandshake v0 (as Kafka
# does). Its SCRAM is not exercised: librdkafka before 2.6.1 repeats the client nonce in the client-final message
# (confluentinc/librdkafka#4895), which the reference broker refuses as Kafka 4 does (RFC 5802 section 5.1).


def kcat_sasl(bootstrap: str, password: str = "alice-secret") -> list[str]:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.fail("kcat is not installed (Debian: apt-get install kcat): a missing client fails, it is not skipped")
    return [kcat, "-b", bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
            "-X", "sasl.username=alice", "-X", f"sasl.password={password}", "-m", "10"]


def test_kcat_logs_in_with_plain_and_lists_produces_consumes(sasl_bootstrap, unique):
    topic, lines = unique("sasl-kcat"), [f"line-{i}" for i in range(3)]
    produced = subprocess.run([*kcat_sasl(sasl_bootstrap), "-t", topic, "-P"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=30)
    assert produced.returncode == 0, produced.stderr
    listed = subprocess.run([*kcat_sasl(sasl_bootstrap), "-L", "-t", topic], capture_output=True, text=True,
                            timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert f'topic "{topic}" with 1 partitions' in listed.stdout, listed.stdout
    consumed = subprocess.run([*kcat_sasl(sasl_bootstrap), "-C", "-t", topic, "-o", "beginning", "-c",
                               str(len(lines)), "-e", "-q"], capture_output=True, text=True, timeout=30)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.split() == lines


def test_kcat_with_a_wrong_password_is_refused(sasl_bootstrap):
    listed = subprocess.run([*kcat_sasl(sasl_bootstrap, "wrong"), "-L"], capture_output=True, text=True,
                            timeout=30)
    assert listed.returncode != 0
    assert "Authentication failed" in listed.stderr or "SASL authentication error" in listed.stderr, listed.stderr
