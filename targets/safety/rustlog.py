"""The RustLog safety workload: clients write unique values to the partitions of one topic and read them back,
recording every operation (reports/safety/history.py).

No third-party RustLog client exists (the server's repository ships none, and no package registry has one), so
the clients speak the suite's own JSON framing (protocols/rustlog/layers.py: a u32 length, then a JSON object with
its ``type``) over a plain socket, one request at a time per connection, as a client library would:

- producers: ``send`` operations, a Produce of 1-3 values to one partition; the ProduceResponse's base_offset
  gives each value its offset (the batch is appended whole, its offsets consecutive);
- consumers: ``poll`` operations, a Fetch of every partition from the consumer's own position (RustLog keeps no
  consumer position: Fetch names the offset), starting at 0;
- a client whose request failed (a timeout, a lost connection, an answer that is no answer) is replaced: a new
  connection and a new process in the history, a consumer starting at 0 again; each role runs in a child process
  of its own (client.py), which the supervisor kills (-9) now and then;
- the final read: a new consumer reads every partition from the start until every acknowledged value has been
  seen and every partition's end is reached, or FINAL_READ_S has passed, or it has been at the end of every
  partition for FINAL_SETTLE_S (the producers have stopped and an appended batch is readable at once: what is
  still owed then is not there).

Decision: an Error answer to a Produce is a ``fail`` (certainly not appended): the spec appends a batch whole or
refuses it (seed §Produce, decision D4; broker/rustlog/produce.py). RustLog has no transactions, so aborted and
precommitted reads cannot occur (UNJUDGED).
"""

from __future__ import annotations

import base64
import binascii
import socket
import struct
import time

from wirecheck.protocols.rustlog.layers import FrameDecodeError, decode_frame, encode_frame
from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.safety.workload import Backoff, ClientWorkload, FinalRead

TOPIC_PREFIX = "wirecheck-safety-"  # + a run id: a target reused across runs never mixes their values
PARTITIONS = 4
ROLES = {"send": 3, "poll": 2}
UNJUDGED = {"aborted-read": "RustLog has no transactions", "precommitted-read": "RustLog has no transactions"}
FINAL_READ_S = 60.0
REQUEST_TIMEOUT_S = 5.0  # a fault makes an operation indeterminate, not the run stall
FETCH_MAX_BYTES = 65536
MAX_ANSWER = 10_485_760  # MAX_FRAME_SIZE (seed §Protocol constants)


class Unanswered(Exception):
    """No usable answer: the connection failed, timed out, or carried something that is not a RustLog frame."""


class Connection:
    """One connection to the target: a request, then its answer (RustLog answers in order)."""

    def __init__(self, bootstrap: str):
        host, _, port = bootstrap.rpartition(":")
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=REQUEST_TIMEOUT_S)
        except OSError as exc:
            raise Unanswered(f"connect: {exc}") from None

    def ask(self, request: dict) -> dict:
        try:
            self.sock.sendall(encode_frame(request))
            head = self._exactly(4)
            (length,) = struct.unpack(">I", head)
            if not 0 < length <= MAX_ANSWER:
                raise Unanswered(f"answer length {length}")
            return decode_frame(head + self._exactly(length))
        except (OSError, FrameDecodeError) as exc:
            raise Unanswered(f"{request['type']}: {type(exc).__name__}: {exc}") from None

    def _exactly(self, count: int) -> bytes:
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise Unanswered("the connection closed")
            data += chunk
        return bytes(data)

    def close(self) -> None:
        self.sock.close()


def _value_of(payload: str) -> int | str:
    try:
        raw = base64.b64decode(payload, validate=True)
        return int(raw)
    except (binascii.Error, ValueError):
        return payload  # not a value we wrote: the checker finds no writer


