"""What a ConsumerGroupHeartbeat must carry (KIP-848; GroupMetadataManager.throwIfConsumerGroupHeartbeatRequest-
IsInvalid): a request that lacks it is refused before it touches any group. Also the error codes the KIP-848
coordinator answers, and :class:`Refused`, how its checks say so.
"""

from __future__ import annotations

import re

from wirecheck.broker.kafka import assignors
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.errors import (INVALID_REGULAR_EXPRESSION, INVALID_REQUEST, UNSUPPORTED_ASSIGNOR)


LEAVE, LEAVE_STATIC = -1, -2


class Refused(Exception):
    """A heartbeat answered with an error code and message instead of a membership."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def validate(req: dict, version: int, faults: KafkaFaults) -> None:
    name = req["ServerAssignor"]
    if name is not None and name not in assignors.ASSIGNORS \
            and not faults.consumer_group_assignor_unchecked:
        raise Refused(UNSUPPORTED_ASSIGNOR, f"ServerAssignor {name} is not supported. "
                                            f"Supported assignors: {', '.join(sorted(assignors.ASSIGNORS))}.")
    if faults.consumer_group_fields_unchecked:
        return
    epoch, member_id = req["MemberEpoch"], req["MemberId"]
    if not req["GroupId"]:
        raise Refused(INVALID_REQUEST, "GroupId can't be empty.")
    if req["InstanceId"] == "":
        raise Refused(INVALID_REQUEST, "InstanceId can't be empty.")
    if req["RackId"] == "":
        raise Refused(INVALID_REQUEST, "RackId can't be empty.")
    if not member_id and (version >= 1 or epoch != 0):  # v1: the client generates its member id (KIP-1082)
        raise Refused(INVALID_REQUEST, "MemberId can't be empty.")
    if epoch < LEAVE_STATIC:
        raise Refused(INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
    if epoch == LEAVE_STATIC and req["InstanceId"] is None:
        raise Refused(INVALID_REQUEST, "InstanceId can't be null when MemberEpoch is -2.")
    if epoch == 0:
        if req["RebalanceTimeoutMs"] <= 0:
            raise Refused(INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
        if req["TopicPartitions"]:
            raise Refused(INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
        if req["SubscribedTopicNames"] is None and req.get("SubscribedTopicRegex") is None:
            raise Refused(INVALID_REQUEST,
                          "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
    regex = req.get("SubscribedTopicRegex")
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            raise Refused(INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex {regex!r} is invalid: {exc}")
