"""RustLog's reaction states (protocols/states.py): errors by their numeric code (the seed's Error Codes), the
error cells the clause catalogue names.

A RustLog connection carries no session: every request stands alone (the seed has no handshake, no per-connection
producer or consumer state), so every mutant is sent in the one state ``open``; the map is request x reaction.
"""

from __future__ import annotations

from wirecheck.protocols.rustlog.layers import REQUESTS
from wirecheck.protocols.states import ANY, Cell, StateModel

STATES = StateModel(
    initial="open",
    states={"open": "a connection (RustLog keeps no per-connection state)"},
    error_names=str,
    requests=tuple(sorted(REQUESTS)),
    # the catalogue writes errors as "Error <code>"; 400 is also called InvalidRequest
    error_vocabulary={"Error 400": "400", "InvalidRequest": "400", "Error 404": "404", "Error 405": "405",
                      "Error 409": "409", "Error 413": "413", "Error 416": "416"},
    cells=(
        Cell("rustlog.request.not-object", ANY, "error:400"),
        Cell("rustlog.request.invalid-code", ANY, "error:400"),
        Cell("rustlog.errors.topic-not-found-details", "Fetch", "error:404"),
        Cell("rustlog.produce.unknown-topic", "Produce", "error:404"),
        Cell("rustlog.produce.unknown-partition", "Produce", "error:405"),
        Cell("rustlog.produce.record-limit", "Produce", "error:400"),
        Cell("rustlog.produce.invalid-base64", "Produce", "error:400"),
        Cell("rustlog.produce.record-too-large", "Produce", "error:413"),
        Cell("rustlog.produce.topic-name", "Produce", "error:400"),
        Cell("rustlog.fetch.below-log-start", "Fetch", "error:416"),
        Cell("rustlog.fetch.unknown-topic", "Fetch", "error:404"),
        Cell("rustlog.fetch.unknown-partition", "Fetch", "error:405"),
        Cell("rustlog.admin.topic-name", "CreateTopic", "error:400"),
        Cell("rustlog.admin.partition-count", "CreateTopic", "error:400"),
        Cell("rustlog.admin.describe-unknown", "DescribeTopic", "error:404"),
    ),
)
