"""The member-epoch checks of OffsetCommit/OffsetFetch v9+ for KIP-848 consumer group members (a mixin of
consumer_groups.ConsumerGroups, which holds ``groups``, ``storage`` and ``faults``)."""

from __future__ import annotations

from wirecheck.broker.kafka.errors import NONE, STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, UNSUPPORTED_VERSION
from wirecheck.broker.kafka.faults import KafkaFaults
from wirecheck.broker.kafka.storage import Storage


class MemberEpochOffsets:
    groups: dict
    storage: Storage
    faults: KafkaFaults

    def commit_error(self, group_id: str, member_id: str, epoch: int, version: int,
                     topics: list[dict] | None = None) -> int | None:
        """The OffsetCommit verdict for a consumer group (None: not one, the classic rules apply): at the member's
        epoch, or at an older one for partitions it owns since that epoch or before (KIP-1251, Kafka 4.4's
        ConsumerGroup.validateOffsetCommit and its assignment-epoch validator: a partition the member does not own,
        or was assigned after the epoch committed at, fails the whole request STALE_MEMBER_EPOCH); a newer epoch is
        STALE_MEMBER_EPOCH. ``topics``: the request's, named."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        if epoch < 0 and not group.members:
            return NONE  # an admin client's or a manually assigned consumer's commit into an empty group
        member = group.members.get(member_id)
        if member is None:
            return UNKNOWN_MEMBER_ID
        if version < 9:
            return UNSUPPORTED_VERSION  # members of the new protocol commit with v9+ (GenerationIdOrMemberEpoch)
        if epoch == member.epoch or self.faults.consumer_group_commit_epoch_unchecked:
            return NONE
        if epoch > member.epoch:
            return STALE_MEMBER_EPOCH
        for topic in topics or ():
            known = self.storage.topics.get(topic["Name"])
            for p in topic["Partitions"]:
                at = member.assigned_at.get((known.topic_id, p["PartitionIndex"])) if known else None
                if at is None or epoch < at:
                    return STALE_MEMBER_EPOCH
        return NONE

    def fetch_error(self, group_id: str, member_id: str | None, epoch: int) -> int:
        """OffsetFetch v9+ naming a member: it must be one, at its current epoch."""
        group = self.groups.get(group_id)
        if group is None or (member_id is None and epoch < 0):
            return NONE
        member = group.members.get(member_id or "")
        if member is None:
            return UNKNOWN_MEMBER_ID
        return NONE if epoch == member.epoch else STALE_MEMBER_EPOCH
