"""The ControllerService calls the clients make, over the metadata (model.py) and the segment store (store_link.py).

Answers follow the Controller API's status enums; transactions are transactions.py's, key-value tables
key_value_tables.py's; a call the reference does not serve (subscribers, watermarks) is left to grpc's
UNIMPLEMENTED, so a client that needs it fails loudly. Auth is
off: every delegation token is "" (the segment store accepts any token).
"""

from __future__ import annotations

import asyncio
import logging

import grpc

from wirecheck.broker.pravega.controller import controller_pb2 as pb
from wirecheck.broker.pravega.controller import controller_pb2_grpc as pb_grpc
from wirecheck.broker.pravega.controller.model import Metadata, ScaleError, Stream, segment_name, valid_name
from wirecheck.broker.pravega.controller.persist import MetadataFile, mutates
from wirecheck.broker.pravega.controller.store_link import SegmentStore, StoreError
from wirecheck.broker.pravega.controller.internal_streams import (
    MARK_PREFIX,
    READER_GROUP_STREAM_PREFIX,
    InternalStreams,
)
from wirecheck.broker.pravega.controller.key_value_tables import KeyValueTableCalls
from wirecheck.broker.pravega.controller.transactions import TransactionCalls

log = logging.getLogger("wirecheck.broker.pravega.controller")


