"""ApiVersions (18) on the SPU (notes §3.1, §3.2; SPU/services/public/api_versions.rs).

The list is the dispatch table's listed keys in its order (the SPU's); ApiVersions itself and the consumer-offset
keys are not listed, as on the SPU. ApiVersions is accepted at every version (D2 does not apply to it).
"""

from __future__ import annotations

from wirecheck.broker.fluvio import messages
from wirecheck.broker.fluvio.api import PRODUCE, STREAM_FETCH, Answer
from wirecheck.broker.fluvio.connection import SpuCall
from wirecheck.broker.fluvio.faults import FluvioFaults

PLATFORM_VERSION = "0.0.0"  # the SPU never sets it (§3.2, A18)
STREAM_FETCH_LEGACY_MAX = 15  # advertised to clients that send no client_version (<= 0.9.12), §3.1


class VersionsApi:
    def __init__(self, faults: FluvioFaults, listed: list[tuple[int, int, int]]):
        """``listed``: (api key, min, max) of every key ApiVersions lists, in the SPU's order."""
        self.faults = faults
        self.advertised = list(listed)
        if faults.apiversions_overadvertise:  # fault: a version no handler implements
            self.advertised = [(key, low, 26 if key == PRODUCE else high) for key, low, high in self.advertised]

    async def api_versions(self, call: SpuCall) -> Answer:
        request = messages.read_api_versions(call.r, call.version)
        keys = list(self.advertised)
        if not request.client_version:  # clients <= 0.9.12 send none: StreamFetch up to 15 only (§3.1)
            keys = [(k, lo, STREAM_FETCH_LEGACY_MAX if k == STREAM_FETCH else hi) for k, lo, hi in keys]
            if self.faults.apiversions_legacy_drops_stream_fetch:
                keys = [key for key in keys if key[0] != STREAM_FETCH]  # fault: dropped instead of capped
        platform = "" if self.faults.platform_version_empty else PLATFORM_VERSION  # fault: left unset
        return messages.api_versions_response(keys, platform)
