"""Safety faults: each breaks one guarantee a client's history shows (wirecheck safety rustlog, reports/safety/
checker.py), none of them visible to a single conformance exchange. protocols/rustlog/faults.py SAFETY_FAULTS names
the anomalies each must cause."""

from wirecheck.broker.switches import Switch


class SafetyFaults:
    """Offsets of a durable partition log (durable.py)."""

    safety_log_end_reused = Switch(
        "Each offset is handed out once (a log only grows: ProduceResponse.base_offset is the high watermark); "
        "after a restart this recovers each partition's high watermark one short, so the next batch is given the "
        "last stored record's offset again")
