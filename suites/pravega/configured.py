"""A Pravega segment store as users run it (scripts/configured.py): auth on, a stream segment and a table segment
created beforehand in the operator's scope, named to the suite with --target-option; the token goes with every
request. Cases that seal, truncate, delete or count create segments of their own under that scope."""

_SEGMENT, _TABLE, _TOKEN = "ops/orders/0.#epoch.0", "ops/_tables/state", "configured-token"

BROKER_ARGS = ["--pravega-segments", _SEGMENT, "--pravega-tables", _TABLE, "--pravega-auth-token", _TOKEN]
TARGET_OPTIONS = [f"pravega.segments={_SEGMENT}", f"pravega.tables={_TABLE}", "pravega.scope=ops",
                  f"pravega.token={_TOKEN}"]
