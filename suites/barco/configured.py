"""A Barco broker as users run it (scripts/configured.py): the suite reaches the discovery port only and learns
the other endpoints from GET /v1/brokers; topics the user names are shared by the produce cases (a Barco broker
creates a topic on its first write, so nothing is provisioned on the broker)."""

BROKER_ARGS: list[str] = []
TARGET_OPTIONS = ["barco.topics=orders,events"]
