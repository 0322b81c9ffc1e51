"""The KIP-714 client telemetry faults, one switch per clause they break."""

from wirecheck.broker.switches import Switch


class TelemetryFaults:
    """KIP-714 client telemetry (telemetry.py)."""

    telemetry_instance_id_not_assigned = Switch(
        "GetTelemetrySubscriptions with a zero ClientInstanceId is answered a new non-zero UUID (KIP-714); this "
        "answers the zero id back")
    telemetry_subscription_id_unstable = Switch(
        "A push under the SubscriptionId GetTelemetrySubscriptions answered is accepted (KIP-714); this answers a "
        "SubscriptionId other than the one pushes are checked against, so every push gets UNKNOWN_SUBSCRIPTION_ID")
    telemetry_subscription_unchecked = Switch(
        "A push under another SubscriptionId than the instance's gets UNKNOWN_SUBSCRIPTION_ID (117) (KIP-714); "
        "this accepts any")
    telemetry_compression_unchecked = Switch(
        "A push with a CompressionType not among AcceptedCompressionTypes gets UNSUPPORTED_COMPRESSION_TYPE (76) "
        "(KIP-714); this does not check it")
    telemetry_size_unchecked = Switch(
        "A push whose Metrics exceed TelemetryMaxBytes gets TELEMETRY_TOO_LARGE (118) (KIP-714); this does not "
        "check the size")
    telemetry_null_instance_accepted = Switch(
        "A push with a zero ClientInstanceId gets INVALID_REQUEST (42) (KIP-714); this handles it as an instance")
