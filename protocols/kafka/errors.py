"""Kafka error codes: code -> name and whether a client may retry, as data.

Source: Apache Kafka ``clients/src/main/java/org/apache/kafka/common/protocol/Errors.java`` (codes and names;
an error is retriable when its exception extends ``RetriableException``), as tabulated by kio 0.6.5's
generated ``kio.schema.errors.ErrorCode``. (kafka-python's ``kafka/errors.py`` renames a few, e.g.
MESSAGE_SIZE_TOO_LARGE for MESSAGE_TOO_LARGE; we keep Kafka's names.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCode:
    code: int
    name: str
    retriable: bool


#: (code, name, retriable)
_TABLE = [
    (-1, 'UNKNOWN_SERVER_ERROR', False),
    (0, 'NONE', False),
    (1, 'OFFSET_OUT_OF_RANGE', False),
    (2, 'CORRUPT_MESSAGE', True),
    (3, 'UNKNOWN_TOPIC_OR_PARTITION', True),
    (4, 'INVALID_FETCH_SIZE', False),
    (5, 'LEADER_NOT_AVAILABLE', True),
    (6, 'NOT_LEADER_OR_FOLLOWER', True),
    (7, 'REQUEST_TIMED_OUT', True),
    (8, 'BROKER_NOT_AVAILABLE', False),
    (9, 'REPLICA_NOT_AVAILABLE', True),
    (10, 'MESSAGE_TOO_LARGE', False),
    (11, 'STALE_CONTROLLER_EPOCH', False),
    (12, 'OFFSET_METADATA_TOO_LARGE', False),
    (13, 'NETWORK_EXCEPTION', True),
    (14, 'COORDINATOR_LOAD_IN_PROGRESS', True),
    (15, 'COORDINATOR_NOT_AVAILABLE', True),
    (16, 'NOT_COORDINATOR', True),
    (17, 'INVALID_TOPIC_EXCEPTION', False),
    (18, 'RECORD_LIST_TOO_LARGE', False),
    (19, 'NOT_ENOUGH_REPLICAS', True),
    (20, 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', True),
    (21, 'INVALID_REQUIRED_ACKS', False),
    (22, 'ILLEGAL_GENERATION', False),
    (23, 'INCONSISTENT_GROUP_PROTOCOL', False),
    (24, 'INVALID_GROUP_ID', False),
    (25, 'UNKNOWN_MEMBER_ID', False),
    (26, 'INVALID_SESSION_TIMEOUT', False),
    (27, 'REBALANCE_IN_PROGRESS', False),
    (28, 'INVALID_COMMIT_OFFSET_SIZE', False),
    (29, 'TOPIC_AUTHORIZATION_FAILED', False),
    (30, 'GROUP_AUTHORIZATION_FAILED', False),
    (31, 'CLUSTER_AUTHORIZATION_FAILED', False),
    (32, 'INVALID_TIMESTAMP', False),
    (33, 'UNSUPPORTED_SASL_MECHANISM', False),
    (34, 'ILLEGAL_SASL_STATE', False),
    (35, 'UNSUPPORTED_VERSION', False),
    (36, 'TOPIC_ALREADY_EXISTS', False),
    (37, 'INVALID_PARTITIONS', False),
    (38, 'INVALID_REPLICATION_FACTOR', False),
    (39, 'INVALID_REPLICA_ASSIGNMENT', False),
    (40, 'INVALID_CONFIG', False),
    (41, 'NOT_CONTROLLER', True),
    (42, 'INVALID_REQUEST', False),
    (43, 'UNSUPPORTED_FOR_MESSAGE_FORMAT', False),
    (44, 'POLICY_VIOLATION', False),
    (45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', False),
    (46, 'DUPLICATE_SEQUENCE_NUMBER', False),
    (47, 'INVALID_PRODUCER_EPOCH', False),
    (48, 'INVALID_TXN_STATE', False),
    (49, 'INVALID_PRODUCER_ID_MAPPING', False),
    (50, 'INVALID_TRANSACTION_TIMEOUT', False),
    (51, 'CONCURRENT_TRANSACTIONS', True),
    (52, 'TRANSACTION_COORDINATOR_FENCED', False),
    (53, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', False),
    (54, 'SECURITY_DISABLED', False),
    (55, 'OPERATION_NOT_ATTEMPTED', False),
    (56, 'KAFKA_STORAGE_ERROR', True),
    (57, 'LOG_DIR_NOT_FOUND', False),
    (58, 'SASL_AUTHENTICATION_FAILED', False),
    (59, 'UNKNOWN_PRODUCER_ID', False),
    (60, 'REASSIGNMENT_IN_PROGRESS', False),
    (61, 'DELEGATION_TOKEN_AUTH_DISABLED', False),
    (62, 'DELEGATION_TOKEN_NOT_FOUND', False),
    (63, 'DELEGATION_TOKEN_OWNER_MISMATCH', False),
    (64, 'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED', False),
    (65, 'DELEGATION_TOKEN_AUTHORIZATION_FAILED', False),
    (66, 'DELEGATION_TOKEN_EXPIRED', False),
    (67, 'INVALID_PRINCIPAL_TYPE', False),
    (68, 'NON_EMPTY_GROUP', False),
    (69, 'GROUP_ID_NOT_FOUND', False),
    (70, 'FETCH_SESSION_ID_NOT_FOUND', True),
    (71, 'INVALID_FETCH_SESSION_EPOCH', True),
    (72, 'LISTENER_NOT_FOUND', True),
    (73, 'TOPIC_DELETION_DISABLED', False),
    (74, 'FENCED_LEADER_EPOCH', True),
    (75, 'UNKNOWN_LEADER_EPOCH', True),
    (76, 'UNSUPPORTED_COMPRESSION_TYPE', False),
    (77, 'STALE_BROKER_EPOCH', False),
    (78, 'OFFSET_NOT_AVAILABLE', True),
    (79, 'MEMBER_ID_REQUIRED', False),
    (80, 'PREFERRED_LEADER_NOT_AVAILABLE', True),
    (81, 'GROUP_MAX_SIZE_REACHED', False),
    (82, 'FENCED_INSTANCE_ID', False),
    (83, 'ELIGIBLE_LEADERS_NOT_AVAILABLE', True),
    (84, 'ELECTION_NOT_NEEDED', True),
    (85, 'NO_REASSIGNMENT_IN_PROGRESS', False),
    (86, 'GROUP_SUBSCRIBED_TO_TOPIC', False),
    (87, 'INVALID_RECORD', False),
    (88, 'UNSTABLE_OFFSET_COMMIT', True),
    (89, 'THROTTLING_QUOTA_EXCEEDED', True),
    (90, 'PRODUCER_FENCED', False),
    (91, 'RESOURCE_NOT_FOUND', False),
    (92, 'DUPLICATE_RESOURCE', False),
    (93, 'UNACCEPTABLE_CREDENTIAL', False),
    (94, 'INCONSISTENT_VOTER_SET', False),
    (95, 'INVALID_UPDATE_VERSION', False),
    (96, 'FEATURE_UPDATE_FAILED', False),
    (97, 'PRINCIPAL_DESERIALIZATION_FAILURE', False),
    (98, 'SNAPSHOT_NOT_FOUND', False),
    (99, 'POSITION_OUT_OF_RANGE', False),
    (100, 'UNKNOWN_TOPIC_ID', True),
    (101, 'DUPLICATE_BROKER_REGISTRATION', False),
    (102, 'BROKER_ID_NOT_REGISTERED', False),
    (103, 'INCONSISTENT_TOPIC_ID', True),
    (104, 'INCONSISTENT_CLUSTER_ID', False),
    (105, 'TRANSACTIONAL_ID_NOT_FOUND', False),
    (106, 'FETCH_SESSION_TOPIC_ID_ERROR', True),
    (107, 'INELIGIBLE_REPLICA', False),
    (108, 'NEW_LEADER_ELECTED', False),
    (109, 'OFFSET_MOVED_TO_TIERED_STORAGE', False),
    (110, 'FENCED_MEMBER_EPOCH', False),
    (111, 'UNRELEASED_INSTANCE_ID', False),
    (112, 'UNSUPPORTED_ASSIGNOR', False),
    (113, 'STALE_MEMBER_EPOCH', False),
    (114, 'MISMATCHED_ENDPOINT_TYPE', False),
    (115, 'UNSUPPORTED_ENDPOINT_TYPE', False),
    (116, 'UNKNOWN_CONTROLLER_ID', False),
    (117, 'UNKNOWN_SUBSCRIPTION_ID', False),
    (118, 'TELEMETRY_TOO_LARGE', False),
    (119, 'INVALID_REGISTRATION', False),
    (120, 'TRANSACTION_ABORTABLE', False),
    (121, 'INVALID_RECORD_STATE', False),
    (122, 'SHARE_SESSION_NOT_FOUND', True),
    (123, 'INVALID_SHARE_SESSION_EPOCH', True),
    (124, 'FENCED_STATE_EPOCH', False),
    (125, 'INVALID_VOTER_KEY', False),
    (126, 'DUPLICATE_VOTER', False),
    (127, 'VOTER_NOT_FOUND', False),
    (128, 'INVALID_REGULAR_EXPRESSION', False),
    (129, 'REBOOTSTRAP_REQUIRED', False),
    (130, 'STREAMS_INVALID_TOPOLOGY', False),
    (131, 'STREAMS_INVALID_TOPOLOGY_EPOCH', False),
    (132, 'STREAMS_TOPOLOGY_FENCED', False),
    (133, 'SHARE_SESSION_LIMIT_REACHED', True),
]

BY_CODE: dict[int, ErrorCode] = {code: ErrorCode(code, name, retriable) for code, name, retriable in _TABLE}
BY_NAME: dict[str, ErrorCode] = {e.name: e for e in BY_CODE.values()}

NONE = 0
UNKNOWN_SERVER_ERROR = -1
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
MESSAGE_TOO_LARGE = 10
RECORD_LIST_TOO_LARGE = 18
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUIRED_ACKS = 21
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REQUEST = 42
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TRANSACTION_TIMEOUT = 50
CONCURRENT_TRANSACTIONS = 51
FETCH_SESSION_ID_NOT_FOUND = 70
PRODUCER_FENCED = 90
UNSUPPORTED_COMPRESSION_TYPE = 76
MEMBER_ID_REQUIRED = 79
INVALID_RECORD = 87
UNSTABLE_OFFSET_COMMIT = 88
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
INVALID_CONFIG = 40
POLICY_VIOLATION = 44
SASL_AUTHENTICATION_FAILED = 58
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
GROUP_SUBSCRIBED_TO_TOPIC = 86
TRANSACTION_ABORTABLE = 120


def name(code: int) -> str:
    """The error's name, or ``UNKNOWN_CODE_<n>`` for a code outside the table."""
    entry = BY_CODE.get(code)
    return entry.name if entry else f"UNKNOWN_CODE_{code}"


