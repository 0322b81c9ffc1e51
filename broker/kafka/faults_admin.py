"""The metadata, topic, config and admin-API faults, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class AdminFaults:
    """Metadata, FindCoordinator, topics, configs and the admin APIs (metadata_apis.py, topic_apis.py, admin.py,
    configs.py)."""

    replication_factor_unchecked = Switch(
        "CreateTopics with a replication factor above the number of brokers fails with INVALID_REPLICATION_FACTOR "
        "(38) (ReplicationControlManager, CreateTopicsResponse.json); this creates the topic with one replica")
    create_duplicate_no_error = Switch(
        "CreateTopics on an existing name fails with TOPIC_ALREADY_EXISTS (36) (CreateTopicsResponse.json); "
        "this answers 0")
    metadata_empty_means_all = Switch(
        "Metadata v1+ with an empty topic array lists no topics, only null means all (MetadataRequest.json); "
        "this lists every topic")
    describe_configs_drops_key = Switch(
        "DescribeConfigs returns every requested key the broker knows (DescribeConfigsRequest.json "
        "ConfigurationKeys); this drops the first one")
    describe_configs_named_keys_close = Switch(
        "DescribeConfigs answers a request that names its keys (DescribeConfigsRequest.json ConfigurationKeys); "
        "this closes the connection instead, as a broker whose key filter crashes")
    describe_configs_synonyms_always = Switch(
        "DescribeConfigs lists synonyms only when IncludeSynonyms is set (KIP-226); this always lists them")
    describe_configs_docs_always = Switch(
        "DescribeConfigs v3+ returns documentation only when IncludeDocumentation is set (KIP-569); this always "
        "returns it")
    alter_configs_unknown_accepted = Switch(
        "Altering an unknown topic config fails with INVALID_CONFIG (40) (ConfigAdminManager); this accepts it")
    alter_configs_not_applied = Switch(
        "AlterConfigs/IncrementalAlterConfigs change the topic's configs (KIP-133, KIP-339); this answers 0 and "
        "changes nothing")
    validate_only_applied = Switch(
        "AlterConfigs with ValidateOnly changes nothing (AlterConfigsRequest.json); this applies the change")
    create_partitions_count_ignored = Switch(
        "CreatePartitions grows the topic to the requested count (KIP-195); this adds one partition whatever "
        "the count")
    delete_records_start_not_moved = Switch(
        "DeleteRecords moves the log start offset (KIP-107); this answers the requested LowWatermark and keeps "
        "the records")
    delete_groups_non_empty_accepted = Switch(
        "DeleteGroups of a group with members fails with NON_EMPTY_GROUP (68) (KIP-229); this deletes it")
    offset_delete_not_deleted = Switch(
        "OffsetDelete removes the committed offset (KIP-496); this answers 0 and keeps it")
    describe_cluster_port_wrong = Switch(
        "DescribeCluster names the brokers Metadata names (KIP-700); this answers the listener's port + 1")
    leader_epoch_end_off = Switch(
        "OffsetForLeaderEpoch of the current epoch is the log end offset (KIP-101); this answers log end + 1")
    describe_producers_empty = Switch(
        "DescribeProducers lists the partition's idempotent producers (KIP-664); this lists none")
    coordinator_port_hardcoded = Switch(
        "FindCoordinator names the broker's own host and port, as Metadata does (FindCoordinatorResponse.json); "
        "this answers a fixed wrong port")
    create_zero_partitions_accepted = Switch(
        "CreateTopics with fewer than one partition fails with INVALID_PARTITIONS (37) (CreateTopicsRequest.json, "
        "ReplicationControlManager); this lets a count of 0 through")
    metadata_ignores_allow_create = Switch(
        "Metadata v4+ with AllowAutoTopicCreation false never creates a topic and answers "
        "UNKNOWN_TOPIC_OR_PARTITION (3) (MetadataRequest.json, KIP-204); this ignores the flag")
    create_partitions_same_accepted = Switch(
        "CreatePartitions to the current count fails with INVALID_PARTITIONS (37) (KIP-195); this answers 0")
    delete_records_clamps_to_hw = Switch(
        "DeleteRecords beyond the high watermark fails with OFFSET_OUT_OF_RANGE (1) (KIP-107, "
        "UnifiedLog.deleteRecords); this clamps the offset to the high watermark and deletes every record")
    offset_delete_unknown_group_ok = Switch(
        "OffsetDelete for a group that does not exist fails with GROUP_ID_NOT_FOUND (69) (KIP-496); this answers 0")
    describe_configs_unknown_topic_empty = Switch(
        "DescribeConfigs of an unknown topic fails with UNKNOWN_TOPIC_OR_PARTITION (3) (ConfigAdminManager); this "
        "answers error 0 and no configs")
    delete_groups_unknown_ok = Switch(
        "DeleteGroups of a group that does not exist fails with GROUP_ID_NOT_FOUND (69) (KIP-229); this answers 0")
    read_only_validate_passes = Switch(
        "Altering a static broker config fails, INVALID_REQUEST (42) (ConfigAdminManager, 'Cannot update these "
        "configs dynamically'), with ValidateOnly too; this validation skips the check and answers 0")
    create_topic_count_ignored = Switch(
        "CreateTopics creates NumPartitions partitions (CreateTopicsRequest.json); this creates one partition "
        "whatever the count (the answer still echoes it)")
    describe_configs_broker_empty = Switch(
        "DescribeConfigs of this broker lists its configs (DescribeConfigsResponse.json); this lists only dynamic "
        "ones, and there are none")
    describe_configs_defaults_null = Switch(
        "DescribeConfigs of a topic gives every config its value, defaults included (DescribeConfigsResponse.json "
        "Value, ConfigSource DEFAULT_CONFIG); this gives values to overrides only, null to the rest")
    incremental_append_replaces = Switch(
        "IncrementalAlterConfigs APPEND adds values to a list config (KIP-339); this replaces the list, as SET")
    metadata_leader_not_a_broker = Switch(
        "Every partition leader in Metadata is one of the brokers it lists (MetadataResponse.json LeaderId, "
        "Brokers); this names node id + 1, which is not listed")
    error_code_negated = Switch(
        "Every ErrorCode is one of Errors.java's codes (protocol guide 'Error Codes'); this answers a CreateTopics "
        "name that already exists with -36, TOPIC_ALREADY_EXISTS negated (an errno-style sign slip)")
