"""Pravega segment-store clause catalogue (wire version 17, oldest compatible 5).

Sources: the byte-level research notes (specs/pravega.md, cited "notes §N"; "A<n>" is ambiguity n of §11) which
cite upstream files by abbreviation (WC WireCommands.java, CD CommandDecoder, AD AppendDecoder, AP
AppendProcessor, PRP PravegaRequestProcessor, SCIH ServerConnectionInboundHandler, SSRI StreamSegmentReadIndex,
WS WriterState); the published wire-protocol page (the seed, "DOC"). Where DOC and the code disagree the code is
the wire truth and the clause says so in ``decision``: VARLONG (A1: every long is a fixed 8-byte writeLong),
strings (A2: modified UTF-8), the frame limit (A3), AppendBlock without a requestId (A4), Event never a
top-level frame (A5), DataAppended's fifth field (A6), exactly one SegmentRead per ReadSegment (A8). Where the
code's path is implementation-defined (a read beyond a sealed end, an equal event number), the clause is SHOULD
or lists every outcome the code can take.
"""

from wirecheck.protocols.clauses import Catalogue, Clause, Level
from wirecheck.protocols.clients import client_clauses
from wirecheck.protocols.pravega.clients import CLIENTS, SCENARIOS
from wirecheck.protocols.pravega.commands import MAX_PAYLOAD

MUST, SHOULD = Level.MUST, Level.SHOULD

