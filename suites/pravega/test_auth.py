"""Delegation tokens (notes §7.2, §7.6). A target that accepts any token (auth off, the reference broker's default)
makes these cases UNIMPLEMENTED; with ``--target-option pravega.token=TOKEN`` the suite sends that token in its
valid requests and a wrong one here."""

import uuid

import pytest

from wirecheck.protocols.verdicts import Unimplemented
from wirecheck.suites.pravega.client import Pravega, new_segment, segment_name

case = pytest.mark.case
WRONG = "wirecheck-wrong-token"


def rejected(client: Pravega, rid: int, allowed_ids=()) -> None:
    answer = client.receive("pravega.auth.token-rejected")
    if answer.name != "AuthTokenCheckFailed":
        raise Unimplemented(f"the target accepted a wrong delegation token ({answer.name})")
    if answer["request_id"] not in (rid, *allowed_ids):
        raise client.diverge("pravega.request-id.echo", f"requestId {rid}", str(answer["request_id"]))
    if answer["error_code"] not in (0, 1, -1):
        raise client.diverge("pravega.auth.token-rejected", "errorCode 0 or 1", str(answer["error_code"]))
    client.stays_open("pravega.auth.token-rejected")


@case("pravega.auth.token-rejected")
@pytest.mark.parametrize("command", ["CreateSegment", "GetStreamSegmentInfo", "SealSegment", "CreateTableSegment"])
def test_wrong_token_is_rejected(target, command):
    client = Pravega(target)
    name = segment_name(target)
    values = {"target_rate": 0, "scale_type": 0} if command == "CreateSegment" else {}
    rid = client.send(command, segment=name, delegation_token=WRONG, **values)
    rejected(client, rid)


@case("pravega.auth.token-rejected")
def test_wrong_token_on_setup_append(target):
    client, name = new_segment(target)
    rid = client.send("SetupAppend", writer_id=uuid.uuid4(), segment=name, delegation_token=WRONG)
    rejected(client, rid)


@case("pravega.auth.token-rejected")
def test_wrong_token_on_read(target):
    client, name = new_segment(target, data=[b"x"])
    rid = client.send("ReadSegment", segment=name, offset=0, suggested_length=10, delegation_token=WRONG)
    rejected(client, rid, allowed_ids=(0,))  # A16: upstream puts the read's offset (0 here) in the requestId