class ControllerService(InternalStreams, TransactionCalls, KeyValueTableCalls, pb_grpc.ControllerServiceServicer):
    def __init__(self, store: SegmentStore, store_host: str, store_port: int, controller_uri: tuple[str, int],
                 state: MetadataFile | None = None):
        self.state = state  # None: the metadata lives in memory only
        self.meta = state.load() if state is not None else Metadata()
        self.store = store
        self.store_uri = pb.NodeUri(endpoint=store_host, port=store_port)
        self.controller_uri = pb.NodeUri(endpoint=controller_uri[0], port=controller_uri[1])
        self._lock = asyncio.Lock()  # one metadata change at a time: each spans awaits on the store

    # ---- discovery and auth ----

    async def getControllerServerList(self, request, context):
        return pb.ServerResponse(nodeURI=[self.controller_uri])

    async def getURI(self, request, context):
        # One segment store holds every segment, the table segments the clients create themselves included.
        return self.store_uri

    async def getDelegationToken(self, request, context):
        return pb.DelegationToken(delegationToken="")

    # ---- scopes ----

    @mutates
    async def createScope(self, request, context):
        status = pb.CreateScopeStatus
        if not valid_name(request.scope):
            return status(status=status.INVALID_SCOPE_NAME)
        if request.scope in self.meta.scopes:
            return status(status=status.SCOPE_EXISTS)
        self.meta.scopes.add(request.scope)
        return status(status=status.SUCCESS)

    async def checkScopeExists(self, request, context):
        return pb.ExistsResponse(exists=request.scope in self.meta.scopes)

    async def listScopes(self, request, context):
        # One page: a non-empty token means the client already has everything.
        if request.continuationToken.token:
            return pb.ScopesResponse(continuationToken=request.continuationToken)
        return pb.ScopesResponse(scopes=sorted(self.meta.scopes), continuationToken=pb.ContinuationToken(token="end"))

    @mutates
    async def deleteScope(self, request, context):
        status = pb.DeleteScopeStatus
        if request.scope not in self.meta.scopes:
            return status(status=status.SCOPE_NOT_FOUND)
        if self.meta.streams_in(request.scope) or self.meta.tables_in(request.scope):
            return status(status=status.SCOPE_NOT_EMPTY)
        self.meta.scopes.discard(request.scope)
        return status(status=status.SUCCESS)

    # ---- streams ----

    @mutates
    async def createStream(self, request, context):
        status = pb.CreateStreamStatus
        info = request.streamInfo
        if info.scope not in self.meta.scopes:
            return status(status=status.SCOPE_NOT_FOUND)
        if not valid_name(info.stream):
            return status(status=status.INVALID_STREAM_NAME)
        async with self._lock:
            if (info.scope, info.stream) in self.meta.streams:
                return status(status=status.STREAM_EXISTS)
            stream = self.meta.create_stream(info.scope, info.stream, request.scalingPolicy.minNumSegments,
                                             request.SerializeToString(), tuple(request.tags.tag))
            try:
                for segment in stream.active():
                    await self.store.create_segment(segment_name(info.scope, info.stream, segment.id))
            except StoreError as exc:
                log.warning("create stream %s/%s: %s", info.scope, info.stream, exc)
                del self.meta.streams[(info.scope, info.stream)]
                return status(status=status.FAILURE)
        # its watermarks stream, which the Java client's readers read: the upstream controller creates it with every
        # stream (StreamMetadataTasks.java:1807 at v0.13.0, createMarkStream: one segment)
        if not await self._internal_stream(info.scope, MARK_PREFIX + info.stream):
            return status(status=status.FAILURE)
        return status(status=status.SUCCESS)

    async def checkStreamExists(self, request, context):
        return pb.ExistsResponse(exists=(request.scope, request.stream) in self.meta.streams)

    async def getStreamConfiguration(self, request, context):
        stream = await self._stream(request, context)
        return pb.StreamConfig.FromString(stream.config)

    @mutates
    async def updateStream(self, request, context):
        status = pb.UpdateStreamStatus
        info = request.streamInfo
        if info.scope not in self.meta.scopes:
            return status(status=status.SCOPE_NOT_FOUND)
        stream = self.meta.streams.get((info.scope, info.stream))
        if stream is None:
            return status(status=status.STREAM_NOT_FOUND)
        # The policy is recorded and answered back; the reference never scales on its own.
        stream.config, stream.tags = request.SerializeToString(), tuple(request.tags.tag)
        return status(status=status.SUCCESS)

    async def listStreamsInScope(self, request, context):
        return self._list_streams(request.scope.scope, request.continuationToken, lambda stream: True)

    async def listStreamsInScopeForTag(self, request, context):
        return self._list_streams(request.scope.scope, request.continuationToken,
                                  lambda stream: request.tag in stream.tags)

    def _list_streams(self, scope: str, token, keep):
        response = pb.StreamsInScopeResponse
        if scope not in self.meta.scopes:
            return response(status=response.SCOPE_NOT_FOUND)
        if token.token:
            return response(status=response.SUCCESS, continuationToken=token)
        streams = [pb.StreamInfo(scope=s.scope, stream=s.name) for s in self.meta.streams_in(scope) if keep(s)]
        return response(streams=streams, continuationToken=pb.ContinuationToken(token="end"), status=response.SUCCESS)

    @mutates
    async def sealStream(self, request, context):
        status = pb.UpdateStreamStatus
        stream = self.meta.streams.get((request.scope, request.stream))
        if stream is None:
            return status(status=status.STREAM_NOT_FOUND)
        async with self._lock:
            try:
                for segment in stream.active():
                    await self.store.seal_segment(segment_name(stream.scope, stream.name, segment.id))
            except StoreError as exc:
                log.warning("seal stream %s/%s: %s", stream.scope, stream.name, exc)
                return status(status=status.FAILURE)
            stream.sealed = True
        return status(status=status.SUCCESS)

    @mutates
    async def deleteStream(self, request, context):
        status = pb.DeleteStreamStatus
        stream = self.meta.streams.get((request.scope, request.stream))
        if stream is None:
            return status(status=status.STREAM_NOT_FOUND)
        if not stream.sealed:
            return status(status=status.STREAM_NOT_SEALED)
        async with self._lock:
            try:
                for segment in stream.segments.values():
                    await self.store.delete_segment(segment_name(stream.scope, stream.name, segment.id))
            except StoreError as exc:
                log.warning("delete stream %s/%s: %s", stream.scope, stream.name, exc)
                return status(status=status.FAILURE)
            del self.meta.streams[(stream.scope, stream.name)]
        if not await self._drop_stream(request.scope, MARK_PREFIX + request.stream):  # its watermarks go with it
            return status(status=status.FAILURE)
        return status(status=status.SUCCESS)

    @mutates
    async def truncateStream(self, request, context):
        status = pb.UpdateStreamStatus
        info = request.streamInfo
        stream = self.meta.streams.get((info.scope, info.stream))
        if stream is None:
            return status(status=status.STREAM_NOT_FOUND)
        cut = dict(request.cut)
        if any(segment not in stream.segments for segment in cut):
            return status(status=status.FAILURE)
        async with self._lock:
            try:
                for segment, offset in sorted(cut.items()):
                    if offset > 0:
                        await self.store.truncate_segment(segment_name(stream.scope, stream.name, segment), offset)
            except StoreError as exc:
                log.warning("truncate stream %s/%s: %s", stream.scope, stream.name, exc)
                return status(status=status.FAILURE)
            stream.head = cut
        return status(status=status.SUCCESS)

    # ---- segments ----

    async def getCurrentSegments(self, request, context):
        stream = await self._stream(request, context)
        return pb.SegmentRanges(segmentRanges=[self._range(stream, s) for s in stream.active()], delegationToken="")

    async def getEpochSegments(self, request, context):
        stream = await self._stream(request.streamInfo, context)
        if not 0 <= request.epoch <= stream.epoch:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"no epoch {request.epoch}")
        segments = [stream.segments[s] for s in stream.epochs[request.epoch]]
        return pb.SegmentRanges(segmentRanges=[self._range(stream, s) for s in segments], delegationToken="")

    async def getSegments(self, request, context):
        """The stream's head: the last truncation's cut, or the first epoch at offset 0 (timestamps are not
        kept, so every timestamp is answered with the head)."""
        stream = await self._stream(request.streamInfo, context)
        cut = stream.head or {segment: 0 for segment in stream.epochs[0]}
        locations = [pb.SegmentsAtTime.SegmentLocation(segmentId=self._id(stream, segment), offset=offset)
                     for segment, offset in sorted(cut.items())]
        return pb.SegmentsAtTime(segments=locations, delegationToken="")

    async def getSegmentsImmediatelyFollowing(self, request, context):
        """The successors of a segment, each with its predecessors. None for a segment that is still active, or
        whose stream was sealed without a scale: the client reads an empty answer as "the stream is sealed"."""
        stream = await self._stream(request.streamInfo, context)
        if request.segmentId not in stream.segments:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no segment {request.segmentId}")
        entries = [pb.SuccessorResponse.SegmentEntry(segment=self._range(stream, s), value=list(s.predecessors))
                   for s in stream.successors(request.segmentId)]
        return pb.SuccessorResponse(segments=entries, delegationToken="")

    getSegmentsImmediatlyFollowing = getSegmentsImmediatelyFollowing  # the API's old, misspelt name

    async def getSegmentsBetween(self, request, context):
        """Every segment from the ``from`` cut to the ``to`` cut (both ends of the stream when a cut is empty)."""
        stream = await self._stream(request.streamInfo, context)
        low = min((s >> 32 for s in getattr(request, "from")), default=0)
        high = max((s >> 32 for s in request.to), default=stream.epoch)
        ids = sorted({s for epoch in stream.epochs[low:high + 1] for s in epoch})
        return pb.StreamCutRangeResponse(segments=[self._id(stream, s) for s in ids], delegationToken="")

    async def isSegmentValid(self, request, context):
        stream = self.meta.streams.get((request.streamInfo.scope, request.streamInfo.stream))
        valid = stream is not None and not stream.sealed and request.segmentId in stream.epochs[-1]
        return pb.SegmentValidityResponse(response=valid)

    async def isStreamCutValid(self, request, context):
        stream = self.meta.streams.get((request.streamInfo.scope, request.streamInfo.stream))
        valid = stream is not None and all(segment in stream.segments for segment in request.cut)
        return pb.StreamCutValidityResponse(response=valid)

    @mutates
    async def scale(self, request, context):
        response = pb.ScaleResponse
        stream = await self._stream(request.streamInfo, context)
        ranges = [(entry.start, entry.end) for entry in request.newKeyRanges]
        async with self._lock:
            try:
                created = self.meta.scale(stream, list(request.sealedSegments), ranges)
            except ScaleError as exc:
                log.info("scale %s/%s refused: %s", stream.scope, stream.name, exc)
                return response(status=response.PRECONDITION_FAILED)
            try:
                # Successors exist before their predecessors seal: a writer told "sealed" finds them at once.
                for segment in created:
                    await self.store.create_segment(segment_name(stream.scope, stream.name, segment.id))
                for segment in request.sealedSegments:
                    await self.store.seal_segment(segment_name(stream.scope, stream.name, segment))
            except StoreError as exc:
                log.warning("scale %s/%s: %s", stream.scope, stream.name, exc)
                return response(status=response.FAILURE)
        return response(status=response.STARTED, segments=[self._range(stream, s) for s in created],
                        epoch=stream.epoch)

    async def checkScale(self, request, context):
        response = pb.ScaleStatusResponse
        stream = self.meta.streams.get((request.streamInfo.scope, request.streamInfo.stream))
        if stream is None or request.epoch > stream.epoch:
            return response(status=response.INVALID_INPUT)
        return response(status=response.SUCCESS)  # a scale completes before its call returns

    # ---- reader groups (the Java client's; the Rust client keeps its reader group in a table segment) ----

    @mutates
    async def createReaderGroup(self, request, context):
        response = pb.CreateReaderGroupResponse
        if request.scope not in self.meta.scopes:
            return response(status=response.SCOPE_NOT_FOUND)
        if not valid_name(request.readerGroupName):
            return response(status=response.INVALID_RG_NAME)
        key = (request.scope, request.readerGroupName)
        group = self.meta.reader_groups.get(key)
        if group is None:  # creating an existing group answers its configuration (idempotent create)
            config = pb.ReaderGroupConfiguration()
            config.CopyFrom(request)
            config.generation = 0
            config.readerGroupId = config.readerGroupId or f"{request.scope}/{request.readerGroupName}"
            # its state stream, which the Java client's state synchronizer reads and writes (the Rust client keeps
            # its group in a table segment instead): the upstream controller creates it with the group
            # (StreamMetadataTasks.java:461-463 at v0.13.0, createRGStream: one segment)
            if not await self._internal_stream(request.scope, READER_GROUP_STREAM_PREFIX + request.readerGroupName):
                return response(status=response.FAILURE)
            group = self.meta.add_reader_group(request.scope, request.readerGroupName, config.SerializeToString())
        return response(status=response.SUCCESS, config=pb.ReaderGroupConfiguration.FromString(group.config))

    async def getReaderGroupConfig(self, request, context):
        response = pb.ReaderGroupConfigResponse
        group = self.meta.reader_groups.get((request.scope, request.readerGroup))
        if group is None:
            return response(status=response.RG_NOT_FOUND)
        return response(status=response.SUCCESS, config=pb.ReaderGroupConfiguration.FromString(group.config))

    @mutates
    async def updateReaderGroup(self, request, context):
        response = pb.UpdateReaderGroupResponse
        group = self.meta.reader_groups.get((request.scope, request.readerGroupName))
        if group is None:
            return response(status=response.RG_NOT_FOUND)
        current = pb.ReaderGroupConfiguration.FromString(group.config)
        if request.generation != current.generation:
            return response(status=response.INVALID_CONFIG, generation=current.generation)
        config = pb.ReaderGroupConfiguration()
        config.CopyFrom(request)
        config.generation = current.generation + 1
        config.readerGroupId = current.readerGroupId
        group.config = config.SerializeToString()
        return response(status=response.SUCCESS, generation=config.generation)

    @mutates
    async def deleteReaderGroup(self, request, context):
        response = pb.DeleteReaderGroupStatus
        if self.meta.reader_groups.pop((request.scope, request.readerGroup), None) is None:
            return response(status=response.RG_NOT_FOUND)
        # its state stream goes with it (upstream deletes it with the group)
        if not await self._drop_stream(request.scope, READER_GROUP_STREAM_PREFIX + request.readerGroup):
            return response(status=response.FAILURE)
        return response(status=response.SUCCESS)

    # ---- helpers ----

    async def _stream(self, info, context) -> Stream:
        stream = self.meta.streams.get((info.scope, info.stream))
        if stream is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no stream {info.scope}/{info.stream}")
        return stream

    @staticmethod
    def _id(stream: Stream, segment: int):
        return pb.SegmentId(streamInfo=pb.StreamInfo(scope=stream.scope, stream=stream.name), segmentId=segment)

    def _range(self, stream: Stream, segment):
        return pb.SegmentRange(segmentId=self._id(stream, segment.id), minKey=segment.low, maxKey=segment.high)
