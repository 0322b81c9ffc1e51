"""The consumer API (:9252) over HTTP/1.1 and h2c: registration, polls, commits, goodbye (notes §5)."""

import json

import pytest

from wirecheck.suites.barco.client import (Consumer, Producer, diverge, expect_records, expect_status, http,
                                            http_produce, json_items, records_of, register_query, status_answered,
                                            unregistered_refused)

case = pytest.mark.case
ENDPOINTS = ["consumer", "consumer-h2c"]


def produced(target, count: int = 3, key: bytes = b"k", topic: str | None = None) -> tuple[str, list[bytes]]:
    topic = topic or target.unique("t")
    messages = [b"msg-%d-" % i + bytes(range(i % 7)) for i in range(count)]
    client = Producer(target)
    with target.precondition(f"{count} message(s) produced to {topic}"):
        for message in messages:
            client.produce(topic, [message], key=key)
    return topic, messages


@case("barco.consumer.register")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("method", ["PUT", "POST"])
def test_register(target, endpoint, method):
    c = Consumer(target, [target.unique("t")], endpoint=endpoint)
    expect_status(c.session.request(method, register_query(c.id, c.topics, c.group)), 200, "barco.consumer.register")


@case("barco.consumer.register-idempotent")
def test_register_twice(target):
    c = Consumer(target, [target.unique("t")])
    c.register()
    c.register("barco.consumer.register-idempotent")


@case("barco.consumer.register-conflict")
@pytest.mark.parametrize("change", ["topics", "group"])
def test_register_with_other_parameters_is_400(target, change):
    c = Consumer(target, [target.unique("t")])
    c.register()
    if change == "topics":
        c.topics = [target.unique("other")]
    else:
        c.group = target.unique("g2")
    c.register("barco.consumer.register-conflict", status=400)


@case("barco.consumer.register-invalid")
@pytest.mark.parametrize("query", ["consumerId=&topic=t", "consumerId=x", "topic=t&consumerId=x&onNewGroup=never"])
def test_register_invalid_is_400(target, query):
    expect_status(http(target, "consumer").request("PUT", "/v1/consumer/register?" + query), 400,
                  "barco.consumer.register-invalid")


@case("barco.consumer.register-connection")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_connection_bound_consumer(target, endpoint):
    topic, messages = produced(target, 2)
    c = Consumer(target, [topic], endpoint=endpoint, bound=True)
    c.register_bound()
    bodies = [b for _, bs in c.drain(2, "barco.consumer.register-connection", polls=10, one_key=True) for b in bs]
    if bodies != messages:
        raise diverge("barco.consumer.register-connection", f"records {messages}", bodies)


@case("barco.consumer.register-connection")
# (an integer onNewGroup outside the known values is not among them: the notes name no check of it)
@pytest.mark.parametrize("body", [b"{", b"[]", b'{"id":1,"topics":["t"]}', b'{"id":"x","topics":"t"}'])
def test_invalid_consumer_info_is_400(target, body):
    reply = http(target, "consumer-h2c").request("PUT", "/v1/consumer/register", [], body)
    expect_status(reply, 400, "barco.consumer.register-connection")


@case("barco.consumer.poll-binary")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_poll_binary_returns_the_records(target, endpoint):
    topic, messages = produced(target, 4)
    c = Consumer(target, [topic], endpoint=endpoint)
    c.register()
    got = [b for _, bs in c.drain(4, "barco.consumer.poll-binary", one_key=True) for b in bs]
    if got != messages:
        raise diverge("barco.consumer.poll-binary", f"records {messages}", got)


@case("barco.consumer.records")
@pytest.mark.parametrize("sizes", [[0], [1, 2, 3], [70_000, 5], [300_000]])
def test_records_are_byte_identical(target, sizes):
    topic = target.unique("t")
    messages = [bytes((i * 7 + n) % 256 for i in range(n)) for n in sizes]
    with target.precondition(f"messages produced to {topic}"):
        Producer(target).produce(topic, messages, key=b"k")
    c = Consumer(target, [topic])
    c.register()
    got = [b for _, bs in c.drain(len(messages), "barco.consumer.records") for b in bs]
    expect_records(got, messages, "barco.consumer.records", f"records of {sizes} bytes")


#: multi-byte UTF-8 text, as HTTP clients post it: a record's length field counts bytes (polarstreams/polar
#: internal/producing/models.go marshalRecordProps, l. 146: a uint32 of the body's bytes), never characters
TEXT = ["\u00e9t\u00e9 \u2713".encode(), "\u65e5\u672c\u8a9e \U0001f600".encode(), b"ascii"]


