"""The scapy face of a session: send layers, get dissected answer layers, with the session's transcript and deadlines.

``TargetSocket`` is a scapy ``SuperSocket`` over a framed :class:`targets.session.Session`, so a case writes::

    with TargetSocket.connect(address, spec, transcript) as target:
        answer = target.sr1(KafkaRequest(api_key=18, api_version=3) / ApiVersionsRequestV3())
        answer[ApiVersionsResponseV3].ErrorCode

Every byte still goes through the session (recorded, deadline-bound, classified); the answer is dissected by
the endpoint's ``dissect(answer, request)``, which gets the request it answers because a Kafka or Fluvio
response does not say what it answers. When no frame comes back, ``sr1`` returns None and ``last_reply`` says
what happened instead (closed, reset, silent, unframeable).

This path is for cases that build, show and step through messages. Bulk fuzzing sends bytes through the
session directly: building and dissecting a packet costs far more than the round trip (BENCHMARKS.md).
"""

from __future__ import annotations

import ssl
import time
from collections import deque
from collections.abc import Sequence

from scapy.data import MTU
from scapy.packet import Packet, Raw
from scapy.plist import PacketList, QueryAnswer, SndRcvList
from scapy.supersocket import SuperSocket

from wirecheck.protocols.spec import Endpoint, ProtocolSpec
from wirecheck.protocols.transcript import Transcript
from wirecheck.targets.session import FramedSession, Session
from wirecheck.targets.transport.outcome import Reply


class TargetSocket(SuperSocket):
    desc = "a wirecheck session: layers out, dissected answer layers in"

    def __init__(self, session: FramedSession):
        # SuperSocket.__init__ would open a socket of its own: this one reuses the target's, for fileno() only
        self.session = session
        self.ins = self.outs = session.stream.sock
        self.basecls = Raw
        self.dissect = session.endpoint.dissect
        self.last_reply: Reply | None = None
        self._unanswered: deque[bytes] = deque()  # requests sent, oldest first: answers come back in order

    @classmethod
    def connect(cls, address: tuple[str, int], spec: ProtocolSpec | Endpoint, transcript: Transcript,
                deadline: float = 2.0, connect_timeout: float = 3.0, tls: ssl.SSLContext | None = None,
                server_hostname: str | None = None) -> "TargetSocket":
        return cls(Session(address, spec, transcript, deadline=deadline, connect_timeout=connect_timeout, tls=tls,
                           server_hostname=server_hostname))

    @property
    def transcript(self) -> Transcript:
        return self.session.transcript

    def send(self, x: Packet | bytes) -> int:
        """Send one whole frame (a layer or bytes); the bytes sent, 0 if the peer has gone."""
        data = bytes(x)
        if isinstance(x, Packet):
            x.sent_time = time.time()
        if not self.session.send(data):
            return 0
        self._unanswered.append(data)
        return len(data)

    def recv(self, x: int = MTU, deadline: float | None = None, **kwargs) -> Packet | None:
        """The next answer, dissected against the oldest unanswered request; None when no frame came within
        ``deadline`` (the session's default when None): ``last_reply`` says what happened instead."""
        reply = self.session.recv(deadline)
        self.last_reply = reply
        if not reply.is_frame:
            return None
        request = self._unanswered.popleft() if self._unanswered else None
        answer = self._dissect(reply.frame, request)
        answer.time = time.time()
        return answer

    def _dissect(self, frame: bytes, request: bytes | None) -> Packet:
        """The endpoint's layer for ``frame``; Raw when it has none or when the bytes defeat it (a hostile
        answer is data for the case, not a crash of the harness)."""
        if self.dissect is None:
            return Raw(frame)
        try:
            return self.dissect(frame, request)
        except Exception as exc:  # noqa: BLE001 - scapy raises struct.error and friends on short fields
            self.transcript.note(f"answer not dissected ({type(exc).__name__}: {exc}); kept as Raw")
            return Raw(frame)

    def sr1(self, x: Packet | bytes, timeout: float | None = None, **kwargs) -> Packet | None:
        """Send one frame and return its dissected answer (None: see ``last_reply``). ``timeout`` is the
        deadline in seconds for the answer (the session's default when None)."""
        self.send(x)  # a failed send records the reset; recv then reports it
        return self.recv(deadline=timeout)

    def sr(self, x: Packet | bytes | Sequence[Packet | bytes], timeout: float | None = None,
           **kwargs) -> tuple[SndRcvList, PacketList]:
        """Pipeline every frame of ``x``, then read one answer each, in order. Returns (answered pairs,
        unanswered requests) as scapy's ``sr`` does (a frame given as bytes is there as a Raw layer); reading
        stops at the first missing answer."""
        given = list(x) if isinstance(x, (list, tuple)) or (isinstance(x, Packet) and x.__iterlen__() > 1) \
            else [x]
        packets = [packet if isinstance(packet, Packet) else Raw(packet) for packet in given]
        for packet in packets:
            self.send(packet)
        answered, unanswered = [], []
        for packet in packets:
            answer = self.recv(deadline=timeout) if not unanswered else None
            if answer is None:
                unanswered.append(packet)
            else:
                answered.append(QueryAnswer(packet, answer))
        return SndRcvList(answered), PacketList(unanswered, "Unanswered")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.session.close()
