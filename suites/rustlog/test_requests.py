"""The request envelope: object root, type, field kinds, unknown fields (seed §JSON Payload Format,
§Connection Error Handling)."""

import pytest

from wirecheck.protocols.rustlog.clauses import MAX_RECORDS
from wirecheck.protocols.rustlog.layers import U64_MAX, encode_frame
from wirecheck.protocols.verdicts import Divergence
from wirecheck.strategies.rustlog import (LOOKUP_NAME_CODES, NAME_CLAUSES, NOT_OBJECTS, PROCESSED_CODES,
                                          UNKNOWN_TYPES, invalid_field_variants)
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
@pytest.mark.parametrize("name,request_obj", _VARIANTS, ids=[n for n, _ in _VARIANTS])
def test_invalid_field(target, fields_topic, name, request_obj):
    client, topic = fields_topic
    if request_obj.get("topic") == FIELD_TOPIC:  # the valid topic field names the topic that exists
        request_obj = {**request_obj, "topic": topic}
    field = name.rsplit("-", 1)[0]  # "CreateTopic.topic-wrong2" -> "CreateTopic.topic"
    a_name = field.endswith(".topic") and isinstance(request_obj.get("topic"), str)  # a wrong name, not a wrong kind
    owner = NAME_CLAUSES[field] if a_name and field in NAME_CLAUSES else "rustlog.request.invalid-fields"
    # a lookup naming an invalid topic may be refused or not found (LOOKUP_NAME_CODES: the seed's naming rule is
    # CreateTopic's and Produce's, and it never puts validation before the lookup; variant lookup-invalid-name-404)
    codes = LOOKUP_NAME_CODES if a_name and field not in NAME_CLAUSES else {400}
    answer = client.call(request_obj, owner)
    if answer["type"] != "Error":
        raise Divergence(C[owner], f"an Error ({' or '.join(map(str, sorted(codes)))})", short(answer))
    client.still_open("rustlog.request.invalid-fields")
    if answer["code"] not in codes:
        code_clause = owner if owner != "rustlog.request.invalid-fields" or answer["code"] in PROCESSED_CODES \
            else "rustlog.request.invalid-code"
        raise Divergence(C[code_clause], f"Error code {' or '.join(map(str, sorted(codes)))}",
                         f"code {answer['code']}")


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
    bad_requests = [  # (request, the clause whose Error it is)
        ({"type": "Nope"}, "rustlog.request.unknown-type"),
        ({"type": "Produce", "topic": topic}, "rustlog.request.invalid-fields"),
        ({"type": "Fetch"}, "rustlog.request.invalid-fields"),
        ({"type": "Produce", "topic": topic, "partition": 0, "records": ["AA=="] * (MAX_RECORDS + 1)},
         "rustlog.produce.record-limit"),
        ({"type": "DescribeTopic", "topic": target.unique("missing")}, "rustlog.admin.describe-unknown"),
    ]
    # This case judges that the connection goes on answering after an Error; what each answer is, and an answer
    # to the first request (no Error before it), are the request's own clause's.
    for i, (bad, owner) in enumerate(bad_requests):
        answer = client.call(bad, "rustlog.request.stays-open" if i else owner)
        if answer["type"] != "Error":
            raise Divergence(C[owner], "an Error", short(answer))
    client.still_open()
    client.produce(topic, 0, [b"after errors"])


@case("rustlog.errors.shape")
@pytest.mark.parametrize("request_obj,owner", [
    ({"type": "Nope"}, "rustlog.request.unknown-type"), ({"type": "Fetch"}, "rustlog.request.invalid-fields"),
    ({"type": "DescribeTopic"}, "rustlog.admin.describe-unknown"),
], ids=["unknown-type", "fields-missing", "not-found"])
def test_error_answers_have_code_and_message(target, request_obj, owner):
    # Decoding an Error checks its shape; that an Error came at all is the clause of the request (owner).
    if request_obj["type"] == "DescribeTopic":
        request_obj = {**request_obj, "topic": target.unique("missing")}
    answer = RustLog(target).call(request_obj, owner)
    if answer["type"] != "Error":
        raise Divergence(C[owner], "an Error", short(answer))


@case("rustlog.errors.details")
@pytest.mark.parametrize("request_obj,owner", [({"type": "Nope"}, "rustlog.request.unknown-type"),
                                               ({"type": "Fetch"}, "rustlog.request.invalid-fields")],
                         ids=["unknown-type", "fields-missing"])
def test_error_answers_carry_details(target, request_obj, owner):
    client = RustLog(target)
    answer = client.call(request_obj, owner)  # that an Error comes is the request's clause (owner)
    if answer["type"] != "Error":
        raise Divergence(C[owner], "an Error", short(answer))
    problems = client.details_problems(answer)
    if problems:
        raise Divergence(C["rustlog.errors.details"], "details: an object or null", "; ".join(problems))


@case("rustlog.errors.details")
def test_not_found_error_carries_details(target):
    client = RustLog(target)
    answer = client.call({"type": "DescribeTopic", "topic": target.unique("missing")},
                         "rustlog.admin.describe-unknown")
    if answer["type"] != "Error":  # that an Error comes is the request's clause
        raise Divergence(C["rustlog.admin.describe-unknown"], "an Error", short(answer))
    problems = client.details_problems(answer)
    if problems:
        raise Divergence(C["rustlog.errors.details"], "an Error whose details is an object or null",
                         "; ".join(problems) + f": {short(answer)}")
