"""Safety faults: each breaks one guarantee a client's history shows (wirecheck safety pravega, reports/safety/
checker.py), none of them visible to a single conformance exchange. protocols/pravega/faults.py SAFETY_FAULTS names
the anomaly each must cause."""

from wirecheck.broker.switches import Switch


class SafetyFaults:
    """Durability (store.py)."""

    safety_unsynced_tail_lost = Switch(
        "An append the segment store acknowledged (DataAppended) survives a crash (durable storage, --fsync batch: "
        "synced before the answer); this loses the last entry written to each stream segment at every restart, as "
        "a store acknowledging from its page cache loses a power cut (the user streams' segments; the internal "
        "ones, _-named, keep theirs)")
