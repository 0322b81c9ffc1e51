"""An independent, in-memory Pravega segment-store server (wire protocol v17).

Written from the research notes in specs/pravega.md and the published
wire-protocol page only.  Run it with ``python -m tests.independent.pravega``.
"""

WIRE_VERSION = 17
OLDEST_COMPATIBLE_VERSION = 5