@case("barco.consumer.records")
@pytest.mark.parametrize("via", ["producer", "producer-http"])
def test_text_records_are_byte_identical(target, via):
    topic = target.unique("t")
    # over HTTP one body, one record (text/plain is neither split by lines nor by frames: content-types' rules stay
    # out of this case)
    messages = TEXT if via == "producer" else [b" ".join(TEXT)]
    with target.precondition(f"UTF-8 text records produced to {topic} ({via})"):
        if via == "producer":
            Producer(target).produce(topic, messages, key=b"k")
        else:
            http_produce(target, topic, messages[0], "text/plain; charset=utf-8", key="k")
    c = Consumer(target, [topic])
    c.register()
    got = [b for _, bs in c.drain(len(messages), "barco.consumer.records") for b in bs]
    if not got and via == "producer-http":  # as http_stored judges it: nothing stored is the POST's divergence
        raise diverge("barco.http-producer.produce", "the record of a POST answered 200", "no record stored")
    expect_records(got, messages, "barco.consumer.records", f"the UTF-8 records {messages}")


@case("barco.consumer.payload-zstd")
def test_payload_is_zstd_with_checksum(target):
    topic, _ = produced(target, 1)
    c = Consumer(target, [topic])
    c.register()
    for item in c.poll_items("barco.consumer.payload-zstd"):
        records_of(item)  # checks the checksum flag and the frame


@case("barco.consumer.poll-json")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_poll_json(target, endpoint):
    topic = target.unique("t")
    values = [{"n": 1}, [1, 2], "s"]
    with target.precondition(f"messages produced to {topic}"):
        Producer(target).produce(topic, [json.dumps(v).encode() for v in values], key=b"k")
    c = Consumer(target, [topic], endpoint=endpoint)
    c.register()
    reply = c.poll("application/json")
    expect_status(reply, 200, "barco.consumer.poll-json")
    items = json_items(reply)
    got = [json.loads(v) for item in items for v in item.values]
    if got != values or items[0].offset != 0 or items[0].topic != topic.encode():
        raise diverge("barco.consumer.poll-json", f"values {values} from offset 0", reply.body[:300])
    # an item is one stored chunk, its startOffset the chunk's first record's and its values all the chunk's records
    # (polarstreams/polar internal/consuming/models.go MarshalJson, l. 136-156: one object per consumerResponseItem,
    # startOffset chunk.StartOffset(), values every record of the chunk): one key, one reader, so each item's
    # startOffset is the previous one's plus its values' count, however the server grouped the records in chunks
    offsets = [item.offset for item in items]
    expected = [sum(len(item.values) for item in items[:n]) for n in range(len(items))]
    if offsets != expected:
        raise diverge("barco.consumer.poll-json", f"items of whole chunks: start offsets {expected} for "
                      f"{[len(item.values) for item in items]} values", f"start offsets {offsets}")


@case("barco.consumer.poll-empty")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_nothing_to_read_is_204(target, endpoint):
    c = Consumer(target, [target.unique("t")], endpoint=endpoint)
    c.register()
    reply = c.poll()
    expect_status(reply, 204, "barco.consumer.poll-empty")
    if reply.body:
        raise diverge("barco.consumer.poll-empty", "an empty body", reply.body[:100])


@case("barco.consumer.retry-after")
def test_204_carries_retry_after(target):
    c = Consumer(target, [target.unique("t")])
    c.register()
    reply = c.poll()
    expect_status(reply, 204, "barco.consumer.poll-empty")
    value = reply.header("retry-after")
    if value is None or not value.strip().isdigit():
        raise diverge("barco.consumer.retry-after", "Retry-After: <seconds>", value or "no Retry-After")


@case("barco.consumer.unregistered")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("action", ["poll", "commit", "goodbye"])
def test_unregistered_consumer_is_409(target, endpoint, action):
    reply = http(target, endpoint).request("POST", f"/v1/consumer/{action}?consumerId={target.unique('nobody')}")
    expect_status(reply, 409, "barco.consumer.unregistered")


@case("barco.consumer.unregistered")
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("action", ["poll", "commit", "goodbye"])
def test_consumer_gone_is_409_on_every_connection(target, endpoint, action):
    """A consumer that said goodbye is unregistered wherever it asks next: upstream looks a stateless consumerId
    up in the broker's state, not the connection's (polarstreams/polar internal/consuming/server.go
    validateRegistered, l. 359-387: 409 "Consumer not registered"; goodbye unRegisters it, l. 476)."""
    unregistered_refused(target, endpoint)
    c = Consumer(target, [target.unique("t")])
    c.register()
    with target.precondition(f"consumer {c.id} said goodbye, and its own connection's poll is refused"):
        expect_status(c.goodbye(), 200, "barco.consumer.goodbye")
        expect_status(c.poll(), 409, "barco.consumer.goodbye", "after goodbye")
    reply = http(target, endpoint).request("POST", f"/v1/consumer/{action}?consumerId={c.id}")
    expect_status(reply, 409, "barco.consumer.unregistered", f"to a {action} on another connection after goodbye")


