"""What every command family shares: the store, the options, the typed faults and variants, the token check and
the replies several families send (errors, and the one-field acknowledgements)."""

from __future__ import annotations

from wirecheck.broker.pravega.codes import AUTH_FAILED, ERROR_MESSAGE, NO_SUCH_SEGMENT, OPERATION_UNSUPPORTED
from wirecheck.broker.pravega.faults import PravegaFaults, PravegaVariants
from wirecheck.broker.pravega.options import PravegaOptions
from wirecheck.broker.pravega.store import Segment, Store
from wirecheck.broker.pravega.wire import Writer


class CommandFamily:
    """The base of one family of commands (hello.py, appends.py, reads.py, segments.py, attributes.py, tables.py);
    each handler takes the connection's state and a Reader over the payload (server.py's dispatch table)."""

    def __init__(self, store: Store, options: PravegaOptions, faults: PravegaFaults, variants: PravegaVariants):
        self.store = store
        self.options = options
        self.faults = faults
        self.variants = variants

    def writer(self) -> Writer:
        return Writer(standard_utf8=self.faults.standard_utf8_replies)

    def token_ok(self, token: str) -> bool:
        return not self.options.auth_token or token == self.options.auth_token

    def auth_failed(self, rid: int) -> bytes:
        return self.writer().i64(rid).utf("").i32(0).frame(AUTH_FAILED)

    def error_rid(self, rid: int) -> int:
        return 0 if self.faults.error_request_id_zero else rid

    def no_such_segment(self, rid: int, name: str, offset: int = -1) -> bytes:
        return self.writer().i64(self.error_rid(rid)).utf(name).utf("").i64(offset).frame(NO_SUCH_SEGMENT)

    def unsupported(self, rid: int, operation: str) -> bytes:
        return self.writer().i64(rid).utf(operation).utf("").frame(OPERATION_UNSUPPORTED)

    def illegal(self, rid: int, name: str, message: str) -> bytes:
        """ErrorMessage with ILLEGAL_ARGUMENT (0), what an IllegalArgumentException becomes (PRP:1218-1222)."""
        return self.writer().i64(rid).utf(name).utf(message).i32(0).frame(ERROR_MESSAGE)

    def simple(self, code: int, rid: int, name: str) -> bytes:
        return self.writer().i64(rid).utf(name).frame(code)

    def lookup(self, rid: int, name: str, table: bool, operation: str) -> Segment | bytes:
        """The segment, or the error reply: NoSuchSegment, or OperationUnsupported for the wrong kind (D6)."""
        segment = self.store.segments.get(name)
        if segment is None:
            return self.no_such_segment(rid, name)
        if segment.table != table:
            return self.unsupported(rid, operation)
        return segment
