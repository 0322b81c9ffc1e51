"""The Streaming Controller: version negotiation, watches (all, changes, epochs), topic admin, hostile input."""

from __future__ import annotations

import struct

import pytest

from wirecheck.protocols.fluvio import HELLO_BODY, messages, sc
from wirecheck.protocols.fluvio.clauses import CATALOGUE as C
from wirecheck.protocols.verdicts import Divergence
from wirecheck.suites.fluvio.sc_client import ScClient
from wirecheck.targets.transport.outcome import Outcome

case = pytest.mark.case

ERROR_OK = 0


def _codes(status: dict) -> int:
    return status["error_code"].code


@case("fluvio.sc.api-versions.platform")
def test_platform_version_is_new_enough(target):
    answer = ScClient(target).sc_api_versions()
    text = answer["platform_version"]
    try:
        version = tuple(int(part) for part in text.split("-")[0].split(".")[:3])
    except ValueError:
        raise Divergence(C["fluvio.sc.api-versions.platform"], "a semver platform_version", repr(text)) from None
    if len(version) != 3 or version < sc.MINIMUM_PLATFORM_VERSION:
        raise Divergence(C["fluvio.sc.api-versions.platform"], "platform_version >= 0.9.0", repr(text))


@case("fluvio.sc.api-versions.watch")
def test_watch_is_advertised_within_15_to_19(target):
    keys = {k["api_key"]: (k["min_version"], k["max_version"]) for k in ScClient(target).sc_api_versions()["api_keys"]}
    low, high = keys.get(sc.WATCH, (None, None))
    if low is None or high < sc.WATCH_MIN or low > sc.COMMON_VERSION:
        raise Divergence(C["fluvio.sc.api-versions.watch"], "Watch (1004) overlapping 15..19",
                         f"Watch {low}..{high}" if low is not None else "Watch not listed")


@case("fluvio.sc.watch.first-all")
def test_first_watch_answer_carries_all(target):
    client = ScClient(target)
    name = target.unique("watchall")
    client.create_topic(name, "fluvio.sc.watch.first-all")
    for label in (sc.SPU, sc.PARTITION, sc.TOPIC):
        _, update = client.watch(label, "fluvio.sc.watch.first-all")
        if update["changes"] or not update["all"]:
            raise Divergence(C["fluvio.sc.watch.first-all"], f"{label}: every object in 'all', no changes",
                             f"{len(update['all'])} in all, {len(update['changes'])} changes")
    names = [m["name"] for m in update["all"]]
    if name not in names:
        raise Divergence(C["fluvio.sc.watch.first-all"], f"topic {name} in the Topic watch", str(names[:10]))


def _next_update(client, correlation_id, clause_id, deadline):
    label, update = client.objects(sc.WATCH, client.answer(correlation_id, clause_id, deadline), clause_id)
    return update


@case("fluvio.sc.watch.changes")
def test_watch_pushes_create_and_delete_as_changes(target):
    watcher, admin = ScClient(target), ScClient(target)
    correlation_id, first = watcher.watch(sc.TOPIC, "fluvio.sc.watch.changes")
    name = target.unique("watchchg")
    if _codes(admin.create_topic(name, "fluvio.sc.watch.changes")) != ERROR_OK:
        raise Divergence(C["fluvio.sc.watch.changes"], f"topic {name} created", "an error Status")
    created = _next_update(watcher, correlation_id, "fluvio.sc.watch.changes", target.deadline)
    if [(kind, m["name"]) for kind, m in created["changes"]] != [(sc.UPDATE, name)]:
        raise Divergence(C["fluvio.sc.watch.changes"], f"one UPDATE of {name}",
                         str([(k, m["name"]) for k, m in created["changes"]]))
    if created["epoch"] <= first["epoch"]:
        raise Divergence(C["fluvio.sc.watch.epoch"], f"an epoch above {first['epoch']}", str(created["epoch"]))
    admin.delete_topic(name, "fluvio.sc.watch.changes")
    deleted = _next_update(watcher, correlation_id, "fluvio.sc.watch.changes", target.deadline)
    if [(kind, m["name"]) for kind, m in deleted["changes"]] != [(sc.DELETE_MSG, name)]:
        raise Divergence(C["fluvio.sc.watch.changes"], f"one DELETE of {name}",
                         str([(k, m["name"]) for k, m in deleted["changes"]]))
    if deleted["epoch"] <= created["epoch"]:
        raise Divergence(C["fluvio.sc.watch.epoch"], f"an epoch above {created['epoch']}", str(deleted["epoch"]))


@case("fluvio.sc.watch.epoch")
def test_watch_epoch_advances_with_changes(target):
    client = ScClient(target)
    _, before = client.watch(sc.PARTITION, "fluvio.sc.watch.epoch")
    ScClient(target).create_topic(target.unique("epoch"), "fluvio.sc.watch.epoch")  # watch pushes share client
    _, after = ScClient(target).watch(sc.PARTITION, "fluvio.sc.watch.epoch")
    if after["epoch"] <= before["epoch"]:
        raise Divergence(C["fluvio.sc.watch.epoch"], f"an epoch above {before['epoch']} after a create",
                         str(after["epoch"]))


