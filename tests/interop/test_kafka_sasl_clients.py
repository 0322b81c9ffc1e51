"""Real clients log in to the SASL-enabled reference broker (``--kafka-sasl-users``): librdkafka (confluent-kafka)
and kafka-python with PLAIN and SCRAM-SHA-256/512, then produce and consume; librdkafka reports a wrong password as
an authentication error."""

from __future__ import annotations

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
