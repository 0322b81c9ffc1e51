"""kafka-python's place in the Kafka safety workload: the slots it takes exist, and every role keeps a
confluent-kafka slot too, so both clients are in every run (the runs themselves: test_kafka_run.py)."""

from wirecheck.targets.safety import kafka


def test_kafka_python_takes_some_slots_of_every_role_and_confluent_the_rest():
    assert set(kafka.KAFKA_PYTHON_SLOTS) == set(kafka.ROLES)
    for role, slots in kafka.KAFKA_PYTHON_SLOTS.items():
        assert slots and all(0 <= slot < kafka.ROLES[role] for slot in slots), role
        assert len(set(slots)) < kafka.ROLES[role], f"{role}: no confluent-kafka slot left"