@case("fluvio.sc.create.exists")
def test_create_existing_topic(target):
    client = ScClient(target)
    name = target.unique("exists")
    client.create_topic(name, "fluvio.sc.create.exists")
    status = client.create_topic(name, "fluvio.sc.create.exists")
    if _codes(status) != sc.TOPIC_ALREADY_EXISTS:
        raise Divergence(C["fluvio.sc.create.exists"], "TopicAlreadyExists (2002)", str(status["error_code"]))


@case("fluvio.sc.create.invalid-name")
def test_invalid_topic_names(target):
    client = ScClient(target)
    for name in ("Upper", "under_score", "-lead", "trail-", "sp ace", "dot.ted", "x" * 256):
        status = client.create_topic(name, "fluvio.sc.create.invalid-name")
        if _codes(status) != sc.TOPIC_INVALID_NAME:
            raise Divergence(C["fluvio.sc.create.invalid-name"], f"TopicInvalidName (2006) for {name[:20]!r}",
                             str(status["error_code"]))


@case("fluvio.sc.delete.missing")
def test_delete_missing_topic(target):
    status = ScClient(target).delete_topic(target.unique("missing"), "fluvio.sc.delete.missing")
    if _codes(status) != sc.TOPIC_NOT_FOUND:
        raise Divergence(C["fluvio.sc.delete.missing"], "TopicNotFound (2001)", str(status["error_code"]))


@case("fluvio.sc.list.topics")
def test_list_topics_by_name_and_after_delete(target):
    client = ScClient(target)
    kept, dropped = target.unique("listkept"), target.unique("listdrop")
    with target.precondition("two topics created through the SC"):
        for name, partitions in ((kept, 2), (dropped, 1)):
            if _codes(client.create_topic(name, "fluvio.sc.create.exists", partitions)) != ERROR_OK:
                raise Divergence(C["fluvio.sc.create.exists"], f"{name} created", "an error Status")
    everything = {m["name"]: m for m in client.list_objects(sc.TOPIC, "fluvio.sc.list.topics")}
    if not {kept, dropped} <= set(everything):
        raise Divergence(C["fluvio.sc.list.topics"], f"{kept} and {dropped} listed", str(sorted(everything)[:10]))
    replicas = everything[kept]["spec"]["replicas"]
    if replicas[0] != "Computed" or replicas[1]["partitions"] != 2:
        raise Divergence(C["fluvio.sc.list.topics"], f"{kept} with 2 partitions", str(replicas))
    named = [m["name"] for m in client.list_objects(sc.TOPIC, "fluvio.sc.list.topics", names=(kept,))]
    if named != [kept]:
        raise Divergence(C["fluvio.sc.list.topics"], f"only {kept} for a List naming it", str(named))
    client.delete_topic(dropped, "fluvio.sc.list.topics")
    after = [m["name"] for m in client.list_objects(sc.TOPIC, "fluvio.sc.list.topics", names=(dropped,))]
    if after:
        raise Divergence(C["fluvio.sc.list.topics"], f"{dropped} no longer listed after its delete", str(after))


@case("fluvio.sc.status.name")
def test_status_names_the_topic(target):
    client = ScClient(target)
    name = target.unique("status")
    for status in (client.create_topic(name, "fluvio.sc.status.name"), client.delete_topic(name, "fluvio.sc.status.name")):
        if status["name"] != name:
            raise Divergence(C["fluvio.sc.status.name"], f"Status.name {name!r}", repr(status["name"]))


@case("fluvio.sc.object.unknown-label", hostile=True)
def test_unknown_object_label(target):
    client = ScClient(target)
    client.request(sc.WATCH, "NoSuchKind", {"epoch": 0, "summary": False})
    reply = client.session.recv(target.deadline)
    if reply.outcome is Outcome.FRAME:
        raise Divergence(C["fluvio.sc.object.unknown-label"], "the connection closed",
                         f"an answer to a watch of 'NoSuchKind' ({reply.frame[:32].hex()})")


@case("fluvio.sc.hostile-lengths", hostile=True)
def test_lying_object_lengths(target):
    for label_len, body_len in ((0x7FFF, 0), (5, 0xFFFFFFFF), (-3, 12)):
        client = ScClient(target)
        body = struct.pack(">h", label_len) + b"Topic" + struct.pack(">I", body_len) + b"\x00" * 9
        header = struct.pack(">Hhih", sc.WATCH, sc.COMMON_VERSION, 7, 0)
        client.send_frame(struct.pack(">i", len(header) + len(body)) + header + body, decode=False)
        reply = client.session.recv(target.deadline)
        if not (reply.is_frame or reply.ended):  # the lie is inside a whole frame: nothing more is coming
            raise Divergence(C["fluvio.sc.hostile-lengths"], f"an answer or a close (label {label_len}, body "
                             f"{body_len})", f"{reply}: the connection stayed open")
        client.close()
    # and a new connection is still served (the SC's own liveness: the plugin's probe asks the SPU)
    ScClient(target).call(messages.API_VERSIONS, 2, HELLO_BODY, "fluvio.sc.hostile-lengths")
