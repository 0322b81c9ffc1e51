"""The Barco (PolarStreams) safety workload: httpx, as the suite's Barco client scenarios use it
(suites/barco/clients/httpx_driver.py), writes unique values and reads them back, recording every operation
(reports/safety/history.py).

- every client first asks discovery (GET /v1/brokers on the primary port) for the producer and consumer ports; the
  proxy rewrites that answer to name ports of its own (barco_address.py);
- producers: ``send`` operations, one HTTP/1.1 POST /v1/topic/T/messages of 1-3 values (application/x-ndjson, one
  record per line: one chunk) with one of PARTITION_KEYS, so a key always lands in the same reader. The answer is
  200 OK and nothing more: the producer is never told an offset (UNJUDGED);
- consumers: ``poll`` operations, POST /v1/consumer/poll (binary answer) over HTTP/2 with prior knowledge (even
  slots) or HTTP/1.1 (odd slots). Each consumer incarnation registers under a new id in a new group starting from
  the earliest offset (an ``assign``), so it is its group's only member and reads every reader from 0. A poll
  commits what the consumer's previous poll was served (notes §5.1, implicit commit), so a poll whose answer was
  lost would make the next one skip a chunk by design: after any poll without an answer the incarnation ends
  (goodbye without commit) and a new one starts from 0. A broker restart forgets registrations: the next poll is
  refused (409), and a new incarnation starts;
- a record's offset is its chunk's start offset (the poll item's) plus its place in the chunk; its key is the poll
  item's reader (topic/token/range index/generation);
- the final read: a new consumer reads every reader from the start until every acknowledged value has been seen and
  a poll comes back empty, or FINAL_READ_S has passed, or it has been at the end of every reader for FINAL_SETTLE_S
  (the producers have stopped and a stored chunk is readable at once: what is still owed then is not there).

Decisions: a producer's 4xx answer is a ``fail`` (the request was refused before anything was stored, notes §3); a
5xx answer or none is ``info`` (the server may have stored the chunk before failing). A send's key names the topic
and the partition key it was sent with (the reader a key maps to is the server's business, never told to the
producer); polls name readers. No offsets on sends, so the kinds that place a write by its offset are UNJUDGED.
"""

from __future__ import annotations

import logging
import random
import time
import uuid

from wirecheck.protocols.barco import wire
from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.safety.barco_address import BarcoAddressRewriter
from wirecheck.targets.safety.run import Run
from wirecheck.targets.safety.workload import Backoff, ClientWorkload, FinalRead

TOPIC_PREFIX = "wirecheck-safety-"  # + a run id: a target reused across runs never mixes their values
PARTITION_KEYS = ("k0", "k1", "k2", "k3")
ROLES = {"send": 3, "poll": 2}
_NO_OFFSET = "the HTTP producer answers 200 OK without an offset"
UNJUDGED = {
    "lost-write": _NO_OFFSET + ": an unread value cannot be placed below a read one, so a lost one shows as unseen",
    "nonmonotonic-send": _NO_OFFSET,
    "int-nonmonotonic-send": _NO_OFFSET,
    "nonmonotonic-send-realtime": _NO_OFFSET,
    "aborted-read": "Barco has no transactions",
    "precommitted-read": "Barco has no transactions",
}
FINAL_READ_S = 90.0
REQUEST_TIMEOUT_S = 5.0  # a fault makes an operation indeterminate, not the run stall


class Unanswered(Exception):
    """No usable answer from discovery."""


def _value_of(body: bytes) -> int | str:
    try:
        return int(body)
    except ValueError:
        return body.decode(errors="replace")  # not a value we wrote: the checker finds no writer


