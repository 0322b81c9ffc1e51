"""Safety faults: each breaks one guarantee a client's history shows (wirecheck safety barco, reports/safety/
checker.py), none of them visible to a single conformance exchange. protocols/barco/faults.py SAFETY_FAULTS names
the anomalies each must cause."""

from wirecheck.broker.switches import Switch


class SafetyFaults:
    """Durability of acknowledged chunks (store.py)."""

    safety_unsynced_tail_lost = Switch(
        "An acknowledged chunk survives a crash (the producer's 200 comes after the fsync, --fsync batch); this "
        "loses each reader's last chunk at every restart, as a broker acknowledging from its page cache loses a "
        "power cut, and hands its offsets out again")
