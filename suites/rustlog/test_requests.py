"""The request envelope: object root, type, field kinds, unknown fields (seed §JSON Payload Format,
§Connection Error Handling)."""

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_RECORDS
from wirecheck.protocols.rustlog.layers import U64_MAX, encode_frame
from wirecheck.reports.model import Divergence
from wirecheck.strategies.rustlog import NOT_OBJECTS, UNKNOWN_TYPES, invalid_field_variants
from wirecheck.suites.rustlog.client import C, RustLog, new_topic, short

case = pytest.mark.case
FIELD_TOPIC = "wirecheck-fields"  # created once per target; the invalid requests never change it


@pytest.fixture
def fields_topic(target):
    """(client, topic) the invalid requests name: a configured topic, else FIELD_TOPIC, created once per target."""
    client = RustLog(target)
    named = target.named_topics()
    if named:
        return client, next(iter(named))
    with target.precondition(f"topic {FIELD_TOPIC} exists"):
        answer = client.call({"type": "CreateTopic", "topic": FIELD_TOPIC, "partition_count": 1},
                             "rustlog.admin.create")
        if answer["type"] not in ("CreateTopicResponse", "Error"):
            raise Divergence(C["rustlog.admin.create"], "CreateTopicResponse or Error (already exists)",
                             short(answer))
    return client, FIELD_TOPIC


@case("rustlog.request.not-object", hostile=True)
@pytest.mark.parametrize("body", [b for _, b in NOT_OBJECTS], ids=[n for n, _ in NOT_OBJECTS])
def test_json_that_is_not_a_request_object(target, body):
    client = RustLog(target)
    client.send(encode_frame(body))
    reply = client.session.recv()
    if reply.ended:
        raise Divergence(C["rustlog.request.not-object"], "Error 400, connection open", f"{reply} (no Error)")
    answer = client.decode(reply, "rustlog.request.not-object")
    if answer["type"] != "Error":
        raise Divergence(C["rustlog.request.not-object"], "Error 400", short(answer))
    client.still_open("rustlog.request.not-object")
    if answer["code"] != 400:
        raise Divergence(C["rustlog.request.invalid-code"], "Error code 400", f"code {answer['code']}")


@case("rustlog.request.unknown-type", hostile=True)
@pytest.mark.parametrize("name", UNKNOWN_TYPES, ids=lambda n: repr(n[:12]))
def test_unknown_request_type(target, name):
    client = RustLog(target)
    answer = client.call({"type": name}, "rustlog.request.unknown-type")
    if answer["type"] != "Error":
        raise Divergence(C["rustlog.request.unknown-type"], "an Error", short(answer))
    client.still_open("rustlog.request.unknown-type")
    if answer["code"] != 400:
        raise Divergence(C["rustlog.request.invalid-code"], "Error code 400", f"code {answer['code']}")


_VARIANTS = invalid_field_variants(FIELD_TOPIC)


@case("rustlog.request.invalid-fields", hostile=True)
@pytest.mark.parametrize("request_obj", [r for _, r in _VARIANTS], ids=[n for n, _ in _VARIANTS])
def test_invalid_field(target, fields_topic, request_obj):
    client, topic = fields_topic
    if request_obj.get("topic") == FIELD_TOPIC:  # the valid topic field names the topic that exists
        request_obj = {**request_obj, "topic": topic}
    answer = client.call(request_obj, "rustlog.request.invalid-fields")
    if answer["type"] != "Error":
        raise Divergence(C["rustlog.request.invalid-fields"], "an Error (400)", short(answer))
    client.still_open("rustlog.request.invalid-fields")
    if answer["code"] != 400:
        raise Divergence(C["rustlog.request.invalid-code"], "Error code 400", f"code {answer['code']}")


@case("rustlog.request.extra-fields")
def test_unknown_fields_are_ignored(target):
    client, topic = new_topic(target, shared=True)
    answer = client.call({"type": "Produce", "topic": topic, "partition": 0, "records": ["AA=="],
                          "compression": "none", "x-trace": {"id": 1}}, "rustlog.request.extra-fields")
    if answer["type"] != "ProduceResponse" or answer.get("record_count") != 1:
        raise Divergence(C["rustlog.request.extra-fields"], "ProduceResponse with record_count 1", short(answer))
    answer = client.call({"type": "Ping", "future": True}, "rustlog.request.extra-fields")
    if answer != {"type": "Pong"}:  # an answer, but no Pong: the Ping's clause (the extra field was not refused)
        raise Divergence(C["rustlog.ping.pong"], '{"type":"Pong"}', short(answer))


@case("rustlog.request.u64-range")
def test_largest_u64_offset_is_an_integer_not_a_float(target):
    client, topic = new_topic(target, shared=True)
    answer = client.call({"type": "Fetch", "group_id": "", "topic": topic, "partition": 0, "offset": U64_MAX,
                          "max_bytes": 1024}, "rustlog.request.u64-range")
    # Beyond the high watermark: empty, or Error 416 (decision D7 permits it); 400 would refuse the integer itself.
    beyond = answer["type"] == "Error" and answer["code"] == 416
    if not beyond and (answer["type"] != "FetchResponse" or answer["records"]):
        raise Divergence(C["rustlog.request.u64-range"], f"an empty FetchResponse (or Error 416) for offset {U64_MAX}",
                         short(answer))
    group = target.unique("g")  # a group of its own: another case may commit for any shared name
    committed = client.commit(group, topic, 0, U64_MAX) and client.committed(group, topic, 0)
    if committed is not False and committed != U64_MAX:
        raise Divergence(C["rustlog.request.u64-range"], f"committed offset {U64_MAX} exactly", str(committed))


@case("rustlog.request.stays-open")
def test_connection_survives_a_stream_of_errors(target):
    client, topic = new_topic(target, shared=True)
    for bad in ({"type": "Nope"}, {"type": "Produce", "topic": topic}, {"type": "Fetch"},
                {"type": "Produce", "topic": topic, "partition": 0, "records": ["AA=="] * (MAX_RECORDS + 1)},
                {"type": "DescribeTopic", "topic": target.unique("missing")}):
        answer = client.call(bad, "rustlog.request.stays-open")
        if answer["type"] != "Error":
            raise Divergence(C["rustlog.request.stays-open"], "an Error", short(answer))
    client.still_open()
    client.produce(topic, 0, [b"after errors"])


@case("rustlog.errors.details")
@pytest.mark.parametrize("request_obj", [{"type": "Nope"}, {"type": "Fetch"}], ids=["unknown-type", "fields-missing"])
def test_error_answers_carry_details(target, request_obj):
    client = RustLog(target)
    answer = client.call(request_obj, "rustlog.errors.details")
    if answer["type"] != "Error":
        raise Divergence(C["rustlog.errors.details"], "an Error", short(answer))
    problems = client.details_problems(answer)
    if problems:
        raise Divergence(C["rustlog.errors.details"], "details: an object or null", "; ".join(problems))


@case("rustlog.errors.details")
def test_not_found_error_carries_details(target):
    client = RustLog(target)
    answer = client.call({"type": "DescribeTopic", "topic": target.unique("missing")}, "rustlog.errors.details")
    problems = client.details_problems(answer) if answer["type"] == "Error" else ["not an Error"]
    if problems:
        raise Divergence(C["rustlog.errors.details"], "an Error whose details is an object or null",
                         "; ".join(problems) + f": {short(answer)}")
