"""RustLog's consumer offsets: OffsetCommit and OffsetFetch, kept in memory as the seed says.

A handler family of the personality (server.py), registered by request kind in ``HANDLERS``.
"""

from __future__ import annotations

from wirecheck.broker.rustlog.lookups import Lookups


class OffsetHandlers(Lookups):
    async def offset_commit(self, group: str, topic: str, partition: int, offset: int) -> bytes:
        # D9: an unknown (or invalid) topic or partition answers success false, not an Error. Commits beyond
        # the high watermark are accepted, as Kafka does.
        exists = self.partition_exists(topic, partition)
        if exists:
            self.store.commits[self.commit_key(group, topic, partition)] = offset
        success = exists or self.faults.commit_unknown_topic_succeeds
        return self.response("OffsetCommitResponse", success=success)

    async def offset_fetch(self, group: str, topic: str, partition: int) -> bytes:
        offset = self.store.commits.get(self.commit_key(group, topic, partition))
        if offset is None and self.faults.offset_fetch_zero:
            offset = 0
        return self.response("OffsetFetchResponse", offset=offset)


HANDLERS = {"OffsetCommit": OffsetHandlers.offset_commit, "OffsetFetch": OffsetHandlers.offset_fetch}
