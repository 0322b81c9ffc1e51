"""Request handlers: one coroutine per API, taking and returning plain dicts.

A handler returns the response body as a dict (encoded afterwards for the
request's version), None for "send nothing" (Produce acks=0), or raises
CloseConnection.
"""
from __future__ import annotations

import re
import struct
import time
import uuid
from dataclasses import dataclass

import crc32c

from . import errors as E
from . import records as R
from .defects import defect
from .groups import OFFSET_METADATA_MAX_BYTES, Coordinator
from .storage import MAX_MESSAGE_BYTES_DEFAULT, MAX_PARTITIONS, Storage, topic_name_problem

# api key -> (min version, max version) that this broker implements and advertises
SUPPORTED: dict[int, tuple[int, int]] = {
    0: (3, 10),   # Produce (v3 is the first with RecordBatch v2)
    1: (4, 12),   # Fetch (v4 is the first with RecordBatch v2; v13+ need topic ids)
    2: (1, 7),    # ListOffsets
    3: (0, 12),   # Metadata
    8: (2, 9),    # OffsetCommit
    9: (1, 9),    # OffsetFetch
    10: (0, 6),   # FindCoordinator
    11: (0, 9),   # JoinGroup
    12: (0, 4),   # Heartbeat
    13: (0, 5),   # LeaveGroup
    14: (0, 5),   # SyncGroup
    15: (0, 5),   # DescribeGroups
    16: (0, 4),   # ListGroups
    18: (0, 4),   # ApiVersions
    19: (2, 7),   # CreateTopics
}

