"""The same conversation a reader can step through with scapy layers (targets/adapter.py): Hello, a segment
created, one event appended, read back. Each answer is a dissected layer, shown in the transcript."""

import uuid

import pytest

from wirecheck.protocols.pravega import commands as cmd
from wirecheck.protocols.pravega.layers import (AppendBlockEnd, CreateSegment, Hello, PravegaFrame, ReadSegment, SegmentRead,
                                      SetupAppend)
from wirecheck.suites.pravega.client import Pravega, segment_name
from wirecheck.targets.adapter import TargetSocket

case = pytest.mark.case


def answer_of(client: Pravega, sock: TargetSocket, packet, clause: str, name: str):
    answer = sock.sr1(packet)
    if answer is None:
        raise client.diverge(clause, f"a {name}", str(sock.last_reply))
    if answer.type != cmd.CODE[name]:
        raise client.diverge(clause, f"a {name}", answer.summary())
    return answer


@case("pravega.hello.reply")
def test_hello_through_layers(target):
    client = Pravega(target)
    sock = TargetSocket(client.session)
    answer = answer_of(client, sock, PravegaFrame() / Hello(high_version=17, low_version=5), "pravega.hello.reply",
                       "Hello")
    if answer[Hello].high_version < answer[Hello].low_version:
        raise client.diverge("pravega.hello.reply", "lowVersion <= highVersion", answer.summary())


@case("pravega.append.stored-verbatim")
def test_append_and_read_through_layers(target):
    client = Pravega(target)
    sock = TargetSocket(client.session)
    name, writer, token = segment_name(target), uuid.uuid4(), client.token
    answer_of(client, sock, PravegaFrame() / CreateSegment(request_id=1, segment=name, delegation_token=token),
              "pravega.segment.create", "SegmentCreated")
    client.created(name)
    answer_of(client, sock, PravegaFrame() / SetupAppend(request_id=2, writer_id=writer, segment=name,
                                                         delegation_token=token), "pravega.append.setup", "AppendSetup")
    data = cmd.event(b"layered")
    answer_of(client, sock, PravegaFrame() / AppendBlockEnd(writer_id=writer, size_of_whole_events=len(data),
                                                            data=data, num_events=1, last_event_number=1,
                                                            request_id=3), "pravega.append.ack", "DataAppended")
    read = answer_of(client, sock, PravegaFrame() / ReadSegment(segment=name, offset=0, suggested_length=100,
                                                                delegation_token=token, request_id=4),
                     "pravega.read.in-range", "SegmentRead")
    got = read[SegmentRead].data
    if got != data:  # the read is only the probe: reads in pieces (each judged under read.in-range) tell which broke
        stored = client.read_all(name)
        if stored != data:
            raise client.diverge("pravega.append.stored-verbatim", data.hex(), stored.hex())
        if not got or not data.startswith(got):  # a non-empty prefix is a permitted short read
            raise client.diverge("pravega.read.in-range", f"a prefix of {data.hex()}", read.summary())
