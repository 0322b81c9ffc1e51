"""Table segments: versioned keys, conditional updates and removals, reads, iteration, delta reads
(notes §4.6)."""

import time

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.suites.pravega.client import Pravega, new_table, segment_name, table_with_keys

INFO_CONVERGES_S = 10.0  # how long a table's entryCount may take to reach its keys (pravega.table.info)

case = pytest.mark.case
ANY, NEW = cmd.NO_VERSION, cmd.NOT_EXISTS


def versions(answer):
    return answer["updated_versions"]


@case("pravega.table.create")
def test_create_table(target):
    client, table = new_table(target)
    client.call("CreateTableSegment", "pravega.table.create", ("SegmentAlreadyExists",), segment=table)


@case("pravega.table.update")
@pytest.mark.parametrize("count", [1, 3, 20])
def test_update_returns_one_version_per_entry(target, count):
    client, table, prefix = table_with_keys(target)
    entries = [(prefix + b"key-%d" % i, ANY, b"value-%d" % i) for i in range(count)]
    got = versions(client.put(table, entries))
    if len(set(got)) != count or any(v < 0 for v in got):
        raise client.diverge("pravega.table.update", f"{count} distinct versions >= 0", str(got))
    read = client.get(table, [k for k, _, _ in entries], "pravega.table.update")
    for (key, _, value), version in zip(entries, got):
        if read[key] != (version, value):
            raise client.diverge("pravega.table.update", f"{key!r} at version {version}", str(read[key]))


@case("pravega.table.version-bump")
@pytest.mark.parametrize("conditional", [False, True], ids=["unconditional", "conditional"])
def test_each_update_bumps_the_version(target, conditional):
    client, table, prefix = table_with_keys(target)
    with target.precondition("a key written"):
        version = client.put_key(table, prefix + b"k", b"1", NEW if conditional else ANY)
    for n in range(2, 5):
        version = client.put_key(table, prefix + b"k", b"%d" % n, version if conditional else ANY, above=version,
                                 clause_id="pravega.table.version-bump")


@case("pravega.table.conditional")
@pytest.mark.parametrize("case_", ["stale", "not-exists-on-existing", "missing-with-version"])
def test_conditional_update_fails(target, case_):
    client, table, prefix = table_with_keys(target)
    k, other = prefix + b"k", prefix + b"other"
    with target.precondition("a key written twice"):
        v1 = client.put_key(table, k, b"one")
        client.put_key(table, k, b"two", v1, above=v1)  # else the stale version would still be current
    if case_ == "stale":
        entry, reply = (k, v1, b"three"), "TableKeyBadVersion"
    elif case_ == "not-exists-on-existing":
        entry, reply = (k, NEW, b"three"), "TableKeyBadVersion"
    else:
        entry, reply = (prefix + b"absent", 5, b"three"), "TableKeyDoesNotExist"
    answer = client.put(table, [(other, ANY, b"x"), entry], "pravega.table.conditional", (reply,))
    if answer["segment"] != table:
        raise client.diverge("pravega.table.conditional", repr(table), repr(answer["segment"]))
    read = client.get(table, [k, other], "pravega.table.conditional")
    if read[k][1] != b"two" or read[other][0] != NEW:
        raise client.diverge("pravega.table.conditional", "nothing of the batch applied", str(read))


@case("pravega.table.read")
def test_read_missing_key(target):
    client, table, prefix = table_with_keys(target)
    absent, here = prefix + b"absent", prefix + b"here"
    with target.precondition("a key written"):
        client.put(table, [(here, ANY, b"v")])
    read = client.get(table, [absent, here])
    if read[absent] != (NEW, b"") or read[here][1] != b"v":
        raise client.diverge("pravega.table.read", "absent: (-1, b''), here: value v", str(read))


