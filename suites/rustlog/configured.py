"""A RustLog server as users run it (scripts/configured.py): topics an operator created beforehand, named to the
suite with --target-option. Cases that need a topic of their own still create one (CreateTopic is part of the
protocol); a target that refuses makes them BLOCKED."""

#: how the operator provisioned the reference broker
BROKER_ARGS = ["--rustlog-topics", "orders:3,events:1"]
#: how the user names those resources to the suite
TARGET_OPTIONS = ["rustlog.topics=orders:3,events:1"]
