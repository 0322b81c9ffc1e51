"""A Kafka cluster as users run it (scripts/configured.py): topics an operator created beforehand, named to the
suite with --target-option, and ACLs that keep topic administration (CreateTopics, DeleteTopics, CreatePartitions)
and auto-creation from the suite's client. Cases that only need somewhere to write share those topics; cases that
need a topic of their own are BLOCKED (the answer was TOPIC_AUTHORIZATION_FAILED, which no clause can forbid)."""

_TOPICS = "orders:3,events:1"

#: how the operator provisioned the reference broker
BROKER_ARGS = ["--kafka-topics", _TOPICS, "--no-kafka-topic-admin", "--no-kafka-auto-create"]
#: how the user names those resources to the suite
TARGET_OPTIONS = [f"kafka.topics={_TOPICS}"]
