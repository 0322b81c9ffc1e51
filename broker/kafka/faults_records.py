"""The Produce, Fetch and ListOffsets faults, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class RecordFaults:
    """Produce, Fetch and ListOffsets: record batches, offsets, idempotence (produce_apis.py, fetch_apis.py)."""

    crc_ieee = Switch(
        "RecordBatch CRC is CRC-32C over attributes..end (protocol guide 'Record Batch', KIP-98); "
        "this validates it with CRC-32 IEEE, so correct batches get CORRUPT_MESSAGE (2)")
    hw_off_by_one = Switch(
        "Fetch HighWatermark is the offset after the last committed record (FetchResponse.json); "
        "this answers HW + 1")
    wrong_error_unknown_partition = Switch(
        "Produce to a missing partition of an existing topic is UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis); "
        "this answers NOT_LEADER_OR_FOLLOWER (6) (Fetch and ListOffsets still answer 3)")
    fetch_unknown_partition_no_error = Switch(
        "Fetch of an unknown topic or partition fails with UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis."
        "handleFetchRequest); this answers an empty partition with error 0")
    listoffsets_unknown_topic_closes_v5 = Switch(
        "ListOffsets for an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION (3) at every version; at v5 only "
        "this closes the connection, as a broker whose error path at that version crashes (a valid v5 request is "
        "answered)")
    listoffsets_unknown_partition_no_error = Switch(
        "ListOffsets of an unknown topic or partition fails with UNKNOWN_TOPIC_OR_PARTITION (3) (KafkaApis."
        "handleListOffsetRequest); this answers offset -1 with error 0")
    batch_length_ignored = Switch(
        "A batch whose batchLength disagrees with its bytes is corrupt (DefaultRecordBatch.ensureValid, "
        "ByteBufferLogInputStream); this takes the length from the bytes received and stores the batch")
    fetch_ignores_offset = Switch(
        "Fetch returns batches from FetchOffset on (FetchRequest.json FetchOffset); this reads from the log "
        "start whatever offset in range is asked (an offset out of range is still refused)")
    listoffsets_latest_off_by_one = Switch(
        "ListOffsets timestamp -1 returns the log end offset (ListOffsetsRequest.json, "
        "protocol guide 'ListOffsets'); this answers log end + 1")
    sequence_not_checked = Switch(
        "Idempotent produce rejects a gap in sequence numbers with OUT_OF_ORDER_SEQUENCE_NUMBER (45) "
        "(KIP-98, ProducerAppendInfo); this accepts a sequence that skips ahead (a retry is still recognised)")
    fetch_beyond_hw_empty = Switch(
        "Fetch at an offset above the high watermark fails with OFFSET_OUT_OF_RANGE (1) "
        "(ReplicaManager.readFromLog); this answers an empty partition with error 0")
    produce_autocreates = Switch(
        "Produce to a missing topic fails with UNKNOWN_TOPIC_OR_PARTITION (3) and never creates it "
        "(KafkaApis.handleProduceRequest); this creates the topic")
    message_too_large_unchecked = Switch(
        "A batch larger than max.message.bytes fails with MESSAGE_TOO_LARGE (10) (UnifiedLog."
        "analyzeAndValidateRecords); this accepts it on a topic without an override (no broker-wide default)")
    fetch_unknown_session_served = Switch(
        "A Fetch continuing a session the broker does not hold fails with FETCH_SESSION_ID_NOT_FOUND (70) "
        "(KIP-227); this serves it as a sessionless fetch")
    fetch_no_long_poll = Switch("Fetch waits up to MaxWaitMs for MinBytes (FetchRequest.json); this returns at once")
    max_message_bytes_override_ignored = Switch(
        "A topic's max.message.bytes override bounds its batches (TopicConfig); this uses the broker default")
    invalid_acks_wrong_error = Switch(
        "Produce with acks outside -1, 0, 1 fails with INVALID_REQUIRED_ACKS (21) (KafkaApis.handleProduceRequest); "
        "this answers the generic INVALID_REQUEST (42)")
    multi_batch_first_kept = Switch(
        "Produce v3+ with more than one record batch in a partition gets INVALID_RECORD (87) "
        "(ProduceRequest.validateRecords); this stores the first batch, drops the rest and answers 0")
    log_start_offset_unset = Switch(
        "Fetch v5+ and Produce v5+ report the partition's log start offset (FetchResponse.json, "
        "ProduceResponse.json LogStartOffset); this leaves the field at its default -1")
    retry_out_of_order = Switch(
        "An idempotent batch retried with its sequence numbers is a duplicate: answered 0 (or 46) and not "
        "appended again (KIP-98, ProducerStateEntry's recent batches); this keeps no retry window and answers "
        "OUT_OF_ORDER_SEQUENCE_NUMBER (45)")
    fetch_below_log_start_clamped = Switch(
        "Fetch below the log start offset (after DeleteRecords) fails with OFFSET_OUT_OF_RANGE (1) (KIP-107, "
        "ReplicaManager.readFromLog); this reads from the log start with error 0")
    fetch_crc_ieee = Switch(
        "Fetched record batches carry a CRC-32C over attributes..end (protocol guide 'Record Batch'); this "
        "re-checksums each batch it serves with CRC-32 IEEE")
    base_offset_echoed = Switch(
        "Produce answers the offset assigned to the batch's first record (ProduceResponse.json BaseOffset); this "
        "echoes the baseOffset the producer wrote in the batch (0 from clients)")
