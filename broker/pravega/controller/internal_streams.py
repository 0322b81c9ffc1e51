"""The internal streams the controller keeps beside the users' (mixed into the ControllerService, using its
metadata, store link and lock): a stream's watermarks stream and a reader group's state stream, one segment each,
which the Java client reads; upstream's controller makes them with the stream and the group (Pravega v0.13.0
controller/src/main/java/io/pravega/controller/task/Stream/StreamMetadataTasks.java: createMarkStream, 1807 and
1859-1876; createRGStream, 461-463)."""

from __future__ import annotations

import logging

from wirecheck.broker.pravega.controller import controller_pb2 as pb
from wirecheck.broker.pravega.controller.model import segment_name
from wirecheck.broker.pravega.controller.store_link import StoreError

log = logging.getLogger("wirecheck.broker.pravega.controller")
#: a reader group's state stream is "_RG" + its name, a stream's watermarks stream "_MARK" + its name
#: (shared/protocol/src/main/java/io/pravega/shared/NameUtils.java: READER_GROUP_STREAM_PREFIX, MARK_PREFIX)
READER_GROUP_STREAM_PREFIX = "_RG"
MARK_PREFIX = "_MARK"


class InternalStreams:
    async def _drop_stream(self, scope: str, name: str) -> bool:
        """An internal stream deleted with what owns it (none is fine); False when the store refused."""
        async with self._lock:
            stream = self.meta.streams.get((scope, name))
            if stream is None:
                return True
            try:
                for segment in stream.segments.values():
                    await self.store.delete_segment(segment_name(scope, name, segment.id))
            except StoreError as exc:
                log.warning("delete internal stream %s/%s: %s", scope, name, exc)
                return False
            del self.meta.streams[(scope, name)]
        return True

    async def _internal_stream(self, scope: str, name: str) -> bool:
        """An internal stream of one segment (a stream's watermarks, a reader group's state), unless it exists;
        False when the store refused its segment."""
        async with self._lock:
            if (scope, name) in self.meta.streams:
                return True
            fixed = pb.ScalingPolicy(scaleType=pb.ScalingPolicy.FIXED_NUM_SEGMENTS, minNumSegments=1)
            config = pb.StreamConfig(streamInfo=pb.StreamInfo(scope=scope, stream=name), scalingPolicy=fixed)
            stream = self.meta.create_stream(scope, name, 1, config.SerializeToString(), ())
            try:
                for segment in stream.active():
                    await self.store.create_segment(segment_name(scope, name, segment.id))
            except StoreError as exc:
                log.warning("create reader group stream %s/%s: %s", scope, name, exc)
                del self.meta.streams[(scope, name)]
                return False
        return True