class RustLogWorkload(ClientWorkload):

    def key_of(self, partition: int) -> str:
        return f"{self.topic}/{partition}"

    # ------------------------------------------------------------------------------------------ setup

    def create_topic(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            try:
                connection = Connection(self.bootstrap)
                try:
                    answer = connection.ask({"type": "CreateTopic", "topic": self.topic,
                                             "partition_count": PARTITIONS})
                    if answer.get("type") == "CreateTopicResponse" and answer.get("success"):
                        return
                    described = connection.ask({"type": "DescribeTopic", "topic": self.topic})
                finally:
                    connection.close()
                if described.get("type") == "DescribeTopicResponse":  # it existed already
                    count = len(described.get("partitions") or [])
                    if count != PARTITIONS:
                        raise HarnessError(f"topic {self.topic} exists with {count} partitions, not {PARTITIONS}: "
                                           f"delete it or start the target empty")
                    return
                last = f"CreateTopic answered {answer}"
            except Unanswered as exc:
                last = str(exc)
            time.sleep(1)
        raise HarnessError(f"could not create topic {self.topic} on {self.bootstrap} in {timeout:.0f} s: {last}")

    # ------------------------------------------------------------------------------------------ clients

    def loops(self):
        return {"send": self._producer_loop, "poll": self._consumer_loop}

    def _connect(self) -> Connection | None:
        """A connection, retried until the run stops (a restarting target refuses for a while)."""
        while not self.run.stop.is_set():
            try:
                return Connection(self.bootstrap)
            except Unanswered as exc:
                self.log.info("connect: %s", exc)
                self.run.stop.wait(0.2)
        return None

    def _producer_loop(self) -> None:
        backoff = Backoff(self.run)
        while not self.run.stop.is_set():
            backoff.wait()
            connection = self._connect()
            if connection is None:
                return
            process = self.run.process()
            self._live(backoff, self._send, process, connection)
            connection.close()

    def _send(self, process: int, connection: Connection) -> bool:
        """One send operation; False when the client must be replaced."""
        partition = self.rng.randrange(PARTITIONS)
        key, values = self.key_of(partition), self.run.values(self.rng.randint(1, 3))
        self.run.record("invoke", process, "send", [["send", key, v] for v in values])
        records = [base64.b64encode(str(v).encode()).decode() for v in values]
        try:
            answer = connection.ask({"type": "Produce", "topic": self.topic, "partition": partition,
                                     "records": records})
        except Unanswered as exc:
            self.run.record("info", process, "send", [["send", key, [None, v]] for v in values], error=str(exc))
            return False
        base, count = answer.get("base_offset"), answer.get("record_count")
        if answer.get("type") == "ProduceResponse" and isinstance(base, int) and count == len(values):
            self.run.record("ok", process, "send", [["send", key, [base + i, v]] for i, v in enumerate(values)])
            return True
        if answer.get("type") == "Error":
            self.run.record("fail", process, "send", [["send", key, [None, v]] for v in values],
                            error=f"Error {answer.get('code')}: {answer.get('message')}")
            return True
        self.run.record("info", process, "send", [["send", key, [None, v]] for v in values],
                        error=f"not a ProduceResponse for {len(values)} records: {answer}")
        return False

    def _consumer_loop(self) -> None:
        backoff = Backoff(self.run)
        while not self.run.stop.is_set():
            backoff.wait()
            connection = self._connect()
            if connection is None:
                return
            process = self.run.process()
            positions = self._assigned(process)
            self._live(backoff, self._poll, process, connection, positions)
            connection.close()

    def _assigned(self, process: int) -> dict[int, int]:
        """A consumer's start: every partition from offset 0 (an ``assign``: its order checks restart here)."""
        keys = [self.key_of(p) for p in range(PARTITIONS)]
        self.run.record("invoke", process, "assign", keys)
        self.run.record("ok", process, "assign", keys)
        return dict.fromkeys(range(PARTITIONS), 0)

    def _poll(self, process: int, connection: Connection, positions: dict[int, int]) -> dict[str, list] | None:
        """One poll operation: a Fetch of every partition from the consumer's positions, which it moves on. None
        (recorded ``info``) when a Fetch had no usable answer: the client must be replaced, since what it read in
        this operation is not recorded and its positions are past it."""
        self.run.record("invoke", process, "poll", [["poll"]])
        reads: dict[str, list] = {}
        for partition in range(PARTITIONS):
            try:
                answer = connection.ask({"type": "Fetch", "group_id": "", "topic": self.topic,
                                         "partition": partition, "offset": positions[partition],
                                         "max_bytes": FETCH_MAX_BYTES})
                pairs = [[record["offset"], _value_of(record["payload"])] for record in answer["records"]]
                following = answer["next_offset"]
            except (Unanswered, KeyError, TypeError) as exc:
                self.run.record("info", process, "poll", [["poll"]], error=f"partition {partition}: {exc!r}"[:500])
                return None
            if pairs:
                reads[self.key_of(partition)] = pairs
            if isinstance(following, int):
                positions[partition] = max(positions[partition], following)
        self.run.record("ok", process, "poll", [["poll", reads]])
        return reads

    # ------------------------------------------------------------------------------------------ final read

    def final_read(self, owed: set, timeout: float = FINAL_READ_S) -> bool:
        """Read every partition from the start until every ``owed`` value is seen and every partition's end is
        reached (a value read twice shows as a duplicate only if its copy is read too); True if all were seen."""
        read = FinalRead(owed, timeout)
        while read.going():
            connection = self._connect()
            if connection is None:
                break
            process = self.run.process()
            positions = self._assigned(process)
            while read.going():
                reads = self._poll(process, connection, positions)
                if reads is None:
                    break
                read.saw(reads)
            connection.close()
        return not owed


def address_rewriter(target: tuple[str, int], proxy: tuple[str, int]) -> None:
    """RustLog's answers name no address: nothing to rewrite."""
    return None


# what the shared runner asks of a protocol's workload module (ProtocolSpec.safety)
Workload = RustLogWorkload
