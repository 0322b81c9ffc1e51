"""The KIP-932 share-group faults, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class ShareFaults:
    """KIP-932 share groups: membership (share_groups.py), in-flight records and sessions (share_partitions.py,
    share_fetch.py)."""

    share_group_join_epoch_zero = Switch(
        "A member joining a share group gets a member epoch above 0 (KIP-932); this answers MemberEpoch 0")
    share_group_assignment_omitted = Switch(
        "The share-group heartbeat answer carries a changed assignment (KIP-932); this always answers Assignment "
        "null")
    share_group_epoch_unchecked = Switch(
        "A share-group heartbeat at a stale member epoch gets FENCED_MEMBER_EPOCH (110) (KIP-932); this accepts "
        "any epoch")
    share_group_unknown_member_joins = Switch(
        "A share-group heartbeat (epoch > 0) from an unknown member gets UNKNOWN_MEMBER_ID (25) (KIP-932); this "
        "joins it")
    share_group_leave_ignored = Switch(
        "MemberEpoch -1 removes the share-group member (KIP-932); this answers -1 but keeps it")
    share_group_fields_unchecked = Switch(
        "A share-group heartbeat with an empty GroupId/MemberId or a join without SubscribedTopicNames gets "
        "INVALID_REQUEST (42) (KIP-932); this accepts it")
    share_group_describe_no_assignment = Switch(
        "ShareGroupDescribe lists each member's assignment (ShareGroupDescribeResponse.json); this lists it empty")
    share_fetch_acquired_records_omitted = Switch(
        "ShareFetch names the records it hands out in AcquiredRecords (KIP-932, ShareFetchResponse.json); this "
        "returns the records with no AcquiredRecords")
    share_records_acquired_twice = Switch(
        "A record locked by one share-group member is not delivered to another (KIP-932 in-flight records); this "
        "acquires locked records again for whoever fetches")
    share_accept_redelivers = Switch(
        "An ACCEPTed record is never delivered again (KIP-932); this treats ACCEPT as RELEASE")
    share_release_ignored = Switch(
        "A RELEASEd record becomes available at once (KIP-932); this answers 0 and keeps it locked until its lock "
        "expires")
    share_reject_redelivers = Switch("A REJECTed record is archived (KIP-932); this treats REJECT as RELEASE")
    share_ack_state_unchecked = Switch(
        "Acknowledging a record the member does not hold gets INVALID_RECORD_STATE (121) (KIP-932); this applies "
        "it")
    share_ack_batches_unchecked = Switch(
        "Overlapping, unsorted or inverted acknowledgement batches get INVALID_REQUEST (42) (KIP-932); this "
        "applies them")
    share_delivery_count_frozen = Switch(
        "Each delivery increments a record's delivery count (KIP-932); this keeps it at 1")
    share_delivery_limit_ignored = Switch(
        "A record released at group.share.delivery.count.limit deliveries is archived (KIP-932); this makes it "
        "available again forever")
    share_lock_never_expires = Switch(
        "An acquisition lock expires after group.share.record.lock.duration.ms, giving the record back (KIP-932); "
        "this never expires locks")
    share_session_epoch_unchecked = Switch(
        "A ShareFetch at another epoch than its share session's next gets INVALID_SHARE_SESSION_EPOCH (123) "
        "(KIP-932); this accepts any epoch")
    share_session_unknown_opens = Switch(
        "A ShareFetch/ShareAcknowledge at epoch > 0 without a share session gets SHARE_SESSION_NOT_FOUND (122) "
        "(KIP-932); this opens one at that epoch")
