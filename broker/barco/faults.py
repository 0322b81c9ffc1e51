"""The Barco personality's faults and variants, as typed objects (switches.py): a handler asks
``self.faults.<name>`` or ``self.variants.<name>`` at the point where the clause is kept or broken.

A fault breaks one clause on purpose (protocols/barco/faults.py names the clause the suite must report for each);
a variant takes another reading the spec permits (``--variant``): the whole suite must pass against each.
"""

from wirecheck.broker.barco.faults_safety import SafetyFaults
from wirecheck.broker.switches import Switch, Switches


class BarcoFaults(SafetyFaults, Switches):
    personality = "barco"

    commit_ignored = Switch("a manual commit answers 204 but stores nothing")
    connection_bind_ignored = Switch("a ConsumerInfo registration is answered 200 but binds no connection")
    consumer_status_404 = Switch("GET /status on the consumer port is answered 404")
    crash_on_oversize = Switch("an oversize body length wedges the broker: no endpoint answers again")
    crc_unchecked = Switch("requests with a wrong head crc are processed")
    discovery_binary_port_missing = Switch("GET /v1/brokers leaves out producerBinaryPort")
    discovery_status_404 = Switch("GET /status on the discovery port is answered 404")
    empty_200 = Switch("a poll with nothing to read is answered 200 with an empty body instead of 204")
    empty_message_dropped = Switch("zero-length messages are not stored")
    error_code_unknown = Switch("ERROR frames carry code 9 (the codes are 0, 1 and 2)")
    error_length_prefixed = Switch("ERROR frames put a uint16 length before the message (§2.5: none)")
    error_frame_cut = Switch("ERROR frames lose their last byte: the header announces one byte more than is sent")
    goodbye_keeps_consumer = Switch("goodbye is answered 200 but the consumer stays registered")
    h2_reset_ends_connection = Switch("an HTTP/2 RST_STREAM from the client ends the whole connection (GOAWAY)")
    h2c_one_stream = Switch("every HTTP/2 stream after a connection's first is refused (RST_STREAM REFUSED_STREAM)")
    heartbeat_wrong_op = Switch("HEARTBEAT is answered with PRODUCE_RESPONSE instead of READY")
    http_bad_request_200 = Switch("a request that breaks HTTP/1.1 syntax is answered 200")
    http_empty_body_stored = Switch("a 0-byte HTTP produce body is answered 200 and stored as one empty record")
    http_get_allowed = Switch("GET on /v1/topic/:topic/messages is answered 200")
    http_pipelining_dropped = Switch("HTTP/1.1 requests pipelined behind another are dropped unanswered")
    http_produce_not_stored = Switch("HTTP produce is answered 200 but nothing is stored")
    json_start_offset_missing = Switch("JSON poll items have no startOffset")
    message_lengths_unchecked = Switch("trailing bytes after the last message of a PRODUCE are ignored")
    missing_consumer_id_204 = Switch("poll, commit and goodbye without consumerId (no consumer bound) are answered 204")
    ndjson_one_record = Switch("an x-ndjson body is stored as one record")
    no_rewind = Switch("a poll of another consumer does not rewind to the last committed offset")
    not_found_400 = Switch("unknown paths on the consumer port are answered 400 instead of 404")
    oversize_buffered = Switch("a frame body above the limit is waited for and read like any other")
    partition_key_ignored = Switch("keyed messages get round-robin range indexes, like keyless ones")
    pipelined_answer_dropped = Switch("a frame with the next one already buffered is dropped unanswered")
    poll_content_type_wrong = Switch("binary poll answers carry Content-Type application/octet-stream")
    poll_offset_gap = Switch("every chunk after a reader's first is announced one offset too far")
    produce_ack_body = Switch("PRODUCE_RESPONSE carries a one-byte body")
    producer_http_status_404 = Switch("GET /status on the HTTP producer port is answered 404")
    record_cut_64k = Switch("records are stored cut to their first 65535 bytes")
    register_post_refused = Switch("POST on /v1/consumer/register is answered 405 (only PUT is served)")
    reregister_different_accepted = Switch("re-registering an id with other topics is answered 200")
    reregister_same_refused = Switch("registering again with the same id, group and topics is answered 400")
    response_crc_wrong = Switch("response headers carry a CRC over 8 bytes instead of 9")
    retry_after_missing = Switch("204 poll answers carry no Retry-After")
    short_read_body = Switch("a frame body the peer ends early (EOF) is processed as far as it came")
    startup_not_required = Switch("PRODUCE is served before STARTUP")
    startup_signed_stream_id = Switch("STARTUP with a stream id above 0x7FFF (negative as int16) gets ERROR(0)")
    stream_id_wrong = Switch("responses carry the request's stream id + 1")
    timestamp_ignored = Switch("the PRODUCE timestamp flag is ignored: records get the server's time")
    topic_unvalidated = Switch("the binary producer accepts any topic name ('..' included)")
    truncated_body_closes = Switch("a PRODUCE body ending inside timestamp, key or topic: ERROR(0), then a close")
    unknown_op_silent = Switch("frames with an unknown opcode are dropped without an answer")
    unknown_policy_accepted = Switch("registration with an unknown onNewGroup value is taken as startFromLatest")
    unregistered_204 = Switch("polls of unregistered consumers are answered 204 instead of 409")
    zstd_no_checksum = Switch("chunks are compressed without the zstd content checksum")


class BarcoVariants(Switches):
    personality = "barco"

    oversize_error_discard = Switch("a frame body above the limit gets ERROR(0), then the announced body is read and "
                                    "discarded unbuffered and the connection kept (notes §11)")
    topic_any_bytes = Switch("topics that are not UTF-8 or hold control characters are taken (the notes' rule names "
                             "empty, '/', '\\', NUL, '..' and over 255 bytes only)")
    router_decodes_path = Switch("the HTTP producer routes on the decoded path: an encoded '/' in a topic makes a "
                                 "path no route matches, 404 (as a Go router does)")
    register_any_topic = Switch("registration takes any topic name, as upstream does (notes §5.1)")
    crc_error_then_close = Switch("a wrong head crc gets ERROR(0) before the close (D1 permits the ERROR first)")
    version_ignored = Switch("the version byte is not checked: frames of any version are served, as upstream does "
                             "(notes §11: 'or ignore them (compatible)')")
    control_body_closes = Switch("a body on a non-PRODUCE frame is a protocol error: read, then ERROR(0) and a close "
                                 "(notes §10.9: skipped or a protocol error)")
    bad_lengths_close = Switch("a PRODUCE whose message lengths do not add up gets ERROR(0), then a close")
    empty_produce_acked = Switch("a PRODUCE with no message is acknowledged as a no-op (nothing stored)")
    error_quotes_input = Switch("ERROR messages are not capped at 512 bytes; a refused topic is quoted in hex")
    second_startup_ready = Switch("a second STARTUP is answered READY again")
    keyed_range_zero = Switch("keyed messages all land in range index 0, as upstream's dev mode (notes §7)")
    frames_invalid_422 = Switch("a producer.frames body whose lengths do not add up is refused with 422")
    http_chunked_accepted = Switch("a chunked HTTP produce body is accepted and stored (D8)")
    consumer_method_404 = Switch("another method on a consumer path is answered 404 instead of 405")


FAULTS: dict[str, str] = BarcoFaults.catalogue()
VARIANTS: dict[str, str] = BarcoVariants.catalogue()