_C = [
    # -- framing ---------------------------------------------------------------------------------------------
    Clause("pravega.framing.reply",
           "Every reply is an i32 type, an i32 length and exactly that many payload bytes, and decodes as the "
           "command its type names (fixed-width longs, modified UTF-8 strings).",
           "notes §1, §2, §4; WC writeFields/readFrom",
           decision="A1: DOC lists VARLONG; no command uses a varint, every long is an 8-byte writeLong. We "
                    "decode fixed-width longs only.",
           sole_reading="No command has a varint: the Java and Rust clients read every long as 8 bytes (notes §0, "
                        "§2, A1), so a VARLONG reply breaks every real client; DOC's table is wrong, not an option."),
    Clause("pravega.framing.unknown-type",
           "A frame whose type is no wire command (unassigned or retired codes, e.g. 6, 54, 72, 73) closes the "
           "connection without a reply.",
           "notes §1 Type lookup, §3, §8; CD:77-84, SCIH:74-77"),
    Clause("pravega.framing.not-a-request",
           "A reply-only command, a top-level Event (0) or PartialEvent (-2), or an admin-port command sent to the "
           "segment store's port closes the connection without a reply.",
           "notes §4.1, §8; WCT:41 (Event has no reader), SCIH:51 (ClassCastException), WC:801",
           decision="A5: DOC lists Event as a request; in the code it exists only inside append blocks.",
           sole_reading="Event has no reader as a top-level command (WCT:41) and no client sends one (notes §5.1, "
                        "§8): the upstream server can only close, and DOC describes no other answer."),
    Clause("pravega.framing.oversize",
           f"A length above {MAX_PAYLOAD:,} (header plus payload above 0xFFFFFF), or a negative one (read unsigned), "
           "closes the connection without reading the payload.",
           "notes §1 Server frame limit, §9; PCL:176-183 LengthFieldBasedFrameDecoder(0xFFFFFF, 4, 4)",
           decision="A3: DOC says 'less than 2^24'; the server counts the 8-byte header in the limit.",
           sole_reading="DOC's 'should be less than 2^24' binds senders and says nothing of what a server does past "
                        "it; the only server behaviour on record is Netty's failFast decoder counting the header "
                        "(PCL:180, notes §1, §9), which framing.max-payload pins from the other side."),
    Clause("pravega.framing.max-payload",
           f"A frame whose payload is exactly {MAX_PAYLOAD:,} bytes is accepted.",
           "notes §1, §9, A3; PCL:180"),
    Clause("pravega.framing.truncated",
           "A payload shorter than its command's required fields (a length or count running past it included) "
           "closes the connection without a reply.",
           "notes §1 Short payload, §8; SCIH:74-77"),
    Clause("pravega.framing.trailing-bytes",
           "Bytes after the last field a reader knows, inside the frame's length, are skipped: the command is "
           "answered as if they were absent.",
           "notes §0, §1 Surplus payload; CD:58-62; CommandDecoderTest.testUnknownFields"),
    Clause("pravega.framing.optional-fields",
           "Optional trailing fields (an older version's shape) may be absent and take their defaults: "
           "ReadSegment without requestId, CreateSegment without rolloverSizeBytes, MergeSegments without its "
           "attribute list.",
           "notes §1 Optional trailing fields, §4; WC readFrom available() tests"),
    Clause("pravega.framing.partial",
           "A frame arriving in several TCP segments (the header split too) is processed once complete, and not "
           "before.",
           "notes §1 (LengthFieldBasedFrameDecoder buffers until length + 8 bytes)"),
    Clause("pravega.framing.pipelined",
           "Many frames in one write are each processed; replies to different requests may come in any order "
           "but each carries its own requestId.",
           "notes §7.1 (the server is asynchronous; acks for one writer are in order)"),
    Clause("pravega.framing.padding",
           "A top-level Padding frame is accepted and not answered.",
           "notes §5.3 rule 7; AD:113-115"),
    Clause("pravega.strings.modified-utf8",
           "Strings are Java modified UTF-8 with a u16 byte count: U+0000 travels as C0 80 and a character "
           "outside the BMP as two 3-byte surrogates, in requests and replies alike.",
           "notes §2 str; JDK DataOutput.writeUTF",
           decision="A2: DOC says UTF-8; the code uses writeUTF/readUTF (modified UTF-8).",
           sole_reading="The Java client reads every string with readUTF, which rejects standard UTF-8's 4-byte "
                        "sequences (notes §2, A2): a reply in DOC's plain UTF-8 breaks it on any non-BMP character."),
    Clause("pravega.strings.invalid",
           "A string holding a 4-byte UTF-8 sequence or a stray continuation byte closes the connection without "
           "a reply (readUTF throws).",
           "notes §2 (readUTF rejects F0-F7 and 10xxxxxx leads), §8"),
    # -- handshake ----------------------------------------------------------------------------------------------
    Clause("pravega.hello.reply",
           "Hello is answered with a Hello carrying the server's own version range.",
           "notes §6; AP:157-164"),
    Clause("pravega.hello.versions",
           "The server's Hello has lowVersion <= highVersion and highVersion >= 5, the oldest version the "
           "current clients speak.",
           "notes §6, §9 (WIRE_VERSION 17, OLDEST_COMPATIBLE_VERSION 5)"),
    Clause("pravega.hello.incompatible",
           "A Hello whose range does not meet the server's (client low above the server's high, or client high "
           "below the server's low) is answered with the server's Hello, then the connection closes.",
           "notes §6; AP:157-164, SCIH close() flushes first"),
    Clause("pravega.hello.not-required",
           "Commands are served without a prior Hello (there is no negotiated state).",
           "notes §6 (the server never requires Hello)"),
    Clause("pravega.keepalive.echo",
           "KeepAlive is answered with KeepAlive, the connection staying open.",
           "notes §4.1, §6; AP:167-170"),
    Clause("pravega.request-id.echo",
           "Every reply to a request carrying a requestId carries the same requestId, error replies included.",
           "notes §7.1; PRP, AP"),
    # -- appends ------------------------------------------------------------------------------------------------
    Clause("pravega.append.setup",
           "SetupAppend on an existing segment is answered with AppendSetup(requestId, segment, writerId, "
           "lastEventNumber), Long.MIN_VALUE for a writer the segment has never seen.",
           "notes §4.2, §7.2; AP:179-233; APTest testEventNumbers",
           decision="A7: DOC calls it the stream's last event number; it is this writer's last event number on "
                    "this segment.",
           sole_reading="The Java client takes lastEventNumber as the ack of its own writer's events on this segment "
                        "and resends those above it (notes §7.2 Client numbering, SegmentOutputStreamImpl:432-460): "
                        "a stream-wide number would make it drop or duplicate events."),
    Clause("pravega.append.setup-no-segment",
           "SetupAppend on a missing segment is answered with NoSuchSegment, the connection staying open.",
           "notes §7.2; AP handleException"),
    Clause("pravega.append.without-setup",
           "An AppendBlock, AppendBlockEnd, ConditionalAppend or ConditionalBlockEnd for a writerId without a "
           "SetupAppend on this connection closes the connection without a reply.",
           "notes §5.3 rule 2, §8; AD:242-248; AEDTest testAppendWithoutSetup"),
    Clause("pravega.append.ack",
           "An append is acknowledged with DataAppended(writerId, eventNumber = the block's lastEventNumber, "
           "previousEventNumber, requestId of the AppendBlockEnd, currentSegmentWriteOffset).",
           "notes §0, §4.2, §7.2; AP:358-410",
           decision="A6: DOC lists four fields; the code writes currentSegmentWriteOffset as a fifth.",
           sole_reading="The server announces wire version 17, whose DataAppended has the fifth field (WC, notes "
                        "§4.2, A6); the four-field shape is the v2-v4 layout, which a v17 client reads as write "
                        "offset -1."),
    Clause("pravega.append.ack-previous",
           "A DataAppended's previousEventNumber is the previous ack's eventNumber, and for the first ack after "
           "SetupAppend the AppendSetup's lastEventNumber: acks strictly increase.",
           "notes §7.2 Ack invariants; WS:191-197; SegmentOutputStreamImpl:493-502"),
    Clause("pravega.append.write-offset",
           "DataAppended.currentSegmentWriteOffset is the segment's length after the append.",
           "notes §7.2; SegmentApi.java:49-52; APTest"),
    Clause("pravega.append.stored-verbatim",
           "Appended block bytes (whole Event frames, headers included) are stored verbatim and read back as "
           "they were sent.",
           "notes §5.1; AD, EventSegmentReaderImpl:108-117"),
    Clause("pravega.append.partial-event",
           "An event split between an AppendBlock (PartialEvent trailer) and its AppendBlockEnd's data is stored "
           "whole: block[0:sizeOfWholeEvents] ++ partial ++ blockEnd.data.",
           "notes §5.2 (B2), §5.3 rule 4; AD:215-241; AEDTest testAppendSpanningBlockBound",
           decision="A4: DOC gives AppendBlock a requestId and no trailer; the code has neither requestId nor "
                    "an untrailed open block.",
           sole_reading="The Java client sends AppendBlock as writerId plus the block, ended by a PartialEvent or "
                        "Padding trailer (notes §5.2, §5.3, A4; CE:338, 404-408): a server reading DOC's requestId "
                        "misparses every block a real client sends."),
    Clause("pravega.append.padding",
           "A block ended by a Padding trailer stores only its whole events.",
           "notes §5.2 (B1), §5.3 rule 4; CE:396-408"),
    Clause("pravega.append.standalone-block-end",
           "An AppendBlockEnd without a preceding AppendBlock appends its own data (the Rust client's only "
           "shape), whatever sizeOfWholeEvents says.",
           "notes §5.2 (C); AD:191-193"),
    Clause("pravega.append.block-rules",
           "numEvents <= 0, a writerId other than the open block's, sizeOfWholeEvents outside 0..block length, "
           "or a second AppendBlock before the AppendBlockEnd close the connection without an ack.",
           "notes §5.3 rules 1, 3; AD:106-110, 167-188; AEDTest testAppendDecoderInvalidAppendBlockEnd*"),
    Clause("pravega.append.event-number-lower",
           "An append whose event number is lower than the last one stored for the writer closes the connection "
           "without an ack.",
           "notes §7.2 (WS:125 'Event was already appended'), §8; AD:170-176"),
    Clause("pravega.append.event-number-equal",
           "An append whose event number equals the writer's last is not acknowledged again.",
           "notes §7.2 Equal event number, A24 (AP:366-367)", SHOULD,
           decision="Derived from the code (no upstream test): the data is appended and no DataAppended sent. "
                    "Closing the connection instead is NON-STRICT; a second ack for the same number is "
                    "always wrong (the client requires strictly increasing acks), judged under append.ack-previous."),
    Clause("pravega.append.resetup",
           "A new SetupAppend for a writer (e.g. after a reconnect) returns the event number of its last "
           "acknowledged append, so the writer resends only later events.",
           "notes §7.2 Client numbering; SegmentOutputStreamImpl:432-460"),
    Clause("pravega.append.invalid-event-number",
           "When another connection moved the writer's event number after this connection's SetupAppend, the "
           "append is answered with InvalidEventNumber(writerId, requestId, eventNumber) and the connection "
           "closes.",
           "notes §7.2 InvalidEventNumber, §7.6; AP:479-482; APTest testBadAttributeException"),
    Clause("pravega.append.sealed",
           "An append to a sealed segment is answered with SegmentIsSealed (offset carrying the event number) "
           "and nothing is appended; a later append for that writer on the same connection closes it.",
           "notes §7.2, A15; AP:471-474; pravega#3694"),
    Clause("pravega.append.conditional",
           "A ConditionalAppend or ConditionalBlockEnd at the segment's current length is appended and "
           "acknowledged with DataAppended; at any other offset it is answered with ConditionalCheckFailed("
           "writerId, eventNumber, requestId), nothing is appended and the connection stays usable. A negative "
           "expected offset names no position: ConditionalCheckFailed, or (Pravega 0.13.0) an append at the end.",
           "notes §7.3; AP:383-390; APTest testConditionalAppendSuccess/Failure; negative offsets: Pravega v0.13.0 "
           "segmentstore/server/src/main/java/io/pravega/segmentstore/server/logs/"
           "SegmentMetadataUpdateTransaction.java:297-307 (an append offset below 0 is no condition)"),
    Clause("pravega.append.conditional-event-type",
           "A ConditionalAppend whose nested event type is not 0 closes the connection.",
           "notes §4.2 ConditionalAppend (InvalidMessageException)"),
    Clause("pravega.append.transient",
           "CreateTransientSegment is answered with SegmentCreated naming a new segment that exists and can be "
           "appended to by that writer.",
           "notes §4.2 CreateTransientSegment; AP createTransientSegment"),
    # -- reads --------------------------------------------------------------------------------------------------
    Clause("pravega.read.in-range",
           "ReadSegment inside [startOffset, length) is answered with one SegmentRead(segment, offset = the "
           "requested offset, data) whose data is non-empty, at most 2 MiB and exactly the segment's bytes from "
           "that offset.",
           "notes §7.4; PRP:222-371",
           decision="A8: DOC says one or more replies; the code sends exactly one, possibly short."),
    Clause("pravega.read.suggested-length",
           "suggestedLength is a hint clamped to [8, 2 MiB]: 0, negative and huge values still get a "
           "SegmentRead with data when data exists.",
           "notes §7.4 Size, A9; PRP:160, 232"),
    Clause("pravega.read.long-poll",
           "A read at or beyond the tail of an unsealed segment is parked: no reply until data reaches the "
           "offset, then one SegmentRead from that offset.",
           "notes §7.4 (FutureReadResultEntry, no timeout); SSRI:739-812"),
    Clause("pravega.read.long-poll-sealed",
           "A read parked at the tail is answered once the segment is sealed: SegmentIsSealed, or an empty "
           "SegmentRead with endOfSegment.",
           "notes §7.4 (triggerFutureReads fails parked reads with StreamSegmentSealedException)"),
    Clause("pravega.read.end-of-segment",
           "A read at the length of a sealed segment is answered with an empty SegmentRead with endOfSegment "
           "true.",
           "notes §7.4; SSRI:920-934; PRPTest testReadSegmentEmptySealed"),
    Clause("pravega.read.beyond-sealed",
           "A read beyond the end of a sealed segment, or at a negative offset, gets ErrorMessage(code 0, "
           "ILLEGAL_ARGUMENT) or closes the connection.",
           "notes §7.4 (IllegalArgumentException; which path depends on metadata state)",
           decision="Both paths are the upstream server's, so both are conformant; a SegmentRead is never right."),
    Clause("pravega.read.truncated",
           "A read below the segment's start offset is answered with SegmentIsTruncated(requestId, segment, "
           "startOffset, '', offset).",
           "notes §7.4; PRP:289-297; PRPTest testReadSegmentTruncated"),
    Clause("pravega.read.no-such-segment",
           "A read of a missing segment is answered with NoSuchSegment(requestId, segment, '', offset = the "
           "requested offset).",
           "notes §7.4; PRP:240-241, 1169-1172"),
    # -- segment lifecycle --------------------------------------------------------------------------------------
    Clause("pravega.segment.create",
           "CreateSegment is answered with SegmentCreated(requestId, segment); the segment then exists, empty "
           "and unsealed.",
           "notes §7.5; PRP:470-503"),
    Clause("pravega.segment.create-exists",
           "Creating a segment that exists is answered with SegmentAlreadyExists.",
           "notes §7.5, §7.6"),
    Clause("pravega.segment.info",
           "GetStreamSegmentInfo is answered with StreamSegmentInfo(exists, isSealed, isDeleted, lastModified, "
           "writeOffset = length, startOffset) matching the segment's state; a missing segment gets "
           "NoSuchSegment (or exists=false).",
           "notes §7.5; PRP:445-467"),
    Clause("pravega.segment.seal",
           "SealSegment is answered with SegmentSealed and the segment is sealed; sealing it again is answered "
           "with SegmentIsSealed.",
           "notes §7.5; SMUT:360-363"),
    Clause("pravega.segment.truncate",
           "TruncateSegment within [startOffset, length] is answered with SegmentTruncated and moves the start "
           "offset; outside it is answered with SegmentIsTruncated(startOffset = the current start, offset = "
           "the requested one). A negative offset names no position: SegmentIsTruncated, or (Pravega 0.13.0) the "
           "connection closed.",
           "notes §7.5; SMUT:378-384; PRPTest testCreateSealTruncateDelete; negative offsets: Pravega v0.13.0 "
           "segmentstore/server/src/main/java/io/pravega/segmentstore/server/logs/operations/"
           "StreamSegmentTruncateOperation.java:51 (IllegalArgumentException on the connection's thread, which "
           "ServerConnectionInboundHandler.exceptionCaught answers by closing)"),
    Clause("pravega.segment.delete",
           "DeleteSegment is answered with SegmentDeleted and the segment is gone; deleting a missing segment is "
           "answered with NoSuchSegment.",
           "notes §7.5"),
    Clause("pravega.segment.merge",
           "MergeSegments of a sealed source is answered with SegmentsMerged(target, source, newTargetWriteOffset "
           "= the target's new length); the target ends with the source's bytes and the source is gone.",
           "notes §4.4, §7.5; PRP:522-576"),
    Clause("pravega.segment.merge-batch",
           "MergeSegmentsBatch is answered with SegmentsBatchMerged listing each source with the target's "
           "length after it.",
           "notes §4.4 (WC:1634-1709)"),
    Clause("pravega.segment.policy",
           "UpdateSegmentPolicy on an existing segment is answered with SegmentPolicyUpdated.",
           "notes §7.5"),
    Clause("pravega.segment.locate-offset",
           "LocateOffset (v17) is answered with OffsetLocated(requestId, segment, offset) where 0 <= offset <= "
           "length. A server whose Hello tops below 17 does not have the command (UNIMPLEMENTED).",
           "notes §4.3, §7.5 (without an index segment the offset is the length); Pravega v0.13.0 "
           "shared/protocol/src/main/java/io/pravega/shared/protocol/netty/WireCommands.java:66 (WIRE_VERSION 16, "
           "no LocateOffset)"),
    Clause("pravega.segment.no-such-segment",
           "Segment operations (seal, truncate, delete, info, attributes, policy, merge) on a missing segment are "
           "answered with NoSuchSegment, the connection staying open.",
           "notes §7.5, §7.6"),
    # -- attributes ---------------------------------------------------------------------------------------------
    Clause("pravega.attribute.unset",
           "GetSegmentAttribute of an attribute never set is answered with Long.MIN_VALUE.",
           "notes §4.3, §7.5; WC:72"),
    Clause("pravega.attribute.cas",
           "UpdateSegmentAttribute succeeds (true) only when the current value equals expectedValue (an unset "
           "attribute equals Long.MIN_VALUE); otherwise it answers false and changes nothing.",
           "notes §7.5; PRP:382-415"),
    # -- tables -------------------------------------------------------------------------------------------------
    Clause("pravega.table.create",
           "CreateTableSegment is answered with SegmentCreated; creating it again is answered with "
           "SegmentAlreadyExists.",
           "notes §4.6, §7.6"),
    Clause("pravega.table.update",
           "UpdateTableEntries is answered with TableEntriesUpdated holding one new version per entry, in order; "
           "the entries then read back with those versions.",
           "notes §4.6; PRP updateTableEntries"),
    Clause("pravega.table.version-bump",
           "Every update of a key gives it a new version, greater than its previous one.",
           "notes §4.6 (versions are segment offsets)"),
    Clause("pravega.table.conditional",
           "A conditional update or removal whose key version differs from the current one is answered with "
           "TableKeyBadVersion (NOT_EXISTS on an existing key included) or, for a key that does not exist, "
           "TableKeyDoesNotExist, and changes none of the batch's keys.",
           "notes §4.6, §7.6; PRP handleException:1206-1217"),
    Clause("pravega.table.read",
           "ReadTable returns every requested key with its current version and value; a missing key comes back "
           "with version NOT_EXISTS (-1) and an empty value.",
           "notes §4.6 TableRead; PRP getTableEntriesCommand"),
    Clause("pravega.table.remove",
           "RemoveTableKeys is answered with TableKeysRemoved and the keys then read as missing.",
           "notes §4.6"),
    Clause("pravega.table.iterate",
           "ReadTableKeys / ReadTableEntries page through every live key exactly once, following the "
           "continuation token, and end with an empty page.",
           "notes §4.6 (TableIteratorArgs, MAX_READ_SIZE)"),
    Clause("pravega.table.delta",
           "ReadTableEntriesDelta from position 0 returns the live entries (at most suggestedEntryCount) with a "
           "lastPosition from which a later call returns only later changes.",
           "notes §4.6 (88/87)"),
    Clause("pravega.table.info",
           "GetTableSegmentInfo is answered with TableSegmentInfo whose entryCount converges to the number of live "
           "keys: asked again after a change, it reaches that number.",
           "notes §4.6 (68/69); segmentstore/contracts/.../tables/TableSegmentInfo.java (entryCount: 'an eventually "
           "consistent value ... will converge towards the actual number of unique keys'); ContainerKeyIndex."
           "getUniqueEntryCount (the indexed count plus the tail cache's delta)",
           decision="When the count reaches the number of keys is the server's: the reference answers it at once, "
                    "Pravega once its background index caught up (variant table-info-count-converges); the case "
                    "asks again for up to 10 s."),
    Clause("pravega.table.delete",
           "DeleteTableSegment with mustBeEmpty on a table holding keys is answered with TableSegmentNotEmpty; "
           "otherwise with SegmentDeleted.",
           "notes §4.6, §7.6"),
    # -- auth ---------------------------------------------------------------------------------------------------
    Clause("pravega.auth.token-rejected",
           "A server that requires delegation tokens answers a request with a wrong token with "
           "AuthTokenCheckFailed(requestId, '', errorCode 0 or 1) and keeps the connection open.",
           "notes §7.2, §7.6; PRP:228, AP handleException",
           decision="A16: on ReadSegment upstream puts the read offset in the requestId field; we accept either "
                    "the requestId or the offset there."),
    Clause("pravega.capture.request-decodes",
           "Every frame a client sends decodes as a known wire command (captures of real clients).",
           "notes §3, §4",
           unbreakable="It judges the frames a client sent (in captures), which no server can change."),
    # -- robustness -------------------------------------------------------------------------------------------
    Clause("pravega.robustness.survives",
           "After any input, however hostile, the server still answers a new connection's Hello.",
           "ARCHITECTURE 'Fuzzing' (liveness probe); notes §8"),
    Clause("pravega.robustness.no-hang",
           "A request that permits an answer is answered (or the connection closed) before the deadline.",
           "notes §8 (the server answers or closes; only reads at the tail park)"),
]

CATALOGUE = Catalogue("pravega", _C + client_clauses("pravega", CLIENTS, SCENARIOS))