NO_AUTHORIZED_OPS = -(2**31)
# AclOperation bit positions: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12
TOPIC_OPS = sum(1 << b for b in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPS = sum(1 << b for b in (5, 7, 8, 9, 10, 11, 12))
GROUP_OPS = sum(1 << b for b in (3, 6, 8))

SOFTWARE_RE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")

KNOWN_TOPIC_CONFIGS = {
    "cleanup.policy", "compression.type", "delete.retention.ms", "file.delete.delay.ms",
    "flush.messages", "flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
    "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
    "max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable",
    "message.format.version", "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.storage.enable",
    "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
    "segment.ms", "unclean.leader.election.enable",
}


class CloseConnection(Exception):
    """Close the connection without answering (Kafka's reaction to bad requests)."""


@dataclass
class Context:
    client_id: str
    client_host: str


def _now_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    def __init__(self, host: str, port: int, node_id: int = 0, auto_create: bool = True,
                 initial_rebalance_delay_ms: int = 0) -> None:
        self.host = host
        self.port = port
        self.node_id = node_id
        self.cluster_id = "indep-kafka-cluster"
        self.auto_create = auto_create
        self.storage = Storage()
        self.groups = Coordinator(initial_rebalance_delay_ms)

    # ================================================================ ApiVersions
    def api_versions_body(self, version: int, error: int = E.NONE) -> dict:
        keys = [] if error == E.INVALID_REQUEST else [
            {"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in sorted(SUPPORTED.items())
        ]
        return {"error_code": error, "api_keys": keys, "throttle_time": 0}

    async def api_versions(self, ctx: Context, v: int, req: dict) -> dict:
        if v >= 3:
            name = req.get("client_software_name") or ""
            ver = req.get("client_software_version") or ""
            if not SOFTWARE_RE.match(name) or not SOFTWARE_RE.match(ver):
                return self.api_versions_body(v, E.INVALID_REQUEST)
        return self.api_versions_body(v)

    # ================================================================ Metadata
    def _broker_entry(self) -> dict:
        port = self.port + 1 if defect("metadata-wrong-port") else self.port
        return {"node_id": self.node_id, "host": self.host, "port": port, "rack": None}

    def _topic_metadata(self, topic, v: int, include_ops: bool) -> dict:
        return {
            "error_code": E.NONE,
            "name": topic.name,
            "topic_id": topic.topic_id,
            "is_internal": False,
            "partitions": [
                {
                    "error_code": E.NONE,
                    "partition_index": p.index,
                    "leader_id": self.node_id,
                    "leader_epoch": p.leader_epoch,
                    "replica_nodes": [self.node_id],
                    "isr_nodes": [self.node_id],
                    "offline_replicas": [],
                }
                for p in topic.partitions
            ],
            "topic_authorized_operations": TOPIC_OPS if include_ops else NO_AUTHORIZED_OPS,
        }

    async def metadata(self, ctx: Context, v: int, req: dict) -> dict:
        include_ops = bool(req.get("include_topic_authorized_operations"))
        allow_create = self.auto_create and (v < 4 or bool(req.get("allow_auto_topic_creation", True)))
        requested = req.get("topics")
        out = []
        zero = uuid.UUID(int=0)
        if requested is None or (v == 0 and requested == []):
            out = [self._topic_metadata(t, v, include_ops) for t in self.storage.topics.values()]
        else:
            seen = set()
            for entry in requested:
                name = entry.get("name")
                tid = entry.get("topic_id")
                if name is None and tid is not None and tid != zero:
                    topic = self.storage.by_id.get(tid)
                    if topic is None:
                        # Name is nullable from v12 only: below it, an empty name (a null cannot be encoded)
                        out.append({"error_code": E.UNKNOWN_TOPIC_ID, "name": None if v >= 12 else "", "topic_id": tid,
                                    "is_internal": False, "partitions": [],
                                    "topic_authorized_operations": NO_AUTHORIZED_OPS})
                    else:
                        out.append(self._topic_metadata(topic, v, include_ops))
                    continue
                if name is None:
                    out.append({"error_code": E.INVALID_REQUEST, "name": None if v >= 12 else "", "topic_id": zero,
                                "is_internal": False, "partitions": [],
                                "topic_authorized_operations": NO_AUTHORIZED_OPS})
                    continue
                if name in seen:
                    continue
                seen.add(name)
                topic = self.storage.topics.get(name)
                if topic is not None:
                    out.append(self._topic_metadata(topic, v, include_ops))
                    continue
                if topic_name_problem(name) is not None:
                    code = E.INVALID_TOPIC_EXCEPTION
                elif allow_create and self.storage.collides(name) is None:
                    self.storage.create(name, 1)
                    code = E.LEADER_NOT_AVAILABLE  # as Kafka answers right after auto-creating
                else:
                    code = E.UNKNOWN_TOPIC_OR_PARTITION if not allow_create else E.INVALID_TOPIC_EXCEPTION
                out.append({"error_code": code, "name": name, "topic_id": zero, "is_internal": False,
                            "partitions": [], "topic_authorized_operations": NO_AUTHORIZED_OPS})
        return {
            "throttle_time": 0,
            "brokers": [self._broker_entry()],
            "cluster_id": self.cluster_id,
            "controller_id": self.node_id,
            "topics": out,
            "cluster_authorized_operations": CLUSTER_OPS if req.get("include_cluster_authorized_operations") else NO_AUTHORIZED_OPS,
        }

    # ================================================================ Produce
    def _validate_and_append(self, v: int, topic_name: str, index: int, data: bytes | None, acks: int) -> dict:
        def result(code: int, base: int = -1, log_start: int = -1, msg: str | None = None) -> dict:
            if defect("log-start-offset-missing"):
                log_start = -1
            return {"index": index, "error_code": code, "base_offset": base, "log_append_time": -1,
                    "log_start_offset": log_start, "record_errors": [], "error_message": msg}

        topic = self.storage.topics.get(topic_name)
        part = self.storage.partition(topic_name, index)
        if topic is None or part is None:
            code = E.UNKNOWN_SERVER_ERROR if defect("unknown-topic-wrong-error") else E.UNKNOWN_TOPIC_OR_PARTITION
            return result(code)
        if acks not in (-1, 0, 1) and not defect("invalid-acks-accepted"):
            return result(E.INVALID_REQUIRED_ACKS)
        data = bytes(data or b"")
        try:
            try:
                R.split_single_batch(data)
            except R.InvalidBatch:
                if not (defect("multi-batch-accepted") and len(data) > R.HEADER_SIZE):
                    raise
                # defect: silently keep only the first batch
                (blen,) = struct.unpack_from(">i", data, 8)
                data = data[: R.LOG_OVERHEAD + blen]
                R.split_single_batch(data)
            if len(data) > topic.max_message_bytes:
                return result(E.MESSAGE_TOO_LARGE, msg=f"batch of {len(data)} bytes exceeds max.message.bytes")
            if not R.crc_ok(data) and not defect("crc-unchecked"):
                raise R.CorruptBatch("CRC-32C mismatch")
            batch = R.parse_batch(data, v)
            if batch.is_control:
                raise R.InvalidBatch("clients may not write control batches")
        except R.CorruptBatch as exc:
            return result(E.CORRUPT_MESSAGE, msg=str(exc))
        except R.UnsupportedCompression as exc:
            return result(E.UNSUPPORTED_COMPRESSION_TYPE, msg=str(exc))
        except R.InvalidBatch as exc:
            return result(E.INVALID_RECORD, msg=str(exc))
        if acks == -1 and topic.min_insync_replicas > 1:
            return result(E.NOT_ENOUGH_REPLICAS, msg="only one in-sync replica")
        append_time = -1
        if topic.log_append_time:
            append_time = _now_ms()
            _stamp_log_append_time(batch, append_time)
        base = part.append(batch)
        if not defect("client-base-offset-kept"):
            R.set_base_offset(batch, base, part.leader_epoch)
        reported = part.log_end_offset if defect("base-offset-wrong") else base
        out = result(E.NONE, reported, part.log_start_offset)
        out["log_append_time"] = append_time
        return out

    async def produce(self, ctx: Context, v: int, req: dict) -> dict | None:
        acks = req["acks"]
        responses = []
        any_error = False
        appended = False
        for td in req["topic_data"]:
            parts = []
            for pd in td["partition_data"]:
                r = self._validate_and_append(v, td["name"], pd["index"], pd["records"], acks)
                any_error |= r["error_code"] != E.NONE
                appended |= r["error_code"] == E.NONE
                parts.append(r)
            responses.append({"name": td["name"], "partition_responses": parts})
        if appended:
            self.storage.notify_append()
        if acks == 0 and not defect("acks0-responds"):
            if any_error:
                raise CloseConnection("acks=0 produce had an error")  # so the client refreshes metadata
            return None
        return {"responses": responses, "throttle_time": 0}

    # ================================================================ Fetch
    def _read_partition(self, topic_name: str, p: dict, isolation: int, budget: list[int]) -> dict:
        index = p["partition"]
        part = self.storage.partition(topic_name, index)

        def result(code: int, hw: int = -1, lso: int = -1, start: int = -1, recs: bytes = b"") -> dict:
            if defect("hw-off-by-one") and hw >= 0:
                hw += 1
            if defect("log-start-offset-missing"):
                start = -1
            return {
                "partition_index": index, "error_code": code, "high_watermark": hw,
                "last_stable_offset": lso, "log_start_offset": start,
                "aborted_transactions": [] if isolation == 1 else None,
                "preferred_read_replica": -1, "records": recs,
            }

        if part is None:
            code = E.UNKNOWN_SERVER_ERROR if defect("unknown-topic-wrong-error") else E.UNKNOWN_TOPIC_OR_PARTITION
            return result(code)
        epoch = p.get("current_leader_epoch", -1)
        if epoch > part.leader_epoch:
            return result(E.UNKNOWN_LEADER_EPOCH)
        if 0 <= epoch < part.leader_epoch:
            return result(E.FENCED_LEADER_EPOCH)
        hw = part.high_watermark
        offset = p["fetch_offset"]
        if (offset < part.log_start_offset or offset > hw) and not defect("fetch-out-of-range-silent"):
            return result(E.OFFSET_OUT_OF_RANGE, hw, hw, part.log_start_offset)
        limit = max(0, p["partition_max_bytes"])
        chunks = []
        size = 0
        for _base, batch in part.batches_from(offset):
            n = len(batch.raw)
            first_data = budget[1] == 0 and size == 0  # KIP-74: the first batch always goes out
            if not first_data and (size + n > limit or n > budget[0]):
                break
            chunks.append(bytes(batch.raw))
            size += n
            budget[0] -= n
            budget[1] += n
        return result(E.NONE, hw, hw, part.log_start_offset, b"".join(chunks))

    def _fetch_once(self, req: dict) -> tuple[list[dict], int, bool]:
        budget = [max(0, req.get("max_bytes", 2**31 - 1)), 0]  # [remaining, bytes so far]
        isolation = req.get("isolation_level", 0)
        responses = []
        had_error = False
        for t in req["topics"]:
            parts = []
            for p in t["partitions"]:
                r = self._read_partition(t["topic"], p, isolation, budget)
                had_error |= r["error_code"] != E.NONE
                parts.append(r)
            responses.append({"topic": t["topic"], "partitions": parts})
        return responses, budget[1], had_error

    async def fetch(self, ctx: Context, v: int, req: dict) -> dict:
        session_id = req.get("session_id", 0)
        epoch = req.get("session_epoch", -1)
        if v >= 7 and epoch not in (0, -1):
            # we never create fetch sessions (KIP-227 lets a broker decline), so incremental fetches miss
            return {"throttle_time": 0, "error_code": E.FETCH_SESSION_ID_NOT_FOUND, "session_id": 0, "responses": []}
        max_wait_ms = req["max_wait"]
        min_bytes = req["min_bytes"]
        loop_deadline = time.monotonic() + max(0, max_wait_ms) / 1000
        while True:
            responses, nbytes, had_error = self._fetch_once(req)
            remaining = loop_deadline - time.monotonic()
            if nbytes >= min_bytes or had_error or remaining <= 0 or not req["topics"] or defect("fetch-no-wait"):
                break
            await self.storage.wait_for_append(remaining)
        del session_id
        return {"throttle_time": 0, "error_code": E.NONE, "session_id": 0, "responses": responses}

    # ================================================================ ListOffsets
    async def list_offsets(self, ctx: Context, v: int, req: dict) -> dict:
        seen: dict[tuple[str, int], int] = {}
        for t in req["topics"]:
            for p in t["partitions"]:
                key = (t["name"], p["partition_index"])
                seen[key] = seen.get(key, 0) + 1
        topics = []
        for t in req["topics"]:
            parts = []
            for p in t["partitions"]:
                parts.append(self._list_offset(t["name"], p, seen[(t["name"], p["partition_index"])] > 1))
            topics.append({"name": t["name"], "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    def _list_offset(self, topic: str, p: dict, duplicate: bool) -> dict:
        index = p["partition_index"]

        def result(code: int, ts: int = -1, off: int = -1, epoch: int = -1) -> dict:
            return {"partition_index": index, "error_code": code, "timestamp": ts, "offset": off,
                    "leader_epoch": epoch, "old_style_offsets": []}

        if duplicate:
            return result(E.INVALID_REQUEST)
        part = self.storage.partition(topic, index)
        if part is None:
            return result(E.UNKNOWN_SERVER_ERROR if defect("unknown-topic-wrong-error") else E.UNKNOWN_TOPIC_OR_PARTITION)
        epoch = p.get("current_leader_epoch", -1)
        if epoch > part.leader_epoch:
            return result(E.UNKNOWN_LEADER_EPOCH)
        if 0 <= epoch < part.leader_epoch:
            return result(E.FENCED_LEADER_EPOCH)
        ts = p["timestamp"]
        if ts == -1:  # LATEST: the high watermark (= last stable offset here)
            off = part.high_watermark - 1 if defect("listoffsets-latest-off-by-one") else part.high_watermark
            return result(E.NONE, -1, off, part.leader_epoch)
        if ts == -2:  # EARLIEST
            return result(E.NONE, -1, part.log_start_offset, part.leader_epoch)
        if ts == -3:  # MAX_TIMESTAMP
            mts, moff = part.max_timestamp()
            return result(E.NONE, mts, moff, part.leader_epoch if moff >= 0 else -1)
        fts, foff = part.offset_for_timestamp(ts)
        return result(E.NONE, fts, foff, part.leader_epoch if foff >= 0 else -1)

    # ================================================================ CreateTopics
    async def create_topics(self, ctx: Context, v: int, req: dict) -> dict:
        names = [t["name"] for t in req["topics"]]
        out = []
        for t in req["topics"]:
            out.append(self._create_one(v, t, names.count(t["name"]) > 1, bool(req.get("validate_only"))))
        return {"throttle_time": 0, "topics": out}

    def _create_one(self, v: int, t: dict, duplicate: bool, validate_only: bool) -> dict:
        name = t["name"]
        zero = uuid.UUID(int=0)

        def fail(code: int, msg: str) -> dict:
            return {"name": name, "topic_id": zero, "error_code": code, "error_message": msg,
                    "num_partitions": -1, "replication_factor": -1, "configs": None}

        if duplicate:
            return fail(E.INVALID_REQUEST, "topic appears more than once in the request")
        problem = topic_name_problem(name)
        if problem:
            return fail(E.INVALID_TOPIC_EXCEPTION, problem)
        if name in self.storage.topics and not defect("createtopics-duplicate-accepted"):
            return fail(E.TOPIC_ALREADY_EXISTS, f"topic '{name}' already exists")
        other = self.storage.collides(name)
        if other is not None:
            return fail(E.INVALID_TOPIC_EXCEPTION, f"topic '{name}' collides with existing topic '{other}'")
        nparts = t["num_partitions"]
        rf = t["replication_factor"]
        assignments = t.get("assignments") or []
        if assignments:
            if nparts != -1 or rf != -1:
                return fail(E.INVALID_REQUEST, "both assignments and num_partitions/replication_factor given")
            indexes = sorted(a["partition_index"] for a in assignments)
            if indexes != list(range(len(assignments))):
                return fail(E.INVALID_REPLICA_ASSIGNMENT, "partitions must be numbered 0..n-1")
            for a in assignments:
                ids = a.get("broker_ids") or []
                if not ids or len(set(ids)) != len(ids):
                    return fail(E.INVALID_REPLICA_ASSIGNMENT, "empty or duplicate replica list")
                if any(b != self.node_id for b in ids):
                    return fail(E.INVALID_REPLICA_ASSIGNMENT, f"unknown broker id; the only broker is {self.node_id}")
            nparts = len(assignments)
            rf = len(assignments[0]["broker_ids"])
        else:
            if nparts == -1 and v >= 4:
                nparts = 1  # num.partitions default
            if nparts < 1:
                return fail(E.INVALID_PARTITIONS, f"number of partitions must be at least 1, got {nparts}")
            if nparts > MAX_PARTITIONS:
                return fail(E.INVALID_PARTITIONS, f"this broker allows at most {MAX_PARTITIONS} partitions")
            if rf == -1 and v >= 4:
                rf = 1  # default.replication.factor
            if rf < 1:
                return fail(E.INVALID_REPLICATION_FACTOR, f"replication factor must be at least 1, got {rf}")
            if rf > 1 and not defect("createtopics-rf-unchecked"):
                return fail(E.INVALID_REPLICATION_FACTOR, f"replication factor {rf} is larger than the 1 available broker")
        configs: dict[str, str] = {}
        for c in t.get("configs") or []:
            if c["value"] is None:
                return fail(E.INVALID_REQUEST, f"null value for config {c['name']}")
            problem = _config_problem(c["name"], c["value"])
            if problem:
                return fail(E.INVALID_CONFIG, problem)
            configs[c["name"]] = c["value"]
        if validate_only:
            tid = zero
        else:
            if name in self.storage.topics:  # only with createtopics-duplicate-accepted
                tid = self.storage.topics[name].topic_id
            else:
                tid = self.storage.create(name, nparts, configs).topic_id
        return {
            "name": name, "topic_id": tid, "error_code": E.NONE, "error_message": None,
            "num_partitions": nparts, "replication_factor": rf,
            "configs": [
                {"name": k, "value": val, "read_only": False, "config_source": 1, "is_sensitive": False}
                for k, val in sorted(configs.items())
            ],
        }

    # ================================================================ FindCoordinator
    async def find_coordinator(self, ctx: Context, v: int, req: dict) -> dict:
        key_type = req.get("key_type", 0)

        def answer(key: str) -> tuple[int, str | None]:
            if key_type == 0:
                return E.NONE, None
            if key_type == 1:
                return E.COORDINATOR_NOT_AVAILABLE, "transactions are not supported by this broker"
            return E.INVALID_REQUEST, f"unknown coordinator key type {key_type}"

        if v <= 3:
            code, msg = answer(req["key"])
            ok = code == E.NONE
            return {"throttle_time": 0, "error_code": code, "error_message": msg,
                    "node_id": self.node_id if ok else -1, "host": self.host if ok else "",
                    "port": self.port if ok else -1}
        coords = []
        for key in req.get("coordinator_keys") or []:
            code, msg = answer(key)
            ok = code == E.NONE
            coords.append({"key": key, "node_id": self.node_id if ok else -1, "host": self.host if ok else "",
                           "port": self.port if ok else -1, "error_code": code, "error_message": msg})
        return {"throttle_time": 0, "coordinators": coords}

    # ================================================================ groups
    async def join_group(self, ctx: Context, v: int, req: dict) -> dict:
        session = req["session_timeout"]
        rebalance = req.get("rebalance_timeout", -1) if v >= 1 else session
        if rebalance < 0:
            rebalance = session
        r = await self.groups.join(
            version=v,
            group_id=req["group_id"],
            member_id=req["member_id"],
            instance_id=req.get("group_instance_id"),
            protocol_type=req["protocol_type"],
            protocols=[(p["name"], p["metadata"]) for p in req["protocols"]],
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            client_id=ctx.client_id,
            client_host=ctx.client_host,
        )
        return {
            "throttle_time": 0,
            "error_code": r.error,
            "generation_id": r.generation,
            "protocol_type": r.protocol_type,
            "protocol_name": r.protocol_name if (r.protocol_name is not None or v >= 7) else "",
            "leader": r.leader,
            "skip_assignment": False,
            "member_id": r.member_id,
            "members": r.members,
        }

    async def sync_group(self, ctx: Context, v: int, req: dict) -> dict:
        code, assignment = await self.groups.sync(
            group_id=req["group_id"],
            generation=req["generation_id"],
            member_id=req["member_id"],
            instance_id=req.get("group_instance_id"),
            protocol_type=req.get("protocol_type"),
            protocol_name=req.get("protocol_name"),
            assignments={a["member_id"]: a["assignment"] for a in req["assignments"]},
        )
        group = self.groups.groups.get(req["group_id"])
        ok = code == E.NONE and group is not None
        return {
            "throttle_time": 0,
            "error_code": code,
            "protocol_type": group.protocol_type if ok else None,
            "protocol_name": group.protocol_name if ok else None,
            "assignment": assignment,
        }

    async def heartbeat(self, ctx: Context, v: int, req: dict) -> dict:
        code = self.groups.heartbeat(
            group_id=req["group_id"], generation=req["generation_id"], member_id=req["member_id"],
            instance_id=req.get("group_instance_id"),
        )
        return {"throttle_time": 0, "error_code": code}

    async def leave_group(self, ctx: Context, v: int, req: dict) -> dict:
        gid = req["group_id"]
        if not gid:
            return {"throttle_time": 0, "error_code": E.INVALID_GROUP_ID, "members": []}
        if v <= 2:
            code = self.groups.leave(gid, req["member_id"], None)
            return {"throttle_time": 0, "error_code": code, "members": []}
        members = []
        for m in req["members"]:
            code = self.groups.leave(gid, m["member_id"], m.get("group_instance_id"))
            members.append({"member_id": m["member_id"], "group_instance_id": m.get("group_instance_id"),
                            "error_code": code})
        return {"throttle_time": 0, "error_code": E.NONE, "members": members}

    async def offset_commit(self, ctx: Context, v: int, req: dict) -> dict:
        gid = req["group_id"]
        generation = req.get("generation_id_or_member_epoch", -1)
        group_code = self.groups.commit_check(gid, generation, req.get("member_id", ""), req.get("group_instance_id"))
        topics = []
        for t in req["topics"]:
            parts = []
            for p in t["partitions"]:
                code = group_code
                if code == E.NONE:
                    meta = p.get("committed_metadata")
                    if self.storage.partition(t["name"], p["partition_index"]) is None:
                        code = E.UNKNOWN_TOPIC_OR_PARTITION
                    elif meta is not None and len(meta.encode()) > OFFSET_METADATA_MAX_BYTES:
                        code = E.OFFSET_METADATA_TOO_LARGE
                    else:
                        self.groups.store_offset(gid, t["name"], p["partition_index"], p["committed_offset"],
                                                 p.get("committed_leader_epoch", -1), meta)
                parts.append({"partition_index": p["partition_index"], "error_code": code})
            topics.append({"name": t["name"], "partitions": parts})
        return {"throttle_time": 0, "topics": topics}

    def _offsets_for(self, group_id: str, topics: list[dict] | None) -> list[dict]:
        stored = self.groups.fetch_offsets(group_id)
        if topics is None:
            wanted: dict[str, list[int]] = {}
            for (name, part) in sorted(stored):
                wanted.setdefault(name, []).append(part)
            topics = [{"name": n, "partition_indexes": ps} for n, ps in wanted.items()]
        out = []
        for t in topics:
            parts = []
            for idx in t["partition_indexes"]:
                o = stored.get((t["name"], idx))
                if o is None:
                    missing = 0 if defect("offsetfetch-missing-zero") else -1
                    parts.append({"partition_index": idx, "committed_offset": missing, "committed_leader_epoch": -1,
                                  "metadata": "", "error_code": E.NONE})
                else:
                    parts.append({"partition_index": idx, "committed_offset": o.offset,
                                  "committed_leader_epoch": o.leader_epoch,
                                  "metadata": o.metadata if o.metadata is not None else "", "error_code": E.NONE})
            out.append({"name": t["name"], "partitions": parts})
        return out

    async def offset_fetch(self, ctx: Context, v: int, req: dict) -> dict:
        if v >= 8:
            groups = [
                {"group_id": g["group_id"], "topics": self._offsets_for(g["group_id"], g.get("topics")),
                 "error_code": E.NONE}
                for g in req["groups"]
            ]
            return {"throttle_time": 0, "groups": groups}
        return {"throttle_time": 0, "topics": self._offsets_for(req["group_id"], req.get("topics")),
                "error_code": E.NONE}

    async def describe_groups(self, ctx: Context, v: int, req: dict) -> dict:
        ops = GROUP_OPS if req.get("include_authorized_operations") else NO_AUTHORIZED_OPS
        out = []
        for gid in req["groups"]:
            d = self.groups.describe(gid)
            d.update({"error_code": E.NONE, "group_id": gid, "authorized_operations": ops})
            out.append(d)
        return {"throttle_time": 0, "groups": out}

    async def list_groups(self, ctx: Context, v: int, req: dict) -> dict:
        wanted = {s.lower() for s in (req.get("states_filter") or [])}
        out = []
        for g in self.groups.list():
            if wanted and g.state.lower() not in wanted:
                continue
            out.append({"group_id": g.group_id, "protocol_type": g.protocol_type or "", "group_state": g.state})
        return {"throttle_time": 0, "error_code": E.NONE, "groups": out}

    # ================================================================ dispatch table
    def handler(self, api_key: int):
        return {
            0: self.produce, 1: self.fetch, 2: self.list_offsets, 3: self.metadata,
            8: self.offset_commit, 9: self.offset_fetch, 10: self.find_coordinator,
            11: self.join_group, 12: self.heartbeat, 13: self.leave_group, 14: self.sync_group,
            15: self.describe_groups, 16: self.list_groups, 18: self.api_versions, 19: self.create_topics,
        }[api_key]


def _stamp_log_append_time(batch: R.Batch, now_ms: int) -> None:
    """message.timestamp.type=LogAppendTime: set the timestamp-type bit and maxTimestamp, re-CRC."""
    raw = batch.raw
    attrs = struct.unpack_from(">h", raw, 21)[0] | 0x08
    struct.pack_into(">h", raw, 21, attrs)
    struct.pack_into(">q", raw, 35, now_ms)
    struct.pack_into(">I", raw, 17, crc32c.crc32c(memoryview(raw)[21:]))
    batch.attributes = attrs
    batch.timestamps = [now_ms] * batch.record_count


def _config_problem(name: str, value: str) -> str | None:
    if name not in KNOWN_TOPIC_CONFIGS:
        return f"unknown topic config '{name}'"
    try:
        if name == "max.message.bytes" and int(value) < 0:
            return "max.message.bytes must be >= 0"
        if name == "min.insync.replicas" and int(value) < 1:
            return "min.insync.replicas must be >= 1"
    except ValueError:
        return f"{name} must be an integer"
    if name == "message.timestamp.type" and value not in ("CreateTime", "LogAppendTime"):
        return "message.timestamp.type must be CreateTime or LogAppendTime"
    if name == "cleanup.policy" and not set(value.split(",")) <= {"delete", "compact"}:
        return "cleanup.policy must be a list of delete/compact"
    if name == "compression.type" and value not in ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"):
        return "unknown compression.type"
    return None


__all__ = ["Broker", "CloseConnection", "Context", "SUPPORTED", "MAX_MESSAGE_BYTES_DEFAULT"]
