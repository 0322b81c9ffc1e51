"""The real Pravega client against the target: one case per scenario (``pravega.clients.pravega-python.<scenario>``).

The client (``pravega`` on PyPI, the Python binding of the Rust client) runs in its own process
(suites/pravega/clients/pravega_driver.py), bounded by a time limit: it holds the GIL while it waits on the server,
so only a process can be stopped. It starts at the controller (gRPC), which names the segment store for each
segment: the launched reference broker's controller, or ``--target-option pravega.controller=HOST:PORT`` (a target
without one reports UNIMPLEMENTED: the client cannot start). What it wrote and read comes back as JSON and is judged
here. A client that hangs or fails is FAILED with the last lines of its log and what it waited for. Scopes, streams
and reader groups are uniquely named; the client creates them itself, through the controller, as its users do.
The client's traffic goes straight to the target, so the transcript holds the job and the client's result.
"""

from __future__ import annotations

import base64
import importlib.util
import sys
from collections import Counter
from importlib import metadata


from wirecheck.protocols.pravega import SPEC
from wirecheck.protocols.verdicts import Divergence, HarnessError, Unimplemented
from wirecheck.suites.pravega.client import token_of
from wirecheck.suites.pravega.clients import java_driver
from wirecheck.targets.clients import ClientRun, clients_case, not_installed
from wirecheck.targets.clients import drive as drive_client
from wirecheck.targets.clients import finished as client_finished
from wirecheck.targets.probe import parse_address

C = SPEC.catalogue
TIME_LIMIT = 60.0  # per client run; a reader gives up after 20 s and says what it waited for
INSTALL = "pip install pravega==0.3.8"  # the version of the interop extra (pyproject.toml)
CONTROLLER_LISTENER = "pravega-controller"  # the reference broker's controller, by its ready-file name


def controller(target) -> str:
    """The controller's address as the client takes it: ``--target-option pravega.controller=HOST:PORT``, else
    the launched reference broker's controller."""
    given = target.options.get("controller")
    if given:
        try:
            host, port = parse_address(given)
        except (ValueError, OSError) as exc:
            raise HarnessError(f"--target-option pravega.controller={given}: {exc}") from None
    elif CONTROLLER_LISTENER in target.info.side_listeners:
        host, port = target.info.side_listeners[CONTROLLER_LISTENER]
    else:
        raise Unimplemented("the client starts at the controller: give its address with --target-option "
                            "pravega.controller=HOST:PORT")
    return f"tcp://{host}:{port}"


def ready(target, client: str) -> str:
    """The client is here, the controller's address known (that address), and the segment store takes requests
    without a delegation token: the client is run without credentials, and the reference broker's controller hands
    out no tokens, so a store that requires one (``pravega.token``) would refuse it (UNIMPLEMENTED)."""
    if client == "pravega-java":
        if java_driver.missing():
            not_installed("the Pravega Java client's driver (and java)", java_driver.INSTALL)
        target.fact("client_version", java_driver.version())
    else:
        if importlib.util.find_spec("pravega_client") is None:
            not_installed("pravega", INSTALL)
        target.fact("client_version", metadata.version("pravega"))
    if token_of(target):
        raise Unimplemented("the client scenarios run without credentials, and the segment store requires a "
                            "delegation token (pravega.token)")
    return controller(target)


def drive(target, client: str, job: dict) -> ClientRun:
    """Run ``client`` on ``job`` (scope and stream uniquely named); the run is noted in the transcript."""
    job = {"controller": ready(target, client), "scope": target.unique("scope"), "stream": "s", **job}
    argv = java_driver.argv() if client == "pravega-java" else \
        [sys.executable, "-m", "wirecheck.suites.pravega.clients.pravega_driver"]
    return drive_client(target, client, argv, job, TIME_LIMIT)


def finished(clause_id: str, run: ClientRun, expected: str) -> dict:
    return client_finished(C[clause_id], run, expected)


def check(clause_id: str, what: str, expected, got) -> None:
    if got != expected:
        raise Divergence(C[clause_id], f"{what}: {expected!r}"[:2000], repr(got)[:2000])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _shown(items: list) -> str:
    return repr(items[:3])[:600] + (f" and {len(items) - 3} more" if len(items) > 3 else "")


# -- the cases -------------------------------------------------------------------------------------------------


@clients_case(SPEC, "write-read")
def test_write_read(target, client):
    clause_id = f"pravega.clients.{client}.write-read"
    keyless = [f"keyless-{i}".encode() + bytes([0, 255, i]) for i in range(20)]
    keyed = {key: [f"{key}-{i}-é".encode() + bytes(range(i * 8, i * 8 + 8)) for i in range(15)]
             for key in ("alpha", "beta", "gamma")}
    text = "text event ✓"
    job = {"action": "write-read", "group": target.unique("group"), "keyless": [_b64(e) for e in keyless],
           "keyed": {key: [_b64(e) for e in events] for key, events in keyed.items()}, "text": text}
    expected = keyless + [e for events in keyed.values() for e in events] + [text.encode()]
    result = finished(clause_id, drive(target, client, job), f"{len(expected)} events written and read back")
    check(clause_id, "the scope and the stream created", [True, True], result["created"])
    read = [base64.b64decode(e) for e in result["read"]]
    if Counter(read) != Counter(expected):
        missing, extra = list((Counter(expected) - Counter(read)).elements()), list((Counter(read) -
                                                                                    Counter(expected)).elements())
        raise Divergence(C[clause_id], f"{len(expected)} events read back once each, byte-identical",
                         f"{len(read)} read; missing {_shown(missing)}, unexpected {_shown(extra)}")
    for key, events in keyed.items():  # one routing key, one segment: its events keep their order
        check(clause_id, f"the events of routing key {key!r} in the order written", events,
              [e for e in read if e in set(events)])


