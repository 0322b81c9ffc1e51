"""Barco's binary producer (``--barco-producer-port``, 9254): STARTUP, PRODUCE and HEARTBEAT frames (notes §2).

A mixin of :class:`~wirecheck.broker.barco.server.BarcoPersonality`, which provides the state named
below and ``_store`` / ``_wedge``. Decisions D1-D6 are the suite's (protocols/barco/clauses.py); each branch says
which.
"""

from __future__ import annotations

import asyncio

from wirecheck.broker.barco import codec
from wirecheck.broker.barco.faults import BarcoFaults, BarcoVariants
from wirecheck.broker.barco.store import StoreFull
from wirecheck.broker.core import Connection, FrameTimeout
from wirecheck.broker.framed import discard


class BinaryProducer:
    faults: BarcoFaults
    variants: BarcoVariants
    wedged: bool
    _crc_over: int

    async def _binary(self, conn: Connection) -> None:
        started = False
        while True:
            first = await conn.read_exactly(1)
            if self.wedged:
                return await self._wedge(conn)
            deadline = conn.frame_deadline()
            head = first + await conn.read_by(codec.HEAD_SIZE - 1, deadline)
            version, flags, stream, op, length, crc_ok = codec.decode_head(head)
            if not crc_ok and not self.faults.crc_unchecked:
                if self.variants.crc_error_then_close:  # D1 permits an ERROR before the close
                    await conn.write(self._error(stream, "Invalid head crc"))
                return  # D1: not processed; close without reading the body
            if length > codec.MAX_FRAME_BODY and not self.faults.oversize_buffered:
                if self.faults.crash_on_oversize:
                    self.wedged = True
                    return
                await conn.write(self._error(stream, "Body length above the limit"))
                if not self.variants.oversize_error_discard:
                    return  # D4: never buffered
                await discard(conn, length, deadline)  # the other reading: skipped unbuffered, the stream in sync
                continue
            if version != 1 and not self.variants.version_ignored:  # the variant: as upstream (notes §11)
                await conn.write(self._error(stream, f"Unsupported version {version}"))
                return  # D2
            if self.faults.short_read_body and length:
                body = await self._body_or_partial(conn, length, deadline)
            else:
                body = await conn.read_by(length, deadline) if length else b""  # D6: every body is consumed
            if self.faults.stream_id_wrong:
                stream = (stream + 1) & 0xFFFF
            if not started:
                if op == codec.OP_STARTUP:
                    if self.faults.startup_signed_stream_id and stream > 0x7FFF:
                        await conn.write(self._error(stream, f"Invalid stream id {stream - 0x10000}"))
                        continue
                    started = True
                    await conn.write(codec.encode_frame(codec.OP_READY, stream, crc_over=self._crc_over))
                    continue
                if not (op == codec.OP_PRODUCE and self.faults.startup_not_required):
                    await conn.write(self._error(stream, "Invalid first message"))
                    return
            if self.faults.pipelined_answer_dropped and conn.reader._buffer:  # asyncio's read buffer holds
                continue  # (part of) the next frame: this one is dropped unanswered
            if body and op != codec.OP_PRODUCE and self.variants.control_body_closes:
                # notes §10.9's other reading: such a body is a protocol error (the body was read: no desync)
                await conn.write(self._error(stream, "Only PRODUCE frames carry a body"))
                return
            if op == codec.OP_PRODUCE:
                try:
                    answer = self._produce_frame(stream, flags, body)
                except codec.BadLengths as exc:  # bad-lengths-close: refused, then the connection ends
                    await conn.write(self._error(stream, str(exc)))
                    return
                await conn.write(answer)
                if self.faults.truncated_body_closes and answer[14:17] == b"EOF":
                    return  # ERROR(0, "EOF ..."): the body ended inside its timestamp, key or topic
            elif op == codec.OP_HEARTBEAT:
                answer = codec.OP_PRODUCE_RESPONSE if self.faults.heartbeat_wrong_op else codec.OP_READY
                await conn.write(codec.encode_frame(answer, stream, crc_over=self._crc_over))
            elif op == codec.OP_STARTUP and self.variants.second_startup_ready:
                await conn.write(codec.encode_frame(codec.OP_READY, stream, crc_over=self._crc_over))
            elif self.faults.unknown_op_silent and op not in (codec.OP_STARTUP,):
                continue
            else:
                await conn.write(self._error(stream, "Only producer operations are supported"))

    @staticmethod
    async def _body_or_partial(conn: Connection, length: int, deadline: float) -> bytes:
        """short-read-body: a body the peer ends early (EOF) is processed as far as it came, where it should be
        dropped with the connection (an io.ReadFull whose ErrUnexpectedEOF is ignored)."""
        try:
            async with asyncio.timeout_at(deadline):
                return await conn.reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except TimeoutError:
            raise FrameTimeout("frame not complete in time") from None

    def _error(self, stream: int, message: str) -> bytes:
        frame = codec.error_frame(stream, message, code=9 if self.faults.error_code_unknown else 0,
                                  crc_over=self._crc_over, capped=not self.variants.error_quotes_input,
                                  prefixed=self.faults.error_length_prefixed)
        if self.faults.error_frame_cut:
            return frame[:-1]  # the header still announces the whole body
        return frame

    def _produce_frame(self, stream: int, flags: int, body: bytes) -> bytes:
        try:
            timestamp, key, topic, messages = codec.decode_produce(
                body, flags, check_lengths=not self.faults.message_lengths_unchecked)
        except codec.BadLengths as exc:
            if self.variants.bad_lengths_close:
                raise
            return self._error(stream, str(exc))
        except codec.Malformed as exc:
            return self._error(stream, str(exc))
        problem = codec.topic_problem(topic, notes_rule_only=self.variants.topic_any_bytes)
        if problem and not self.faults.topic_unvalidated:
            if self.variants.error_quotes_input:  # the protocol sets no length on ERROR messages
                problem += f": topic {topic.hex()}"
            return self._error(stream, problem)
        if not messages:
            if self.variants.empty_produce_acked:  # nothing to store: acknowledged as a no-op
                return codec.encode_frame(codec.OP_PRODUCE_RESPONSE, stream, crc_over=self._crc_over)
            return self._error(stream, "No messages")  # D3
        try:
            self._store(topic, key, messages, None if self.faults.timestamp_ignored else timestamp)
        except StoreFull as exc:
            return self._error(stream, str(exc))
        ack_body = b"\x00" if self.faults.produce_ack_body else b""
        return codec.encode_frame(codec.OP_PRODUCE_RESPONSE, stream, ack_body, crc_over=self._crc_over)
