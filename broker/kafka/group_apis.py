"""The classic group APIs and committed offsets, answered from the coordinator in groups.py.

Handlers of the Broker (broker.py), one mixin per API family: a decoded request dict in, a response dict out.
"""

from __future__ import annotations

from wirecheck.broker.kafka import group_model
from wirecheck.broker.kafka.errors import GROUP_ID_NOT_FOUND, NONE
from wirecheck.broker.kafka.broker_parts import BrokerParts
from wirecheck.broker.kafka.settings import AUTHORIZED_OPERATIONS_OMITTED, GROUP_OPERATIONS


class GroupApis(BrokerParts):
    """A mixin of :class:`Broker` (broker.py)."""

    async def join_group(self, req: dict, version: int, client_id: str, client_host: str) -> dict:
        refused = self.consumer_groups.classic_join_error(req["GroupId"])
        if refused:  # KIP-848: a consumer group with members takes no classic members (no online conversion)
            return {"ThrottleTimeMs": 0, "ErrorCode": refused, "GenerationId": -1, "ProtocolType": None,
                    "ProtocolName": "" if version < 7 else None, "Leader": "", "SkipAssignment": False,
                    "MemberId": req["MemberId"], "Members": []}
        rebalance_ms = req["RebalanceTimeoutMs"] if version >= 1 else req["SessionTimeoutMs"]
        result = await self.coordinator.join(
            req["GroupId"], req["MemberId"], req.get("GroupInstanceId"), client_id, client_host,
            req["SessionTimeoutMs"], rebalance_ms, req["ProtocolType"],
            [(p["Name"], p["Metadata"]) for p in req["Protocols"]],
            # fault join-member-id-not-required: v4+ joins at once, as v0-v3 do (KIP-394 skipped)
            require_known_member_id=version >= 4 and not self.faults.join_member_id_not_required)
        return {"ThrottleTimeMs": 0, "ErrorCode": result.error, "GenerationId": result.generation,
                "ProtocolType": result.protocol_type,
                "ProtocolName": result.protocol_name or ("" if version < 7 else None),  # nullable from v7
                "Leader": result.leader, "SkipAssignment": False, "MemberId": result.member_id,
                "Members": [{"MemberId": m, "GroupInstanceId": g, "Metadata": meta} for m, g, meta in result.members]}

    async def sync_group(self, req: dict, version: int) -> dict:
        fenced = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId"))
        if fenced:
            return {"ThrottleTimeMs": 0, "ErrorCode": fenced, "Assignment": b""}
        error, ptype, pname, assignment = await self.coordinator.sync(
            req["GroupId"], req["MemberId"], req["GenerationId"], req.get("ProtocolType"), req.get("ProtocolName"),
            [(a["MemberId"], a["Assignment"]) for a in req["Assignments"]])
        return {"ThrottleTimeMs": 0, "ErrorCode": error, "ProtocolType": ptype, "ProtocolName": pname,
                "Assignment": assignment}

    def heartbeat(self, req: dict, version: int) -> dict:
        error = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId")) \
            or self.coordinator.heartbeat(req["GroupId"], req["MemberId"], req["GenerationId"])
        return {"ThrottleTimeMs": 0, "ErrorCode": error}

    def leave_group(self, req: dict, version: int) -> dict:
        if version < 3:
            return {"ThrottleTimeMs": 0, "ErrorCode": self.coordinator.leave(req["GroupId"], req["MemberId"])}
        members = [{"MemberId": m["MemberId"], "GroupInstanceId": m.get("GroupInstanceId"),
                    "ErrorCode": self.coordinator.leave_member(req["GroupId"], m["MemberId"], m.get("GroupInstanceId"))}
                   for m in req["Members"]]
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "Members": members}

    def offset_commit(self, req: dict, version: int) -> dict:
        allowed = self.consumer_groups.commit_error(req["GroupId"], req["MemberId"], req["GenerationIdOrMemberEpoch"],
                                                    version, req["Topics"])  # None: not a KIP-848 group
        if allowed is None:
            allowed = self.coordinator.check_instance(req["GroupId"], req["MemberId"], req.get("GroupInstanceId")) \
                or self.coordinator.commit_check(req["GroupId"], req["MemberId"], req["GenerationIdOrMemberEpoch"])
        topics = []
        for t in req["Topics"]:
            parts = []
            for p in t["Partitions"]:
                error = allowed or self._partition_error(t["Name"], p["PartitionIndex"])
                if not error and not self.faults.commit_not_stored:
                    self.coordinator.commit(req["GroupId"], t["Name"], p["PartitionIndex"], group_model.CommittedOffset(
                        p["CommittedOffset"], p.get("CommittedLeaderEpoch", -1), p["CommittedMetadata"]))
                parts.append({"PartitionIndex": p["PartitionIndex"], "ErrorCode": error})
            topics.append({"Name": t["Name"], "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}

    def offset_fetch(self, req: dict, version: int) -> dict:
        if version < 8:
            group = self._offsets_for(req["GroupId"], req["Topics"])
            if req["Topics"] is None and self.faults.fetch_all_empty_below_v8:
                group["Topics"] = []
            return {"ThrottleTimeMs": 0, "Topics": group["Topics"], "ErrorCode": group["ErrorCode"]}
        answers = []
        for g in req["Groups"]:
            answer = self._offsets_for(g["GroupId"], g["Topics"])
            if version >= 9:  # KIP-848: a member fetching names itself and its epoch
                error = self.consumer_groups.fetch_error(g["GroupId"], g.get("MemberId"), g.get("MemberEpoch", -1))
                if error:
                    answer = {"GroupId": g["GroupId"], "Topics": [], "ErrorCode": error}
            answers.append(answer)
        return {"ThrottleTimeMs": 0, "Groups": answers}

    def _offsets_for(self, group_id: str, topics: list | None) -> dict:
        committed = self.coordinator.committed(group_id)
        if topics is None:  # null: every committed offset of the group
            wanted: dict[str, list[int]] = {}
            for (topic, partition) in sorted(committed):
                wanted.setdefault(topic, []).append(partition)
        else:
            wanted = {t["Name"]: t["PartitionIndexes"] for t in topics}
        out = []
        for name, indexes in wanted.items():
            parts = []
            for index in indexes:
                c = committed.get((name, index))
                none = 0 if self.faults.uncommitted_reads_zero else -1  # fault: "no offset" read as 0
                parts.append({"PartitionIndex": index, "ErrorCode": NONE,
                              "CommittedOffset": c.offset if c else none,
                              "CommittedLeaderEpoch": c.leader_epoch if c else -1,
                              "Metadata": c.metadata if c else ""})
            out.append({"Name": name, "Partitions": parts})
        return {"GroupId": group_id, "Topics": out, "ErrorCode": NONE}

    def describe_groups(self, req: dict, version: int) -> dict:
        described = []
        for group_id in req["Groups"]:
            group = self.coordinator.groups.get(group_id)
            if group is None:
                # Dead with no error before v6; v6 answers GROUP_ID_NOT_FOUND (KIP-1043, DescribeGroupsResponse.json)
                described.append({"ErrorCode": GROUP_ID_NOT_FOUND if version >= 6 else NONE,
                                  "ErrorMessage": None, "GroupId": group_id, "GroupState": group_model.DEAD,
                                  "ProtocolType": "", "ProtocolData": "", "Members": [],
                                  "AuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED})
                continue
            # as Apache Kafka's GroupMetadataManager.describeGroups: the protocol, and each member's metadata, only
            # of a Stable group; otherwise ProtocolData "" and members without metadata but with the assignment
            # they hold (ClassicGroupMember.describeNoMetadata), the protocol being still chosen
            stable = group.state == group_model.STABLE and bool(group.protocol_name)
            described.append({
                "ErrorCode": NONE, "GroupId": group_id, "GroupState": group.state,
                "ProtocolType": group.protocol_type or "", "ProtocolData": group.protocol_name if stable else "",
                "Members": [{"MemberId": m.member_id, "GroupInstanceId": m.group_instance_id,
                             "ClientId": m.client_id, "ClientHost": m.client_host,
                             "MemberMetadata": m.metadata_for(group.protocol_name) if stable else b"",
                             "MemberAssignment": m.assignment}
                            for m in group.members.values()],
                "AuthorizedOperations": AUTHORIZED_OPERATIONS_OMITTED})
        if version >= 3 and req.get("IncludeAuthorizedOperations"):  # KafkaApis.handleDescribeGroupsRequest
            for group in described:  # settings.GROUP_OPERATIONS, for every group answered without an error
                if group["ErrorCode"] == NONE:
                    group["AuthorizedOperations"] = GROUP_OPERATIONS
        return {"ThrottleTimeMs": 0, "Groups": described}

    def list_groups(self, req: dict, version: int) -> dict:
        states = {s.lower() for s in req.get("StatesFilter") or []}
        types = {t.lower() for t in req.get("TypesFilter") or []}
        listed = []
        for group in self.consumer_groups.groups.values():
            if (not states or group.state().lower() in states) and (not types or "consumer" in types):
                listed.append({"GroupId": group.group_id, "ProtocolType": "consumer", "GroupState": group.state(),
                               "GroupType": "consumer"})
        for group in self.share_groups.groups.values():  # KIP-932: share groups are listed as type "share"
            if (not states or group.state().lower() in states) and (not types or "share" in types):
                listed.append({"GroupId": group.group_id, "ProtocolType": "share", "GroupState": group.state(),
                               "GroupType": "share"})
        for group in self.coordinator.groups.values():
            if states and group.state.lower() not in states:
                continue
            if (types and "classic" not in types) or group.group_id in self.consumer_groups.groups:
                continue
            listed.append({"GroupId": group.group_id, "ProtocolType": group.protocol_type or "",
                           "GroupState": group.state, "GroupType": "classic"})
        return {"ThrottleTimeMs": 0, "ErrorCode": NONE, "Groups": listed}
