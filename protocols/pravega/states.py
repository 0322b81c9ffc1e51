"""Pravega's reaction states (protocols/states.py): a connection's writer set up or not, replies named by type.

The segment store keeps per-connection state: a SetupAppend answered AppendSetup binds the writer to the
connection (WireCommands.SetupAppend; AppendProcessor keeps the connection's writers), and from then on the
connection takes appends for it. What else a connection does may differ once a writer is set up on it, so that
is the session state a mutant is sent in. Errors are reply types (``commands.ERROR_REPLIES``), named as upstream.
"""

from __future__ import annotations

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.states import ANY, Cell, StateModel, Transition

FRESH, WRITER = "fresh", "writer-set-up"

STATES = StateModel(
    initial=FRESH,
    states={FRESH: "no SetupAppend answered on this connection",
            WRITER: "a SetupAppend answered AppendSetup: the connection holds a writer (AppendProcessor)"},
    transitions=(Transition(ANY, "SetupAppend", "answer:AppendSetup", WRITER),),
    error_names=cmd.name_of,
    named_answers=True,  # the classifier's detail is the reply's command name
    requests=tuple(sorted(c.name for c in cmd.COMMANDS.values() if c.direction in ("request", "both"))),
    error_vocabulary={cmd.name_of(code): cmd.name_of(code) for code in cmd.ERROR_REPLIES},
    cells=(
        Cell("pravega.append.setup-no-segment", "SetupAppend", "error:NoSuchSegment"),
        Cell("pravega.append.invalid-event-number", "AppendBlockEnd", "error:InvalidEventNumber"),
        Cell("pravega.append.sealed", "AppendBlockEnd", "error:SegmentIsSealed"),
        Cell("pravega.append.conditional", "ConditionalAppend", "error:ConditionalCheckFailed"),
        Cell("pravega.read.long-poll-sealed", "ReadSegment", "error:SegmentIsSealed"),
        Cell("pravega.read.beyond-sealed", "ReadSegment", "error:ErrorMessage"),
        Cell("pravega.read.truncated", "ReadSegment", "error:SegmentIsTruncated"),
        Cell("pravega.read.no-such-segment", "ReadSegment", "error:NoSuchSegment"),
        Cell("pravega.segment.create-exists", "CreateSegment", "error:SegmentAlreadyExists"),
        Cell("pravega.segment.info", "GetStreamSegmentInfo", "error:NoSuchSegment"),
        Cell("pravega.segment.seal", "SealSegment", "error:SegmentIsSealed"),
        Cell("pravega.segment.truncate", "TruncateSegment", "error:SegmentIsTruncated"),
        Cell("pravega.segment.delete", "DeleteSegment", "error:NoSuchSegment"),
        Cell("pravega.segment.no-such-segment", "GetStreamSegmentInfo", "error:NoSuchSegment"),
        Cell("pravega.table.create", "CreateTableSegment", "error:SegmentAlreadyExists"),
        Cell("pravega.table.conditional", "UpdateTableEntries", "error:TableKeyDoesNotExist"),
        Cell("pravega.table.conditional", "UpdateTableEntries", "error:TableKeyBadVersion"),
        Cell("pravega.table.delete", "DeleteTableSegment", "error:TableSegmentNotEmpty"),
        Cell("pravega.auth.token-rejected", "GetStreamSegmentInfo", "error:AuthTokenCheckFailed"),
    ),
    steps=("SetupAppend",),
)
