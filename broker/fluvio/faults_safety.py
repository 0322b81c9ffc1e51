"""Safety faults: each breaks one guarantee a client's history shows (wirecheck safety fluvio, reports/safety/
checker.py), none of them visible to a single conformance exchange. protocols/fluvio/faults.py SAFETY_FAULTS names
the anomaly each must cause."""

from wirecheck.broker.switches import Switch


class SafetyFaults:
    """Durability (storage.py)."""

    safety_unsynced_tail_lost = Switch(
        "A record the SPU acknowledged survives a crash (durable storage, --fsync batch: synced before Produce "
        "answers); this loses each partition's last batch at every restart, as an SPU acknowledging from its page "
        "cache loses a power cut")
