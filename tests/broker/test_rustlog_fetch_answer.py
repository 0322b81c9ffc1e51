"""The RustLog FetchResponse encoder (broker/rustlog/fetch_answer.py): byte for byte what json.dumps gives
for the same answer, the frame cap checked before a record is added, and record views taken without copies."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from wirecheck.broker.rustlog.batch import decode_batch, encode_batch
from wirecheck.broker.rustlog.fetch_answer import WRAPPER_MAX, FetchAnswer, base64_size, empty_answer

U64 = st.integers(0, 2**64 - 1)


def reference(records, next_offset: int, encode=base64.b64encode) -> bytes:
    answer = {"type": "FetchResponse",
              "records": [{"offset": o, "timestamp": t, "payload": encode(p).decode()} for o, t, p in records],
              "next_offset": next_offset}
    return json.dumps(answer, separators=(",", ":")).encode()


@given(st.lists(st.tuples(U64, U64, st.binary(max_size=40)), max_size=8), U64, st.booleans())
def test_answer_is_the_compact_json_of_its_records(records, next_offset, urlsafe):
    answer = FetchAnswer(None, urlsafe=urlsafe)
    for offset, timestamp, payload in records:
        assert answer.add(offset, timestamp, memoryview(payload))
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    assert bytes(answer.finish(next_offset)) == reference(records, next_offset, encode)
    assert answer.count == len(records)


@given(st.integers(0, 100))
def test_base64_size_is_the_encoded_length(length):
    assert base64_size(length) == len(base64.b64encode(bytes(length)))


def test_a_record_that_would_pass_the_frame_cap_is_refused_whole():
    first = len(b'{"offset":0,"timestamp":0,"payload":""}') + base64_size(30)
    answer = FetchAnswer(WRAPPER_MAX + first + 1 + first - 1)  # room for one record and a byte short of two
    assert answer.add(0, 0, bytes(30))
    assert not answer.add(0, 0, bytes(30))
    body = answer.finish(1)
    assert json.loads(body)["records"] == [{"offset": 0, "timestamp": 0, "payload": base64.b64encode(bytes(30)).decode()}]
    assert len(body) <= answer.max_frame


def test_empty_answer():
    assert json.loads(empty_answer(7)) == {"type": "FetchResponse", "records": [], "next_offset": 7}


def test_decoded_payloads_are_views_into_the_batch():
    payloads = [b"a", b"", b"xyz" * 100]
    batch = encode_batch(5, payloads)
    decoded = list(decode_batch(batch, 1))
    assert [(position, timestamp, bytes(view)) for position, timestamp, view in decoded] == \
        [(1, 5, b""), (2, 5, b"xyz" * 100)]
    assert all(isinstance(view, memoryview) and view.obj is batch for _, _, view in decoded)