class BarcoWorkload(ClientWorkload):
    def __init__(self, bootstrap: str, topic: str, run: Run, rng: random.Random, log: logging.Logger, slot: int = 0):
        super().__init__(bootstrap, topic, run, rng, log, slot)
        self.host = bootstrap.rpartition(":")[0]

    # ------------------------------------------------------------------------------------------ setup

    def discover(self) -> dict:
        """The brokers document (ports as the proxy rewrote them)."""
        import httpx

        try:
            with httpx.Client(base_url=f"http://{self.bootstrap}", timeout=REQUEST_TIMEOUT_S) as client:
                reply = client.get("/v1/brokers")
        except httpx.HTTPError as exc:
            raise Unanswered(f"discovery: {type(exc).__name__}: {exc}") from None
        if reply.status_code != 200:
            raise Unanswered(f"discovery answered {reply.status_code}")
        try:
            return wire.parse_brokers(reply.content)
        except wire.WireError as exc:
            raise Unanswered(f"discovery: {exc}") from None

    def create_topic(self, timeout: float = 60.0) -> None:
        """Barco creates a topic on its first produce: check that discovery answers and names both ports."""
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            try:
                self.discover()
                return
            except Unanswered as exc:
                last = str(exc)
            time.sleep(1)
        raise HarnessError(f"Barco discovery on {self.bootstrap} did not answer in {timeout:.0f} s: {last}")

    def _url(self, port_key: str) -> str | None:
        """The base URL of an endpoint from discovery, retried until the run stops."""
        while not self.run.stop.is_set():
            try:
                return f"http://{self.host}:{self.discover()[port_key]}"
            except Unanswered as exc:
                self.log.info("%s", exc)
                self.run.stop.wait(0.2)
        return None

    # ------------------------------------------------------------------------------------------ clients

    def loops(self):
        return {"send": self._producer_loop, "poll": self._consumer_loop}

    def _producer_loop(self) -> None:
        import httpx

        backoff = Backoff(self.run)
        while not self.run.stop.is_set():
            backoff.wait()
            url = self._url("producerPort")
            if url is None:
                return
            process = self.run.process()
            with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as producer:  # HTTP/1.1: its only one
                self._live(backoff, self._send, process, producer)

    def _send(self, process: int, producer) -> bool:
        """One send operation; False when the client must be replaced."""
        import httpx

        partition_key = self.rng.choice(PARTITION_KEYS)
        key, values = f"{self.topic}@{partition_key}", self.run.values(self.rng.randint(1, 3))
        self.run.record("invoke", process, "send", [["send", key, v] for v in values])
        unplaced = [["send", key, [None, v]] for v in values]
        try:
            reply = producer.post(f"/v1/topic/{self.topic}/messages", params={"partitionKey": partition_key},
                                  headers={"content-type": "application/x-ndjson"},
                                  content=b"".join(b"%d\n" % v for v in values))
        except httpx.HTTPError as exc:
            self.run.record("info", process, "send", unplaced, error=f"{type(exc).__name__}: {exc}")
            return False
        if reply.status_code == 200:
            self.run.record("ok", process, "send", unplaced)
            return True
        error = f"HTTP {reply.status_code}: {reply.text[:200]}"
        self.run.record("fail" if 400 <= reply.status_code < 500 else "info", process, "send", unplaced, error=error)
        return reply.status_code < 500

    def _consumer_loop(self) -> None:
        backoff = Backoff(self.run)
        while not self.run.stop.is_set():
            backoff.wait()
            consumer = self._registered()
            if consumer is None:
                continue
            client, process, consumer_id = consumer
            try:
                self._live(backoff, self._poll, process, client, consumer_id)
            finally:
                self._leave(client, consumer_id)

    def _registered(self):
        """A new consumer in a group of its own from the earliest offset: (client, process, id), or None."""
        import httpx

        url = self._url("consumerPort")
        if url is None:
            return None
        http2 = self.slot % 2 == 0
        client = httpx.Client(base_url=url, http1=not http2, http2=http2, timeout=REQUEST_TIMEOUT_S)
        process = self.run.process()
        consumer_id = f"wirecheck-safety-{process}-{uuid.uuid4().hex[:8]}"
        self.run.record("invoke", process, "assign", [self.topic])
        try:
            reply = client.put("/v1/consumer/register", params={
                "consumerId": consumer_id, "group": consumer_id, "topic": self.topic,
                "onNewGroup": "startFromEarliest"})
        except httpx.HTTPError as exc:
            self.run.record("info", process, "assign", [self.topic], error=f"{type(exc).__name__}: {exc}")
            client.close()
            self.run.stop.wait(0.2)
            return None
        if reply.status_code != 200:
            self.run.record("fail", process, "assign", [self.topic], error=f"HTTP {reply.status_code}")
            client.close()
            self.run.stop.wait(0.2)
            return None
        self.run.record("ok", process, "assign", [self.topic])
        return client, process, consumer_id

    def _leave(self, client, consumer_id: str) -> None:
        """Goodbye without a commit (the group is never used again); whatever happens, the client is closed."""
        import httpx

        try:
            client.post("/v1/consumer/goodbye", params={"consumerId": consumer_id, "commit": "false"})
        except httpx.HTTPError:
            pass
        client.close()

    def _poll(self, process: int, client, consumer_id: str) -> dict[str, list] | None:
        """One poll operation; None when the consumer must be replaced (its answer was lost, refused or not
        understood: the next poll would commit what this one was served)."""
        import httpx

        self.run.record("invoke", process, "poll", [["poll"]])
        try:
            reply = client.post("/v1/consumer/poll", params={"consumerId": consumer_id})
        except httpx.HTTPError as exc:
            self.run.record("info", process, "poll", [["poll"]], error=f"{type(exc).__name__}: {exc}")
            return None
        if reply.status_code == 204:
            self.run.record("ok", process, "poll", [["poll", {}]])
            return {}
        if reply.status_code != 200:  # 409: not registered (a restart forgot it); certainly nothing read
            self.run.record("fail" if reply.status_code == 409 else "info", process, "poll", [["poll"]],
                            error=f"HTTP {reply.status_code}: {reply.text[:200]}")
            return None
        reads: dict[str, list] = {}
        try:
            for item in wire.parse_poll_response(reply.content):
                key = f"{item.topic.decode(errors='replace')}/{item.token}/{item.range_index}/{item.version}"
                reads.setdefault(key, []).extend(
                    [item.offset + i, _value_of(body)] for i, (_timestamp, body) in enumerate(item.records()))
        except (wire.WireError, ValueError) as exc:  # an answer the client cannot read: nothing it can use
            self.run.record("info", process, "poll", [["poll"]], error=f"unreadable poll answer: {exc}")
            return None
        self.run.record("ok", process, "poll", [["poll", reads]])
        return reads

    # ------------------------------------------------------------------------------------------ final read

    def final_read(self, owed: set, timeout: float = FINAL_READ_S) -> bool:
        """Read every reader from the start until every ``owed`` value is seen and a poll comes back empty (a
        value read twice shows as a duplicate only if its copy is read too); True if all were seen."""
        read = FinalRead(owed, timeout)
        while read.going():
            consumer = self._registered()
            if consumer is None:
                continue
            client, process, consumer_id = consumer
            try:
                while read.going():
                    reads = self._poll(process, client, consumer_id)
                    if reads is None:
                        break
                    read.saw(reads)
            finally:
                self._leave(client, consumer_id)
        return not owed


# what the shared runner asks of a protocol's workload module (ProtocolSpec.safety)
Workload = BarcoWorkload
address_rewriter = BarcoAddressRewriter
