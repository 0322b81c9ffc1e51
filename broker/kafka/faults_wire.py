"""The wire faults (framing, headers, ApiVersions, codec), one switch per clause they break."""

from wirecheck.broker.switches import Switch


class WireFaults:
    """Framing, request and response headers, ApiVersions and the codec (server.py, request_header.py,
    responses.py, codec.py)."""

    advertise_unimplemented = Switch(
        "ApiVersions must only advertise versions the broker implements (KIP-35); Fetch v3 is advertised "
        "and answered in the v4 layout (FetchResponse.json)")
    throttle_missing_metadata_v5 = Switch(
        "MetadataResponse v3+ starts with ThrottleTimeMs (MetadataResponse.json); v5 answers omit it")
    tagged_fields_misskipped = Switch(
        "Unknown tagged fields must be skipped by exactly their size (KIP-482); this skips one byte too "
        "many, so requests carrying one are misparsed")
    crash_on_hostile_array = Switch(
        "An array count larger than the bytes left is a malformed request that costs one connection "
        "(RequestContext.parseRequest); this wedges the broker: no connection gets answers afterwards")
    acks0_responds = Switch(
        "Produce with acks=0 gets no response (protocol guide 'Produce API', KafkaApis.handleProduceRequest); "
        "this answers it")
    apiversions_unsupported_not_v0 = Switch(
        "ApiVersions at an unsupported version is answered with a v0 body, error 35 (KIP-511, "
        "ApiVersionsRequest.getErrorResponse); this encodes it at the broker's highest (flexible) version")
    apiversions_unsupported_trailing_tags = Switch(
        "The v0 answer to an unsupported ApiVersions version is exactly a v0 body (KIP-511; v0 is not flexible, "
        "ApiVersionsResponse.json); this appends a tagged-field section, which a v0 reader cannot decode")
    frame_limit_ignored = Switch(
        "A size prefix above socket.request.max.bytes (100 MiB) closes the connection before any body byte is "
        "read (NetworkReceive, InvalidReceiveException); this has no limit and waits for the body")
    software_name_unchecked = Switch(
        "ApiVersions v3+ with a ClientSoftwareName/Version outside KIP-511's pattern fails with INVALID_REQUEST "
        "(42) (ApiVersionsRequest.isValid); this answers 0")
    metadata_v13_as_v12 = Switch(
        "A response has the requested version's fields (MetadataResponse.json: v13 adds the top-level "
        "ErrorCode); this answers Metadata v13 with the v12 body")
    unknown_key_stays_open = Switch(
        "A request with an unknown api key closes the connection (SocketServer via "
        "RequestHeader.parse); this stays silent and keeps it open")
    correlation_id_wrong = Switch(
        "A response carries its request's correlation id (protocol guide 'Response Header'); "
        "this answers with correlation id + 1")
    flexible_header_v1 = Switch(
        "Flexible request versions get response header v1 with a tagged-field section (KIP-482, "
        "ResponseHeader.json); this answers with header v0")
    malformed_body_answered = Switch(
        "A body that does not decode closes the connection without a response (RequestContext.parseRequest); "
        "this writes correlation id + int16 -1 and keeps the connection (Kafka-RS's behaviour)")
    client_id_byte_length = Switch(
        "Request header v2 keeps ClientId as an INT16-length string (RequestHeader.json, flexibleVersions none); "
        "this holds its length in a signed byte, so a flexible request with a client id over 127 bytes is "
        "malformed and closes the connection")
    negative_size_skipped = Switch(
        "A negative size prefix closes the connection (NetworkReceive, InvalidReceiveException); this skips the "
        "size and keeps reading")
    apiversions_listed_from_one = Switch(
        "ApiVersions lists itself from version 0, which every broker serves so any client can start (KIP-35, "
        "KIP-511); this lists ApiVersions from 1 (and still answers v0)")
    compact_string_length_two_bytes = Switch(
        "A COMPACT_STRING's length is an unsigned varint of N+1, up to five bytes (KIP-482, ByteUtils."
        "readUnsignedVarint); this reads at most two varint bytes, so a string of 16383+ bytes is misread")
    hostile_count_waits = Switch(
        "An array count larger than the bytes left is refused at once (KAFKA-14063, ByteBufferAccessor bounds "
        "checks); this trusts an INT32 count (non-flexible versions) of 2^20 or more and waits for the missing "
        "elements: that connection stays open and answers nothing more")
    pipelined_answers_reordered = Switch(
        "Responses on one connection leave in request order (protocol guide 'Network'); this answers a request "
        "read while more are already waiting only after the ones behind it")
    size_prefix_one_read = Switch(
        "The INT32 size prefix may arrive over several reads (protocol guide 'Common Request and Response "
        "Structure'); this takes it from one read and drops the connection when that read brings fewer than 4 bytes")
    apiversions_header_v1 = Switch(
        "ApiVersions responses always use response header v0 (KIP-511, ApiMessageTypeGenerator); this answers "
        "flexible ApiVersions versions (v3+) with header v1, a tagged-field byte before the body")
    txn_producer_malformed_answered = Switch(
        "A body that does not decode closes the connection without a response (RequestContext.parseRequest), "
        "whatever the connection asked before; on a connection that obtained a transactional producer id "
        "(InitProducerId with a TransactionalId answered on it), this writes correlation id + int16 -1 and keeps "
        "the connection (hidden behind a session state: bench/guided.py)")
    in_transaction_malformed_stalls = Switch(
        "A body that does not decode closes the connection without a response (RequestContext.parseRequest), "
        "whatever the connection asked before; on a connection whose AddPartitionsToTxn was answered without error "
        "(a transaction ongoing, no EndTxn answered since), this neither answers nor closes: the connection waits "
        "and answers nothing more (hidden behind a session state: bench/guided.py)")
    header_tags_first_only = Switch(
        "Request header v2 ends with a tagged-field section whose fields are all skipped (KIP-482, "
        "RequestHeader.json); this skips only the first, so the body is read from the second on")