@case("pravega.table.read")
@pytest.mark.parametrize("size", [1, 100, 10000])
def test_binary_keys_and_values(target, size):
    client, table = new_table(target)
    key, value = bytes(range(256))[:size % 256 or 1] * (1 + size // 256), bytes(size)
    client.put(table, [(key, ANY, value)])
    if client.get(table, [key])[key][1] != value:
        raise client.diverge("pravega.table.read", f"{size} value bytes", "other bytes")


@case("pravega.table.remove")
def test_remove_keys(target):
    client, table, prefix = table_with_keys(target)
    a, b = prefix + b"a", prefix + b"b"
    with target.precondition("two keys written"):
        v = client.put_key(table, a, b"1")
        client.put_key(table, b, b"2")
    client.removed(table, [(a, v), (b, ANY)])


@case("pravega.table.remove")
def test_remove_missing_key_unconditionally(target):
    client, table, prefix = table_with_keys(target)
    client.removed(table, [(prefix + b"never", ANY)])


@case("pravega.table.conditional")
@pytest.mark.parametrize("case_", ["stale", "missing"])
def test_conditional_remove_fails(target, case_):
    client, table, prefix = table_with_keys(target)
    k = prefix + b"k"
    with target.precondition("a key written twice"):
        v = client.put_key(table, k, b"1")
        client.put_key(table, k, b"2", v, above=v)  # else the stale version would still be current
    key, reply = ((k, v), "TableKeyBadVersion") if case_ == "stale" else ((prefix + b"gone", 3), "TableKeyDoesNotExist")
    client.remove(table, [key], "pravega.table.conditional", (reply,))
    if client.get(table, [k], "pravega.table.conditional")[k][1] != b"2":
        raise client.diverge("pravega.table.conditional", "the key kept", "removed")


@case("pravega.table.iterate")
@pytest.mark.parametrize("command", ["ReadTableKeys", "ReadTableEntries"])
@pytest.mark.parametrize("page", [1, 3, 100])
def test_iterate_every_key_once(target, command, page):
    client, table = new_table(target)
    keys = {b"key-%02d" % i for i in range(7)}
    with target.precondition("7 keys written, one removed"):
        client.put(table, [(k, ANY, k + b"-value") for k in sorted(keys)])
        client.removed(table, [(b"key-03", ANY)])
    keys.discard(b"key-03")
    reply = "TableKeysRead" if command == "ReadTableKeys" else "TableEntriesRead"
    count_field = "suggested_key_count" if command == "ReadTableKeys" else "suggested_entry_count"
    if page < len(keys):  # the iteration order is the server's (the notes' D4 is the reference broker's reading;
        # Pravega 0.13.0 iterates a table of variable-length keys by key hash), so which keys a page holds is too
        target.beyond_comparison("a paged iteration: which keys each page holds follows the server's own order")
    seen, token = [], b""
    for _ in range(20):
        if token:  # what the token says is the server's own encoding of where it stopped (D4: the reference's)
            target.beyond_comparison("a continuation token is the server's own encoding")
        answer = client.call(command, "pravega.table.iterate", (reply,), segment=table,
                             **{count_field: page, "args": {"continuation_token": token}})
        got = answer["keys"] if command == "ReadTableKeys" else answer["entries"]
        if not got:
            break
        if command == "ReadTableEntries" and any(value != key + b"-value" for key, _, value in got):
            raise client.diverge("pravega.table.iterate", "each key with its value", str(got))
        seen += [e[0] for e in got]
        token = answer["continuation_token"]
    if sorted(seen) != sorted(keys) or len(seen) != len(set(seen)):
        raise client.diverge("pravega.table.iterate", f"each of {sorted(keys)} once", str(seen))


@case("pravega.table.delta")
def test_delta_reads_resume(target):
    client, table = new_table(target)
    client.put(table, [(b"a", ANY, b"1"), (b"b", ANY, b"2")])
    first = client.call("ReadTableEntriesDelta", "pravega.table.delta", ("TableEntriesDeltaRead",), segment=table,
                        from_position=0, suggested_entry_count=100)
    if sorted(e[0] for e in first["entries"]) != [b"a", b"b"]:
        raise client.diverge("pravega.table.delta", "entries a and b", client._text(first))
    client.put(table, [(b"c", ANY, b"3")])
    later = client.call("ReadTableEntriesDelta", "pravega.table.delta", ("TableEntriesDeltaRead",), segment=table,
                        from_position=first["last_position"], suggested_entry_count=100)
    if [e[0] for e in later["entries"]] != [b"c"]:
        raise client.diverge("pravega.table.delta", "only entry c", client._text(later))


@case("pravega.table.delta")
def test_delta_respects_the_count(target):
    client, table = new_table(target)
    client.put(table, [(b"k%d" % i, ANY, b"v") for i in range(5)])
    answer = client.call("ReadTableEntriesDelta", "pravega.table.delta", ("TableEntriesDeltaRead",), segment=table,
                         from_position=0, suggested_entry_count=2)
    if not 1 <= len(answer["entries"]) <= 2 or answer["reached_end"]:
        raise client.diverge("pravega.table.delta", "1..2 entries, reachedEnd false", client._text(answer))


@case("pravega.table.info")
def test_table_info_counts_keys(target):
    client, table = new_table(target)
    client.put(table, [(b"a", ANY, b"1"), (b"b", ANY, b"2"), (b"a", ANY, b"3")])
    # an eventually consistent count (the clause's source): asked again until it shows the two keys, bounded
    deadline = time.monotonic() + INFO_CONVERGES_S
    while True:
        answer = client.call("GetTableSegmentInfo", "pravega.table.info", ("TableSegmentInfo",), segment=table)
        if answer["entry_count"] == 2:
            return
        if time.monotonic() > deadline:
            raise client.diverge("pravega.table.info", f"entryCount 2 within {INFO_CONVERGES_S:.0f} s",
                                 client._text(answer))
        time.sleep(0.1)


@case("pravega.table.delete")
@pytest.mark.parametrize("must_be_empty", [True, False])
def test_delete_table(target, must_be_empty):
    client, table = new_table(target)
    client.put(table, [(b"a", ANY, b"1")])
    if must_be_empty:
        client.call("DeleteTableSegment", "pravega.table.delete", ("TableSegmentNotEmpty",), segment=table,
                    must_be_empty=True)
        with target.precondition("the table's key removed"):
            client.removed(table, [(b"a", ANY)])
    client.call("DeleteTableSegment", "pravega.table.delete", ("SegmentDeleted",), segment=table,
                must_be_empty=must_be_empty)


@case("pravega.segment.no-such-segment")
@pytest.mark.parametrize("command", ["ReadTable", "UpdateTableEntries", "RemoveTableKeys", "GetTableSegmentInfo"])
def test_table_operations_on_missing_table(target, command):
    client = Pravega(target)
    values = {"ReadTable": {"keys": []}, "UpdateTableEntries": {"entries": [(b"k", ANY, b"v")]},
              "RemoveTableKeys": {"keys": [(b"k", ANY)]}}.get(command, {})
    client.call(command, "pravega.segment.no-such-segment", ("NoSuchSegment",), segment=segment_name(target),
                **values)
