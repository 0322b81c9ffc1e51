"""A FetchResponse payload encoded straight into one buffer, record by record.

The answer is built by hand, not with ``json.dumps``, so that its encoded size is known before each record is added
(D6: the frame never exceeds MAX_FRAME). Each record is written into the buffer as soon as it is read, so no
Python object per record outlives that record: an answer of tens of thousands of small records would otherwise
hold as many small objects at once, and the allocator keeps the arenas they filled after the answer is sent
(issue 31: the broker's memory must be bounded by its settings, not by what it served).

The wrapper, with a 20-digit next_offset, plus one entry with two 20-digit numbers, costs 149 bytes besides the
payload's base64; the largest record's base64 (produce.MAX_RECORD: 10,485,336 bytes) leaves room in MAX_FRAME.

Memory: the buffer (at most the frame) and, while a record is added, that record's base64; the allocator may keep
one freed buffer's worth for the next answer, so the slack is bounded by ``--max-frame``, not by the data.
"""

from __future__ import annotations

import binascii

HEAD = b'{"type":"FetchResponse","records":['
TAIL = b'],"next_offset":%d}'
ENTRY_HEAD = b'{"offset":%d,"timestamp":%d,"payload":"'
ENTRY_TAIL = b'"}'
WRAPPER_MAX = len(HEAD) + len(TAIL % (2**64 - 1))
_URLSAFE = bytes.maketrans(b"+/", b"-_")  # base64.urlsafe_b64encode's alphabet


def base64_size(length: int) -> int:
    """Length of the padded standard (or URL-safe) base64 of ``length`` bytes."""
    return (length + 2) // 3 * 4


def empty_answer(next_offset: int) -> bytes:
    return HEAD + TAIL % next_offset


class FetchAnswer:
    """Records appended in order while they fit in ``max_frame`` (None: no cap, the fetch-exceeds-frame fault)."""

    def __init__(self, max_frame: int | None, urlsafe: bool = False):
        self.max_frame = max_frame
        self.urlsafe = urlsafe  # fault payload-base64url
        self.buffer = bytearray(HEAD)
        self.count = 0
        self.size = WRAPPER_MAX  # the bytes so far with the tail at its longest: what the cap is checked against

    def add(self, offset: int, timestamp: int, payload) -> bool:
        """Append one record (``payload`` any bytes-like object); False, and nothing appended, when it would
        take the answer over ``max_frame``."""
        head = ENTRY_HEAD % (offset, timestamp)
        grows = len(head) + base64_size(len(payload)) + len(ENTRY_TAIL) + (1 if self.count else 0)
        if self.max_frame is not None and self.size + grows > self.max_frame:
            return False
        buffer = self.buffer
        if self.count:
            buffer += b","
        buffer += head
        encoded = binascii.b2a_base64(payload, newline=False)  # what base64.b64encode returns, minus a wrapper
        buffer += encoded.translate(_URLSAFE) if self.urlsafe else encoded
        buffer += ENTRY_TAIL
        self.size += grows
        self.count += 1
        return True

    def finish(self, next_offset: int) -> bytearray:
        """The whole payload. A bytearray, handed on without a copy: the connection writes any bytes-like object."""
        self.buffer += TAIL % next_offset
        return self.buffer
