"""The Pravega safety workload: the ``pravega`` Python client (bindings of the Rust client) writes unique events to
one stream of a few fixed segments and reads them back through reader groups, recording every operation
(reports/safety/history.py).

- writers: ``send`` operations of 1-3 events with one routing key, then a flush (its return acknowledges them; the
  segment store deduplicates a writer's resends by event number, so a reconnect never duplicates);
- transactional writers: ``txn`` operations of 1-4 events on one or two routing keys in a transaction, committed, or
  aborted on purpose one time in ten (the commit merges the transaction's segments into the stream's: readers never
  see an aborted or uncommitted event);
- readers: each reader process makes a reader group of its own on the whole stream (an ``assign``: from the
  start), then ``poll`` operations, each the events of the segment slice the reader hands out within a moment;
- every client is dropped and replaced after a random number of operations, and its process is killed -9 now and
  then (supervisor.py);
- the final read: a new reader group reads the stream from the start until every acknowledged value has been seen.

A history key is a routing key (``SCOPE/STREAM/kN``; with a fixed scaling policy all of one key's events are in
one segment, in order); an event carries its key and value (``kN:VALUE``), and a reader sees its offset in the
segment. A writer never sees an offset (DataAppended acknowledges event numbers; the client shows none), so the
anomalies that compare acknowledged offsets cannot be judged (``UNJUDGED``) and an acknowledged event never read is
``unseen``, never ``lost-write``. The clients start at the controller (``BOOTSTRAP``), whose getURI answers name the
segment store; behind the fault proxy they name a proxy listener in front of it (pravega_address.py). The client
holds the GIL while it waits on the server, so setup runs in a child process (this process runs the proxy) and a
stalled call ends only with its process (the supervisor's crashes, or its stop).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.safety.pravega_address import PravegaAddressRewriter
from wirecheck.targets.safety.run import Run
from wirecheck.targets.safety.workload import ClientWorkload

TOPIC_PREFIX = "wirecheck-safety-"  # + a run id: the scope; a target reused across runs never mixes their values
STREAM = "events"
BOOTSTRAP = "pravega-controller"  # the reference broker's port the clients start from (getURI names the store)
UPSTREAM_BOOTSTRAP = "controller"  # the same port of the upstream server (targets/upstream/pravega.py's ports)
ROLES = {"send": 3, "txn": 2, "poll": 2}
_NO_OFFSETS = "a Pravega writer is never told an offset (DataAppended acknowledges event numbers)"
UNJUDGED = {"nonmonotonic-send": _NO_OFFSETS, "int-nonmonotonic-send": _NO_OFFSETS,
            "nonmonotonic-send-realtime": _NO_OFFSETS,
            "lost-write": _NO_OFFSETS + ": an acknowledged event never read cannot be placed below a read one, "
                          "so it is reported as unseen"}
SEGMENTS = 4  # fixed scaling: the stream never splits, so a routing key stays in one segment
ROUTING_KEYS = 4
FINAL_READ_S = 60.0
ABORT_CHANCE = 0.1  # per transaction: aborted on purpose
SLICE_WAIT_S = 0.5  # one poll's wait for a segment slice


class PravegaWorkload(ClientWorkload):
    def __init__(self, bootstrap: str, topic: str, run: Run, rng: random.Random, log: logging.Logger, slot: int = 0):
        super().__init__(bootstrap, topic, run, rng, log, slot)
        self.scope = topic

    @property
    def controller(self) -> str:
        return f"tcp://{self.bootstrap}"

    def key_of(self, routing_key: str) -> str:
        return f"{self.scope}/{STREAM}/{routing_key}"

    def manager(self):
        import pravega_client

        return pravega_client.StreamManager(self.controller)

    # ------------------------------------------------------------------------------------------ setup

    def create_topic(self, timeout: float = 60.0) -> None:
        """In a child process: the client holds the GIL while it waits, and this process runs the fault proxy."""
        try:
            done = subprocess.run([sys.executable, "-m", __name__, self.bootstrap, self.topic], capture_output=True,
                                  text=True, timeout=timeout + 10)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"could not create stream {self.scope}/{STREAM} at {self.controller} in "
                               f"{timeout:.0f} s") from None
        if done.returncode:
            lines = done.stderr.strip().splitlines()
            raise HarnessError(lines[-1] if lines else f"creating the stream exited with status {done.returncode}")

    def _create_stream(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            try:
                manager = self.manager()
                manager.create_scope(self.scope)  # False when it exists: a stream of another layout is refused below
                if not manager.create_stream(self.scope, STREAM, SEGMENTS):
                    raise HarnessError(f"stream {self.scope}/{STREAM} exists already: start the target empty")
                return
            except HarnessError:
                raise
            except Exception as exc:  # the controller is not there yet
                last = str(exc)
            time.sleep(1)
        raise HarnessError(f"could not create stream {self.scope}/{STREAM} at {self.controller} in {timeout:.0f} s: "
                           f"{last}")

    # ------------------------------------------------------------------------------------------ clients

    def loops(self):
        return {"send": self._writer_loop, "txn": self._transactional_loop, "poll": self._reader_loop}

    def _routing_key(self) -> str:
        return f"k{self.rng.randrange(ROUTING_KEYS)}"

    def _client(self, process: int, make):
        """``make(manager)``, or None when the controller cannot be reached now (retried by the caller)."""
        try:
            manager = self.manager()
            return manager, make(manager)
        except Exception as exc:  # the controller is away (a restart, a proxy fault): a new client soon
            self.log.info("process %s: client: %s", process, exc)
            self.run.stop.wait(0.5)
            return None

    def _writer_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            made = self._client(process, lambda manager: manager.create_writer(self.scope, STREAM))
            if made is None:
                continue
            _manager, writer = made  # the manager owns the client's runtime: it must outlive the writer
            for _ in range(self._life()):
                if not self._pace() or not self._send(process, writer):
                    break

    def _send(self, process: int, writer) -> bool:
        """One send operation; False when the writer is to be replaced."""
        routing = self._routing_key()
        key, values = self.key_of(routing), self.run.values(self.rng.randint(1, 3))
        self.run.record("invoke", process, "send", [["send", key, v] for v in values])
        try:
            for value in values:
                writer.write_event_bytes(f"{routing}:{value}".encode(), routing)
            writer.flush()
        except Exception as exc:  # a lost connection, a refused append: it may or may not have taken effect
            self.run.record("info", process, "send", [["send", key, [None, v]] for v in values], error=str(exc))
            return False
        self.run.record("ok", process, "send", [["send", key, [None, v]] for v in values])
        return True

    def _transactional_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            made = self._client(process, functools.partial(_transaction_writer, self.scope, process))
            if made is None:
                continue
            _manager, writer = made
            for _ in range(self._life()):
                if not self._pace() or not self._transaction(process, writer):
                    break

    def _transaction(self, process: int, writer) -> bool:
        """One txn operation; False when the writer is to be replaced."""
        keys = self.rng.sample(range(ROUTING_KEYS), self.rng.randint(1, 2))
        plan = [(f"k{k}", v) for k in keys for v in self.run.values(self.rng.randint(1, 2))]
        self.run.record("invoke", process, "txn", [["send", self.key_of(r), v] for r, v in plan])
        value = [["send", self.key_of(r), [None, v]] for r, v in plan]
        try:
            transaction = writer.begin_txn()
        except Exception as exc:  # no transaction: nothing was written
            self.run.record("fail", process, "txn", value, error=f"begin: {exc}")
            return False
        try:
            for routing, event in plan:
                transaction.write_event_bytes(f"{routing}:{event}".encode(), routing)
        except Exception as exc:
            return self._abort(process, transaction, value, f"write: {exc}")
        if self.rng.random() < ABORT_CHANCE:
            return self._abort(process, transaction, value, None)
        commit_time = self.run.clock()
        try:
            transaction.commit()
        except Exception as exc:  # the commit may have been applied: indeterminate, its request time known
            self.run.record("info", process, "txn", value, commit_time=commit_time, error=f"commit: {exc}")
            return False
        self.run.record("ok", process, "txn", value, commit_time=commit_time)
        return True

    def _abort(self, process: int, transaction, value: list, error: str | None) -> bool:
        try:
            transaction.abort()
        except Exception as exc:  # no commit was requested either way; whether the abort took is unknown
            self.run.record("info", process, "txn", value, error=f"{error or 'abort'}; abort: {exc}")
            return False
        self.run.record("fail", process, "txn", value, abort=True, **({"error": error} if error else {}))
        return error is None

    def _reader_loop(self) -> None:
        while not self.run.stop.is_set():
            process = self.run.process()
            reader = self._reader(process)
            if reader is None:
                continue
            try:
                for _ in range(self._life()):
                    if not self._pace():
                        break
                    if reader.poll() is None:
                        self.run.stop.wait(0.5)  # the target is away: a new reader after a moment
                        break
            finally:
                reader.close()

    def _reader(self, process: int) -> Reader | None:
        made = self._client(process, lambda manager: manager.create_reader_group(
            f"wirecheck-safety-{process}", self.scope, STREAM).create_reader(f"reader-{process}"))
        if made is None:
            return None
        keys = [self.key_of(f"k{k}") for k in range(ROUTING_KEYS)]
        self.run.record("invoke", process, "assign", keys)
        self.run.record("ok", process, "assign", keys)
        return Reader(self, process, *made)

    # ------------------------------------------------------------------------------------------ final read

    def final_read(self, owed: set, timeout: float = FINAL_READ_S) -> bool:
        """Read the stream from the start until every ``owed`` value is seen; True if they all were."""
        end = time.monotonic() + timeout
        while owed and time.monotonic() < end:
            reader = self._reader(self.run.process())
            if reader is None:
                continue
            try:
                while owed and time.monotonic() < end:
                    reads = reader.poll()
                    if reads is None:
                        break
                    for pairs in reads.values():
                        owed.difference_update(value for _, value in pairs)
                if not owed:
                    for _ in range(3):  # read on: a value read twice shows as a duplicate only if its copy is read
                        reader.poll()
            finally:
                reader.close()
        return not owed


class Reader:
    """One reader of a reader group of its own, polled with a bounded wait: the slice it asked for stays pending
    across polls (a slice abandoned mid-wait would stay acquired and its segment unread)."""

    def __init__(self, workload: PravegaWorkload, process: int, manager, reader):
        self.workload, self.process = workload, process
        self.manager, self.reader = manager, reader  # the manager owns the client's runtime
        self.loop = asyncio.new_event_loop()
        self.pending: asyncio.Task | None = None

    def poll(self) -> dict[str, list] | None:
        """One poll operation: the events of a slice that came within SLICE_WAIT_S; None: replace the reader."""
        run, process = self.workload.run, self.process
        run.record("invoke", process, "poll", [["poll"]])
        reads: dict[str, list] = {}
        try:
            if self.pending is None:
                self.pending = self.loop.create_task(self._slice())
            self.loop.run_until_complete(asyncio.wait({self.pending}, timeout=SLICE_WAIT_S))
            if self.pending.done():
                segment_slice, self.pending = self.pending.result(), None
                for event in segment_slice:
                    routing, value = _decode(bytes(event.data()))
                    reads.setdefault(self.workload.key_of(routing), []).append([event.offset(), value])
                self.reader.release_segment(segment_slice)
        except BaseException as exc:  # nothing of a failed poll is claimed
            _client_error(exc)
            run.record("info", process, "poll", [["poll"]], error=f"{type(exc).__name__}: {exc}")
            return None
        run.record("ok", process, "poll", [["poll", reads]])
        return reads

    async def _slice(self):
        return await self.reader.get_segment_slice_async()  # the binding asks for the running loop

    def close(self) -> None:
        try:
            self.reader.reader_offline()
        except BaseException as exc:  # the reader's segments go back to its group, which nobody else reads
            _client_error(exc)
            self.workload.log.info("process %s: reader_offline: %s", self.process, exc)
        if self.pending is not None:
            self.pending.cancel()
        self.loop.close()


def _client_error(exc: BaseException) -> None:
    """Re-raise ``exc`` unless it is the client's: an Exception, or one of the binding's Rust panics (pyo3's
    PanicException, a BaseException; e.g. on segment bytes that are not events, the server's doing), which end the
    operation and the client, not the process."""
    if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
        raise exc


def _transaction_writer(scope: str, writer_id: int, manager):
    return manager.create_transaction_writer(scope, STREAM, writer_id)


def _decode(data: bytes) -> tuple[str, int | str]:
    """(routing key, value) of an event this workload wrote; anything else keeps its text (no writer has it)."""
    routing, _, raw = data.decode(errors="replace").partition(":")
    try:
        return routing, int(raw)
    except ValueError:
        return routing, data.decode(errors="replace")


def _create(bootstrap: str, topic: str) -> int:
    """``python -m wirecheck.targets.safety.pravega BOOTSTRAP TOPIC``: the stream created (create_topic's child)."""
    run = Run(Path(os.devnull), time.monotonic())  # no history: setup is not an operation
    try:
        PravegaWorkload(bootstrap, topic, run, random.Random(0), logging.getLogger("setup"))._create_stream()
    except HarnessError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


# what the shared runner asks of a protocol's workload module (ProtocolSpec.safety)
Workload = PravegaWorkload
address_rewriter = PravegaAddressRewriter

if __name__ == "__main__":
    code = _create(sys.argv[1], sys.argv[2])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the binding's runtime threads abort a finalizing interpreter (suites/pravega/clients)