@case("barco.http.query")
@pytest.mark.parametrize("action", ["poll", "commit", "goodbye"])
def test_missing_consumer_id(target, action):
    """Without consumerId a stateless request names no consumer: 409 (not registered) or 400."""
    unregistered_refused(target)  # the 409 reading answers as for an unregistered consumer
    reply = http(target, "consumer").request("POST", f"/v1/consumer/{action}")
    expect_status(reply, (400, 409), "barco.http.query")


@case("barco.consumer.method")
@pytest.mark.parametrize("path", ["/v1/consumer/poll", "/v1/consumer/commit", "/v1/consumer/goodbye",
                                  "/v1/consumer/register"])
def test_get_on_consumer_routes(target, path):
    # the clause's decision: 405 as upstream's router answers, or 404 (a router matching method and path together)
    expect_status(http(target, "consumer").request("GET", path + "?consumerId=x"), (405, 404), "barco.consumer.method")
    expect_status(http(target, "consumer").request("DELETE", path), (405, 404), "barco.consumer.method")


@case("barco.consumer.offsets-continuous")
def test_offsets_continue_across_polls(target):
    topic = target.unique("t")
    client = Producer(target)
    sizes = [1, 3, 2, 4]
    with target.precondition(f"{len(sizes)} frames produced to {topic}"):
        for n, size in enumerate(sizes):
            client.produce(topic, [b"%d-%d" % (n, i) for i in range(size)], key=b"key")
    c = Consumer(target, [topic])
    c.register()
    got = c.drain(sum(sizes), "barco.consumer.offsets-continuous", one_key=True)
    expected = 0
    for item, bodies in got:
        if item.offset != expected:
            raise diverge("barco.consumer.offsets-continuous", f"offset {expected}", f"offset {item.offset}")
        expected += len(bodies)
    if expected != sum(sizes):
        raise diverge("barco.consumer.offsets-continuous", f"{sum(sizes)} records", f"{expected} records")


@case("barco.consumer.commit")
def test_commit_then_switch_consumer(target):
    topic, _ = produced(target, 1)
    group = target.unique("g")
    a = Consumer(target, [topic], group=group)
    a.register()
    if not a.poll_items("barco.consumer.commit"):
        raise diverge("barco.consumer.commit", "the first record", "nothing")
    expect_status(a.commit(), 204, "barco.consumer.commit")
    expect_status(a.goodbye(commit=False), 200, "barco.consumer.goodbye")
    with target.precondition(f"a second message produced to {topic}"):
        Producer(target).produce(topic, [b"after-commit"], key=b"k")
    b = Consumer(target, [topic], group=group)
    b.register()
    # which record comes next, by its body: the offsets announced are barco.consumer.offsets-continuous' to judge
    bodies = [body for item in b.poll_items("barco.consumer.commit") for _, body in records_of(item)]
    if bodies[:1] != [b"after-commit"]:
        raise diverge("barco.consumer.commit", "the record produced after the commit, first", bodies[:3])


@case("barco.consumer.at-least-once")
def test_uncommitted_is_served_again(target):
    topic, messages = produced(target, 1)
    group = target.unique("g")
    a = Consumer(target, [topic], group=group)
    a.register()
    first = a.poll_items("barco.consumer.at-least-once")
    expect_status(a.goodbye(commit=False), 200, "barco.consumer.goodbye")
    b = Consumer(target, [topic], group=group)
    b.register()
    again = b.poll_items("barco.consumer.at-least-once")
    if not first or not again or again[0].offset != first[0].offset:
        raise diverge("barco.consumer.at-least-once", f"offset {first[0].offset if first else 0} again",
                      [i.offset for i in again])


@case("barco.consumer.goodbye")
def test_goodbye_unregisters(target):
    c = Consumer(target, [target.unique("t")])
    c.register()
    unregistered_refused(target)  # the 409 that shows the goodbye took effect
    reply = c.goodbye()
    expect_status(reply, 200, "barco.consumer.goodbye")
    expect_status(c.poll(), 409, "barco.consumer.goodbye", "after goodbye")


@case("barco.consumer.h2c")
def test_concurrent_h2_streams(target):
    session = http(target, "consumer-h2c")
    replies = session.requests([("GET", "/status")] * 5)
    for reply in replies:
        status_answered(reply, "consumer-h2c", "barco.consumer.h2c")


@case("barco.http.stream-reset", hostile=True)
def test_reset_stream_leaves_the_connection_usable(target):
    session = http(target, "consumer-h2c")
    stream_id = session.h2.get_next_available_stream_id()
    session.h2.send_headers(stream_id, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                                        (":path", "/v1/consumer/poll?consumerId=x")], end_stream=False)
    session.h2.send_data(stream_id, b"partial")  # the request never ends: the client resets it
    session.h2.reset_stream(stream_id)
    session._flush()
    status_answered(session.request("GET", "/status"), "consumer-h2c", "barco.http.stream-reset")
