"""Key-value tables, the ControllerService calls the Java client's KeyValueTableManager and KeyValueTableFactory make
(mixed into the ControllerService, using its metadata, store link and lock): a table is ``partitionCount`` table
segments of fixed-length keys (primary plus secondary key length), which the client reads and writes on the segment
store itself, choosing the partition by its key's hash over the key ranges the controller answers.

Upstream (Pravega v0.13.0): ControllerService.createKeyValueTable (controller/src/main/java/io/pravega/controller/
server/ControllerService.java:132-155) checks the name first (INVALID_TABLE_NAME), then requires partitionCount > 0,
primaryKeyLength > 0, secondaryKeyLength >= 0 and rolloverSizeBytes >= 0 (an IllegalArgumentException, answered as
a failed call); TableMetadataTasks.createKeyValueTable answers SCOPE_NOT_FOUND, and a table that exists TABLE_EXISTS
(the creation timestamp, the time of each call, never matches an earlier one's: isSameCreateRequest), and creates
its segments with the key length primary + secondary (CreateTableTask, createNewSegments). getKeyValueTableConfiguration
answers TABLE_NOT_FOUND for a table it does not know; deleteKeyValueTable deletes the segments, TABLE_NOT_FOUND for an
unknown table. The client needs the configuration and the segments (KeyValueTableImpl: the partition count must
equal the number of segments).
"""

from __future__ import annotations

import logging

import grpc

from wirecheck.broker.pravega.controller import controller_pb2 as pb
from wirecheck.broker.pravega.controller.model import KeyValueTable, table_segment_name, valid_name
from wirecheck.broker.pravega.controller.persist import mutates
from wirecheck.broker.pravega.controller.store_link import StoreError

log = logging.getLogger("wirecheck.broker.pravega.controller")


class KeyValueTableCalls:
    @mutates
    async def createKeyValueTable(self, request, context):
        status = pb.CreateKeyValueTableStatus
        if not valid_name(request.kvtName):
            return status(status=status.INVALID_TABLE_NAME)
        if (request.partitionCount <= 0 or request.primaryKeyLength <= 0 or request.secondaryKeyLength < 0
                or request.rolloverSizeBytes < 0):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "partitionCount and primaryKeyLength must be positive, secondaryKeyLength and "
                                "rolloverSizeBytes not negative")
        if request.scope not in self.meta.scopes:
            return status(status=status.SCOPE_NOT_FOUND)
        key = (request.scope, request.kvtName)
        async with self._lock:
            if key in self.meta.kv_tables:
                return status(status=status.TABLE_EXISTS)
            table = KeyValueTable(request.scope, request.kvtName, request.SerializeToString(), request.partitionCount)
            key_length = request.primaryKeyLength + request.secondaryKeyLength
            try:
                for segment in table.segments():
                    await self.store.create_table_segment(table_segment_name(table.scope, table.name, segment.id),
                                                          key_length, request.rolloverSizeBytes)
            except StoreError as exc:
                log.warning("create key-value table %s/%s: %s", table.scope, table.name, exc)
                return status(status=status.FAILURE)
            self.meta.kv_tables[key] = table
        return status(status=status.SUCCESS)

    async def getKeyValueTableConfiguration(self, request, context):
        response = pb.KeyValueTableConfigResponse
        table = self.meta.kv_tables.get((request.scope, request.kvtName))
        if table is None:
            return response(status=response.TABLE_NOT_FOUND)
        return response(status=response.SUCCESS, config=pb.KeyValueTableConfig.FromString(table.config))

    async def getCurrentSegmentsKeyValueTable(self, request, context):
        table = self.meta.kv_tables.get((request.scope, request.kvtName))
        if table is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no key-value table {request.scope}/{request.kvtName}")
        info = pb.StreamInfo(scope=table.scope, stream=table.name)
        ranges = [pb.SegmentRange(segmentId=pb.SegmentId(streamInfo=info, segmentId=s.id), minKey=s.low, maxKey=s.high)
                  for s in table.segments()]
        return pb.SegmentRanges(segmentRanges=ranges, delegationToken="")

    async def listKeyValueTablesInScope(self, request, context):
        response = pb.KVTablesInScopeResponse
        scope = request.scope.scope
        if scope not in self.meta.scopes:
            return response(status=response.SCOPE_NOT_FOUND)
        if request.continuationToken.token:  # one page: a non-empty token means the client has everything
            return response(status=response.SUCCESS, continuationToken=request.continuationToken)
        tables = [pb.KeyValueTableInfo(scope=t.scope, kvtName=t.name) for t in self.meta.tables_in(scope)]
        return response(kvtables=tables, continuationToken=pb.ContinuationToken(token="end"), status=response.SUCCESS)

    @mutates
    async def deleteKeyValueTable(self, request, context):
        status = pb.DeleteKVTableStatus
        key = (request.scope, request.kvtName)
        async with self._lock:
            table = self.meta.kv_tables.get(key)
            if table is None:
                return status(status=status.TABLE_NOT_FOUND)
            try:
                for segment in table.segments():
                    await self.store.delete_table_segment(table_segment_name(table.scope, table.name, segment.id))
            except StoreError as exc:
                log.warning("delete key-value table %s/%s: %s", table.scope, table.name, exc)
                return status(status=status.FAILURE)
            del self.meta.kv_tables[key]
        return status(status=status.SUCCESS)
