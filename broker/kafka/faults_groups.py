"""The group faults: KIP-848 consumer groups and the classic protocol, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class ConsumerGroupFaults:
    """KIP-848 consumer groups (consumer_groups.py, consumer_group_checks.py, consumer_group_describe.py)."""

    consumer_group_join_epoch_zero = Switch(
        "A member joining a KIP-848 group gets a member epoch above 0 (KIP-848); this answers MemberEpoch 0")
    consumer_group_member_id_ignored = Switch(
        "ConsumerGroupHeartbeat v1 keeps the member id the client generated (KIP-1082); this assigns another")
    consumer_group_epoch_not_bumped = Switch(
        "A membership change bumps the group epoch (KIP-848); this keeps the first epoch")
    consumer_group_assignment_omitted = Switch(
        "The heartbeat answer carries a changed assignment (KIP-848); this always answers Assignment null")
    consumer_group_reassigns_unrevoked = Switch(
        "A partition is assigned only after its owner revoked it (KIP-848 reconciliation); this assigns it at once")
    consumer_group_epoch_before_revocation = Switch(
        "A member's epoch advances only after it revoked what it loses (KIP-848); this moves it on at once, the "
        "lost partitions dropped from its assignment without a revocation step")
    consumer_group_epoch_unchecked = Switch(
        "A heartbeat at a stale member epoch gets FENCED_MEMBER_EPOCH (110) (KIP-848); this accepts any epoch")
    consumer_group_unknown_member_joins = Switch(
        "A heartbeat (epoch > 0) from an unknown member id gets UNKNOWN_MEMBER_ID (25) (KIP-848); this joins it")
    consumer_group_leave_ignored = Switch("MemberEpoch -1 removes the member (KIP-848); this answers -1 but keeps it")
    consumer_group_static_rejoin_rebalances = Switch(
        "A static member rejoining after -2 takes over its epoch and assignment (KIP-848); this rejoins it as a "
        "new member, bumping the group epoch")
    consumer_group_assignor_unchecked = Switch(
        "An unknown ServerAssignor gets UNSUPPORTED_ASSIGNOR (112) (KIP-848); this falls back to uniform")
    consumer_group_fields_unchecked = Switch(
        "A heartbeat with missing or empty required fields gets INVALID_REQUEST (42) (KIP-848); this accepts it")
    consumer_group_describe_no_target = Switch(
        "ConsumerGroupDescribe lists each member's target assignment (ConsumerGroupDescribeResponse.json); this "
        "lists it empty")
    consumer_group_classic_join_allowed = Switch(
        "A classic JoinGroup of another ProtocolType than consumer on a consumer group with members gets "
        "INCONSISTENT_GROUP_PROTOCOL (23) (KIP-848); this hands the group to the classic protocol, dropping its "
        "members")
    consumer_group_classic_members_dropped = Switch(
        "A heartbeat join naming a classic group with members leaves those members in place, refused with "
        "GROUP_ID_NOT_FOUND (69) or converted online with them (KIP-848 'Upgrade & Downgrade'); this takes the "
        "group over as if it were Empty, its classic members forgotten")
    consumer_group_commit_epoch_unchecked = Switch(
        "OffsetCommit v9+ at a stale member epoch gets STALE_MEMBER_EPOCH (113) (KIP-848); this commits it")


class ClassicGroupFaults:
    """The classic group protocol and committed offsets (groups.py, group_apis.py)."""

    generation_not_bumped = Switch(
        "Every completed rebalance increments the group generation (JoinGroupResponse.json, "
        "GroupMetadata.initNextGeneration); this keeps generation 1")
    leader_gets_no_metadata = Switch(
        "The JoinGroup leader receives every member's protocol metadata (JoinGroupResponse.json Members); "
        "this sends empty metadata")
    commit_not_stored = Switch(
        "OffsetCommit stores the offset that OffsetFetch returns (OffsetCommitRequest.json, "
        "OffsetFetchResponse.json); this answers success and stores nothing")
    heartbeat_ignores_rebalance = Switch(
        "Heartbeat during a pending rebalance answers REBALANCE_IN_PROGRESS (27) so members rejoin "
        "(GroupCoordinator.handleHeartbeat); this answers 0")
    fetch_all_empty_below_v8 = Switch(
        "OffsetFetch with null Topics returns every partition the group committed (OffsetFetchRequest.json, v2+; "
        "admin clients list a group's offsets so); this answers no topics below v8, a defect only old "
        "versions show")
    uncommitted_reads_zero = Switch(
        "OffsetFetch of a partition the group never committed answers offset -1 (OffsetFetchResponse.json); "
        "this answers 0")
    heartbeat_generation_unchecked = Switch(
        "Heartbeat with another generation than the group's fails with ILLEGAL_GENERATION (22) "
        "(GroupCoordinator.handleHeartbeat); this does not compare generations")
    sync_generation_unchecked = Switch(
        "SyncGroup with another generation than the group's fails with ILLEGAL_GENERATION (22) "
        "(GroupCoordinator.handleSyncGroup); this does not compare generations")
    heartbeat_unknown_member_ok = Switch(
        "Heartbeat from a member the group does not know fails with UNKNOWN_MEMBER_ID (25) "
        "(GroupCoordinator.handleHeartbeat); this answers 0")
    join_member_id_not_required = Switch(
        "JoinGroup v4+ with an empty member id answers MEMBER_ID_REQUIRED (79) with an id to rejoin with (KIP-394); "
        "this lets the member join at once, as v0-v3 do")