@clients_case(SPEC, "byte-stream")
def test_byte_stream(target, client):
    clause_id = f"pravega.clients.{client}.byte-stream"
    data = bytes(range(256)) * 40 + b"\x00tail"
    job = {"action": "byte-stream", "data": _b64(data), "chunk": 1000, "from": 100, "length": 50}
    result = finished(clause_id, drive(target, client, job), f"{len(data)} bytes written and read back")
    check(clause_id, "the scope and the stream created", [True, True], result["created"])
    check(clause_id, "the tail offset after the writes", len(data), result["tail"])
    read = base64.b64decode(result["read"])
    if read != data:
        differs = next((i for i, (a, b) in enumerate(zip(read, data)) if a != b), min(len(read), len(data)))
        raise Divergence(C[clause_id], f"the {len(data)} bytes written, read back from offset 0",
                         f"{len(read)} bytes, differing from offset {differs}: {read[differs:differs + 16].hex()}")
    check(clause_id, "50 bytes from offset 100", data[100:150].hex(), base64.b64decode(result["part"]).hex())


@clients_case(SPEC, "stream-lifecycle")
def test_stream_lifecycle(target, client):
    clause_id = f"pravega.clients.{client}.stream-lifecycle"
    result = finished(clause_id, drive(target, client, {"action": "stream-lifecycle"}),
                      "a scope and a stream created, written, sealed and deleted")
    check(clause_id, "the scope created, then already there", [True, False], result["scope_created"])
    check(clause_id, "the stream created, then already there", [True, False], result["stream_created"])
    check(clause_id, "an event written and flushed", None, result["written"])
    check(clause_id, "the stream sealed", True, result["sealed"])
    if result["written_after_seal"] is None:
        raise Divergence(C[clause_id], "a write to the sealed stream refused (the client reports an error)",
                         "the event was written and flushed")
    check(clause_id, "the stream and the scope deleted", [True, True], result["deleted"])


def controller_lacks(run: ClientRun, what: str) -> None:
    """A controller that does not serve ``what`` answers its calls with gRPC's UNIMPLEMENTED (the reference broker's
    leaves transactions and key-value tables to it: broker/pravega/controller/service.py): the scenario
    cannot run there (UNIMPLEMENTED), which is the controller's business, not the segment store's."""
    error = (run.output or {}).get("error") or ""
    if "UNIMPLEMENTED" in error:
        raise Unimplemented(f"the controller does not serve {what}: {error[:300]}")


@clients_case(SPEC, "transaction")
def test_transaction(target, client):
    clause_id = f"pravega.clients.{client}.transaction"
    committed = [f"committed-{i}".encode() + bytes([0, 255, i]) for i in range(10)]
    aborted = [f"aborted-{i}".encode() for i in range(5)]
    job = {"action": "transaction", "group": target.unique("group"), "committed": [_b64(e) for e in committed],
           "aborted": [_b64(e) for e in aborted]}
    run = drive(target, client, job)
    controller_lacks(run, "transactions")
    result = finished(clause_id, run, "one transaction committed and one aborted, the committed events read back")
    check(clause_id, "the scope and the stream created", [True, True], result["created"])
    check(clause_id, "two transactions with distinct ids", True, result["distinct_ids"])
    check(clause_id, "the transactions' final states", ["COMMITTED", "ABORTED"], result["states"])
    # one routing key: the committed events in the order written, and none of the aborted transaction's
    check(clause_id, "the committed events, in order, and nothing else", [e.hex() for e in committed],
          [base64.b64decode(e).hex() for e in result["read"]])



@clients_case(SPEC, "key-value-table")
def test_key_value_table(target, client):
    clause_id = f"pravega.clients.{client}.key-value-table"
    key_length = 8  # a key-value table's keys all have its primary key length
    entries = {f"key-{i:04d}".encode(): f"value {i} ✓".encode() + bytes([0, 255, i]) for i in range(6)}
    first, removed = next(iter(entries)), list(entries)[3]
    updated = b"updated \x00 value"
    job = {"action": "key-value-table", "table": target.unique("table"), "key_length": key_length,
           "entries": {_b64(key): _b64(value) for key, value in entries.items()}, "updated": _b64(updated),
           "remove": _b64(removed)}
    run = drive(target, client, job)
    controller_lacks(run, "key-value tables")
    result = finished(clause_id, run, "a key-value table created, written, read back and deleted")
    check(clause_id, "the scope and the key-value table created", [True, True], result["created"])
    if result["insert_existing"] is None:
        raise Divergence(C[clause_id], "a second insert of an existing key refused (the client reports an error)",
                         "the insert succeeded")
    if result["stale_update"] is None:
        raise Divergence(C[clause_id], "an update at the key's old version refused (the client reports an error)",
                         "the update succeeded")
    expected = {_b64(key): None if key == removed else _b64(updated if key == first else value)
                for key, value in entries.items()}
    check(clause_id, "every key read back: the first updated, the removed one missing, the others as inserted",
          expected, result["read"])
    check(clause_id, "the key-value table and the scope deleted", [True, True], result["deleted"])