def is_retriable(code: int) -> bool:
    entry = BY_CODE.get(code)
    return bool(entry and entry.retriable)


def _check_constants() -> None:
    for constant, value in list(globals().items()):
        if constant.isupper() and isinstance(value, int) and constant not in ("NONE",):
            assert BY_CODE[value].name == constant, constant


_check_constants()

#: "Not yet": a server still getting ready (a coordinator not elected or loading, a new partition's leader not in
#: place, a transaction's markers still being written). Each is a RetriableException in Errors.java, and Kafka's
#: clients ask the same request again after a backoff (suites/kafka/client.py names the lines); an answer of these
#: says when, not what
NOT_YET = frozenset({UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER,
                     COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
                     CONCURRENT_TRANSACTIONS})

#: an ACL said no: the client lacks a permission, which no clause can require of a server
AUTHORIZATION_FAILURES = frozenset({29, 30, 31, 53})  # topic, group, cluster, transactional id


def error_codes(value) -> set[int]:
    """Every ErrorCode anywhere in a decoded body (top level, per topic, per partition)."""
    found = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "ErrorCode" and isinstance(item, int):
                found.add(item)
            else:
                found |= error_codes(item)
    elif isinstance(value, list):
        for item in value:
            found |= error_codes(item)
    return found


def every_error_code(value) -> set[int]:
    """The codes of every field whose name ends in ErrorCode (PartitionErrorCode, AcknowledgeErrorCode, ...), not
    only of those named ErrorCode (:func:`error_codes`)."""
    if isinstance(value, dict):
        return {item for key, item in value.items() if key.endswith("ErrorCode") and isinstance(item, int)} | {
            code for key, item in value.items() if not key.endswith("ErrorCode") for code in every_error_code(item)}
    if isinstance(value, list):
        return {code for item in value for code in every_error_code(item)}
    return set()
