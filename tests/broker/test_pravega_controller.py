"""The reference broker's Pravega controller alone: grpc client stubs against ControllerService, with a recording
segment store in place of the real one, and the wire link's bytes against the spec's vectors."""

from __future__ import annotations

import asyncio
import struct
import threading

import grpc
import pytest

from wirecheck.broker.pravega.controller import controller_pb2 as pb
from wirecheck.broker.pravega.controller import controller_pb2_grpc as pb_grpc
from wirecheck.broker.pravega.controller.service import ControllerService
from wirecheck.broker.pravega.controller.store_link import StoreError, WireSegmentStore

STORE_PORT = 12345  # what getURI must answer; nothing listens there in these tests


class RecordingStore:
    """Records the lifecycle steps the controller asks of the segment store; ``fail`` makes the next one fail."""

    def __init__(self):
        self.steps: list[tuple] = []
        self.fail = False

    async def _step(self, *step):
        if self.fail:
            raise StoreError("store down")
        self.steps.append(step)

    async def create_segment(self, name):
        await self._step("create", name)

    async def seal_segment(self, name):
        await self._step("seal", name)

    async def truncate_segment(self, name, offset):
        await self._step("truncate", name, offset)

    async def delete_segment(self, name):
        await self._step("delete", name)

    async def create_table_segment(self, name, key_length, rollover):
        await self._step("create-table", name, key_length, rollover)

    async def delete_table_segment(self, name):
        await self._step("delete-table", name)


class LoopThread:
    """An event loop in a thread, so the blocking grpc stubs of the test can call the aio server."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def controller():
    store = RecordingStore()
    loop = LoopThread()

    async def start():
        server = grpc.aio.server()
        port = server.add_insecure_port("127.0.0.1:0")
        pb_grpc.add_ControllerServiceServicer_to_server(
            ControllerService(store, "127.0.0.1", STORE_PORT, ("127.0.0.1", port)), server)
        await server.start()
        return server, port

    server, port = loop.run(start())
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.ControllerServiceStub(channel)
    yield stub, store
    channel.close()
    loop.run(server.stop(None))
    loop.close()


def stream_info(scope="sc", stream="st"):
    return pb.StreamInfo(scope=scope, stream=stream)


def create_stream(stub, segments, scope="sc", stream="st"):
    config = pb.StreamConfig(streamInfo=stream_info(scope, stream),
                             scalingPolicy=pb.ScalingPolicy(minNumSegments=segments), tags=pb.Tags(tag=["t1"]))
    return stub.createStream(config, timeout=5).status


def current(stub, scope="sc", stream="st"):
    answer = stub.getCurrentSegments(stream_info(scope, stream), timeout=5)
    return [(r.segmentId.segmentId, r.minKey, r.maxKey) for r in answer.segmentRanges]


def test_scopes(controller):
    stub, _ = controller
    assert stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5).status == pb.CreateScopeStatus.SUCCESS
    assert stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5).status == pb.CreateScopeStatus.SCOPE_EXISTS
    assert stub.createScope(pb.ScopeInfo(scope="a/b"), timeout=5).status == pb.CreateScopeStatus.INVALID_SCOPE_NAME
    assert stub.checkScopeExists(pb.ScopeInfo(scope="sc"), timeout=5).exists
    assert not stub.checkScopeExists(pb.ScopeInfo(scope="other"), timeout=5).exists
    assert list(stub.listScopes(pb.ScopesRequest(), timeout=5).scopes) == ["sc"]
    create_stream(stub, 1)
    assert stub.deleteScope(pb.ScopeInfo(scope="sc"), timeout=5).status == pb.DeleteScopeStatus.SCOPE_NOT_EMPTY


def own(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The store steps on the stream's own segments, not its internal _MARK stream's."""
    return [step for step in steps if "/_MARK" not in step[1]]


def test_create_stream_creates_its_segments_in_the_store(controller):
    stub, store = controller
    assert create_stream(stub, 1) == pb.CreateStreamStatus.SCOPE_NOT_FOUND
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    assert create_stream(stub, 3) == pb.CreateStreamStatus.SUCCESS
    assert create_stream(stub, 3) == pb.CreateStreamStatus.STREAM_EXISTS
    # the stream's own segments (its _MARK stream's, which a reader group keeps positions in, come with it)
    assert own(store.steps) == [("create", f"sc/st/{n}.#epoch.0") for n in range(3)]
    assert current(stub) == [(0, 0.0, 1 / 3), (1, 1 / 3, 2 / 3), (2, 2 / 3, 1.0)]
    uri = stub.getURI(pb.SegmentId(streamInfo=stream_info(), segmentId=1), timeout=5)
    assert (uri.endpoint, uri.port) == ("127.0.0.1", STORE_PORT)
    config = stub.getStreamConfiguration(stream_info(), timeout=5)
    assert config.scalingPolicy.minNumSegments == 3 and list(config.tags.tag) == ["t1"]
    head = stub.getSegments(pb.GetSegmentsRequest(streamInfo=stream_info()), timeout=5)
    assert [(s.segmentId.segmentId, s.offset) for s in head.segments] == [(0, 0), (1, 0), (2, 0)]


def test_a_store_failure_leaves_no_stream(controller):
    stub, store = controller
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    store.fail = True
    assert create_stream(stub, 1) == pb.CreateStreamStatus.FAILURE
    assert not stub.checkStreamExists(stream_info(), timeout=5).exists
    store.fail = False
    assert create_stream(stub, 1) == pb.CreateStreamStatus.SUCCESS


def test_unknown_stream_is_not_found(controller):
    stub, _ = controller
    with pytest.raises(grpc.RpcError) as caught:
        stub.getCurrentSegments(stream_info("nope", "nope"), timeout=5)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_scale_splits_a_segment_into_the_next_epoch(controller):
    stub, store = controller
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    create_stream(stub, 2)
    store.steps.clear()
    request = pb.ScaleRequest(streamInfo=stream_info(), sealedSegments=[1],
                              newKeyRanges=[pb.ScaleRequest.KeyRangeEntry(start=0.5, end=0.75),
                                            pb.ScaleRequest.KeyRangeEntry(start=0.75, end=1.0)])
    answer = stub.scale(request, timeout=5)
    assert answer.status == pb.ScaleResponse.STARTED and answer.epoch == 1
    new = [(1 << 32) | 2, (1 << 32) | 3]
    assert [r.segmentId.segmentId for r in answer.segments] == new
    # successors exist before their predecessor is sealed
    assert store.steps == [("create", "sc/st/2.#epoch.1"), ("create", "sc/st/3.#epoch.1"),
                           ("seal", "sc/st/1.#epoch.0")]
    assert current(stub) == [(0, 0.0, 0.5), (new[0], 0.5, 0.75), (new[1], 0.75, 1.0)]
    successors = stub.getSegmentsImmediatelyFollowing(pb.SegmentId(streamInfo=stream_info(), segmentId=1), timeout=5)
    assert [(e.segment.segmentId.segmentId, list(e.value)) for e in successors.segments] == [(new[0], [1]),
                                                                                              (new[1], [1])]
    assert stub.checkScale(pb.ScaleStatusRequest(streamInfo=stream_info(), epoch=1),
                           timeout=5).status == pb.ScaleStatusResponse.SUCCESS
    epoch0 = stub.getEpochSegments(pb.GetEpochSegmentsRequest(streamInfo=stream_info(), epoch=0), timeout=5)
    assert [r.segmentId.segmentId for r in epoch0.segmentRanges] == [0, 1]


def test_scale_with_ranges_that_do_not_cover_the_sealed_segment_is_refused(controller):
    stub, store = controller
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    create_stream(stub, 2)
    store.steps.clear()
    gap = pb.ScaleRequest(streamInfo=stream_info(), sealedSegments=[1],
                          newKeyRanges=[pb.ScaleRequest.KeyRangeEntry(start=0.5, end=0.9)])
    assert stub.scale(gap, timeout=5).status == pb.ScaleResponse.PRECONDITION_FAILED
    assert store.steps == []
    assert current(stub) == [(0, 0.0, 0.5), (1, 0.5, 1.0)]


def test_seal_then_delete(controller):
    stub, store = controller
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    create_stream(stub, 2)
    store.steps.clear()
    assert stub.deleteStream(stream_info(), timeout=5).status == pb.DeleteStreamStatus.STREAM_NOT_SEALED
    assert stub.sealStream(stream_info(), timeout=5).status == pb.UpdateStreamStatus.SUCCESS
    assert own(store.steps) == [("seal", "sc/st/0.#epoch.0"), ("seal", "sc/st/1.#epoch.0")]
    # a sealed segment with no successor: the client reads the empty answer as "stream sealed"
    successors = stub.getSegmentsImmediatelyFollowing(pb.SegmentId(streamInfo=stream_info(), segmentId=0), timeout=5)
    assert list(successors.segments) == []
    assert not stub.isSegmentValid(pb.SegmentId(streamInfo=stream_info(), segmentId=0), timeout=5).response
    assert stub.deleteStream(stream_info(), timeout=5).status == pb.DeleteStreamStatus.SUCCESS
    assert own(store.steps)[2:] == [("delete", "sc/st/0.#epoch.0"), ("delete", "sc/st/1.#epoch.0")]
    assert not stub.checkStreamExists(stream_info(), timeout=5).exists


def test_truncate_moves_the_head(controller):
    stub, store = controller
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    create_stream(stub, 2)
    store.steps.clear()
    cut = pb.StreamCut(streamInfo=stream_info(), cut={0: 26, 1: 0})
    assert stub.truncateStream(cut, timeout=5).status == pb.UpdateStreamStatus.SUCCESS
    assert store.steps == [("truncate", "sc/st/0.#epoch.0", 26)]
    head = stub.getSegments(pb.GetSegmentsRequest(streamInfo=stream_info()), timeout=5)
    assert [(s.segmentId.segmentId, s.offset) for s in head.segments] == [(0, 26), (1, 0)]
    unknown = pb.StreamCut(streamInfo=stream_info(), cut={7: 1})
    assert stub.truncateStream(unknown, timeout=5).status == pb.UpdateStreamStatus.FAILURE


def test_reader_group_lifecycle(controller):
    stub, _ = controller
    config = pb.ReaderGroupConfiguration(scope="sc", readerGroupName="rg", groupRefreshTimeMillis=3000)
    assert stub.createReaderGroup(config, timeout=5).status == pb.CreateReaderGroupResponse.SCOPE_NOT_FOUND
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    created = stub.createReaderGroup(config, timeout=5)
    assert created.status == pb.CreateReaderGroupResponse.SUCCESS and created.config.generation == 0
    info = pb.ReaderGroupInfo(scope="sc", readerGroup="rg")
    assert stub.getReaderGroupConfig(info, timeout=5).config.groupRefreshTimeMillis == 3000
    update = pb.ReaderGroupConfiguration(scope="sc", readerGroupName="rg", groupRefreshTimeMillis=10, generation=0)
    updated = stub.updateReaderGroup(update, timeout=5)
    assert updated.status == pb.UpdateReaderGroupResponse.SUCCESS and updated.generation == 1
    assert stub.updateReaderGroup(update, timeout=5).status == pb.UpdateReaderGroupResponse.INVALID_CONFIG
    assert stub.deleteReaderGroup(info, timeout=5).status == pb.DeleteReaderGroupStatus.SUCCESS
    assert stub.getReaderGroupConfig(info, timeout=5).status == pb.ReaderGroupConfigResponse.RG_NOT_FOUND


def test_key_value_table_lifecycle(controller):
    """Pravega v0.13.0's answers (ControllerService.createKeyValueTable, TableMetadataTasks): the name first, then
    the scope; a second creation TABLE_EXISTS; one table segment per partition, of the primary plus secondary key
    length, named after the table with "_kvtable"; deleting it deletes them; a scope holding it is not empty."""
    stub, store = controller
    config = pb.KeyValueTableConfig(scope="sc", kvtName="kv", partitionCount=2, primaryKeyLength=8,
                                    secondaryKeyLength=4, rolloverSizeBytes=1024)
    status, info = pb.CreateKeyValueTableStatus, pb.KeyValueTableInfo(scope="sc", kvtName="kv")
    assert stub.createKeyValueTable(config, timeout=5).status == status.SCOPE_NOT_FOUND
    bad = pb.KeyValueTableConfig(scope="sc", kvtName="a/b", partitionCount=1, primaryKeyLength=1)
    assert stub.createKeyValueTable(bad, timeout=5).status == status.INVALID_TABLE_NAME
    stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
    with pytest.raises(grpc.RpcError) as refused:
        stub.createKeyValueTable(pb.KeyValueTableConfig(scope="sc", kvtName="kv", partitionCount=0,
                                                        primaryKeyLength=8), timeout=5)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert stub.getKeyValueTableConfiguration(info, timeout=5).status == pb.KeyValueTableConfigResponse.TABLE_NOT_FOUND
    assert stub.createKeyValueTable(config, timeout=5).status == status.SUCCESS
    assert stub.createKeyValueTable(config, timeout=5).status == status.TABLE_EXISTS
    assert store.steps == [("create-table", f"sc/kv_kvtable/{n}.#epoch.0", 12, 1024) for n in range(2)]
    answer = stub.getKeyValueTableConfiguration(info, timeout=5)
    assert answer.status == pb.KeyValueTableConfigResponse.SUCCESS and answer.config == config
    segments = stub.getCurrentSegmentsKeyValueTable(info, timeout=5).segmentRanges
    assert [(r.segmentId.streamInfo.stream, r.segmentId.segmentId, r.minKey, r.maxKey) for r in segments] == \
        [("kv", 0, 0.0, 0.5), ("kv", 1, 0.5, 1.0)]
    listed = stub.listKeyValueTablesInScope(pb.KVTablesInScopeRequest(scope=pb.ScopeInfo(scope="sc")), timeout=5)
    assert [t.kvtName for t in listed.kvtables] == ["kv"]
    assert stub.deleteScope(pb.ScopeInfo(scope="sc"), timeout=5).status == pb.DeleteScopeStatus.SCOPE_NOT_EMPTY
    assert stub.deleteKeyValueTable(info, timeout=5).status == pb.DeleteKVTableStatus.SUCCESS
    assert store.steps[2:] == [("delete-table", f"sc/kv_kvtable/{n}.#epoch.0") for n in range(2)]
    assert stub.deleteKeyValueTable(info, timeout=5).status == pb.DeleteKVTableStatus.TABLE_NOT_FOUND
    with pytest.raises(grpc.RpcError) as missing:
        stub.getCurrentSegmentsKeyValueTable(info, timeout=5)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert stub.deleteScope(pb.ScopeInfo(scope="sc"), timeout=5).status == pb.DeleteScopeStatus.SUCCESS


def test_a_transaction_on_an_unknown_stream_is_not_found(controller):
    stub, _ = controller
    with pytest.raises(grpc.RpcError) as caught:
        stub.createTransaction(pb.CreateTxnRequest(streamInfo=stream_info()), timeout=5)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


# ---- the wire link to the segment store ----

def test_wire_link_sends_the_spec_layouts_and_accepts_idempotent_answers():
    """CreateSegment(rid=4, "x", rate=0, scale=0, "", rollover=0) is the spec's vector (§10.2); SegmentAlreadyExists
    counts as created, NoSuchSegment as deleted, anything else is a StoreError."""
    received = []

    async def store(reader, writer):
        while True:
            try:
                kind, length = struct.unpack(">ii", await reader.readexactly(8))
            except asyncio.IncompleteReadError:
                return
            body = await reader.readexactly(length)
            received.append(struct.pack(">ii", kind, length) + body)
            rid = body[:8]
            answer = {20: (52, rid + b"\x00\x01x\x00\x00"), 30: (53, rid + b"\x00\x01x\x00\x00" + b"\xff" * 8),
                      28: (61, rid + b"\x00\x01x\x00\x01m\x00\x00\x00\x00")}[kind]
            writer.write(struct.pack(">ii", 100, 0))  # a KeepAlive in between is skipped
            writer.write(struct.pack(">ii", answer[0], len(answer[1])) + answer[1])

    async def scenario():
        server = await asyncio.start_server(store, "127.0.0.1", 0)
        link = WireSegmentStore("127.0.0.1", server.sockets[0].getsockname()[1])
        for _ in range(3):
            next(link._ids)  # the next request id is 4, as in the vector
        await link.create_segment("x")
        await link.delete_segment("x")
        with pytest.raises(StoreError):
            await link.seal_segment("x")
        await link.close()
        server.close()
        await server.wait_closed()

    asyncio.run(scenario())
    assert received[0].hex() == "000000140000001a" "0000000000000004" "000178" "00000000" "00" "0000" "0000000000000000"
    assert received[1].hex() == "0000001e0000000d" "0000000000000005" "000178" "0000"
    assert received[2].hex() == "0000001c0000000d" "0000000000000006" "000178" "0000"


def test_a_link_the_store_closed_while_idle_is_reopened_for_the_step():
    """The store closes an idle connection (its idle timeout): the next step goes over a new one, not a failure."""
    connections = []

    async def store(reader, writer):
        connections.append(writer)
        kind, length = struct.unpack(">ii", await reader.readexactly(8))
        rid = (await reader.readexactly(length))[:8]
        writer.write(struct.pack(">ii", 52, 13) + rid + b"\x00\x01x\x00\x00")  # SegmentCreated
        await writer.drain()
        writer.close()  # then idle: closed

    async def scenario():
        server = await asyncio.start_server(store, "127.0.0.1", 0)
        link = WireSegmentStore("127.0.0.1", server.sockets[0].getsockname()[1])
        await link.create_segment("x")
        await asyncio.sleep(0.1)
        await link.create_segment("y")  # the first link is closed by now
        await link.close()
        server.close()
        await server.wait_closed()

    asyncio.run(scenario())
    assert len(connections) == 2


# ---- beside the segment store, in the broker ----

def test_the_broker_starts_the_controller_beside_the_store(tmp_path):
    """Ephemeral like the store when the store is; getURI names the store; a stream's segments exist in the store
    (the controller created them over the wire: creating one again is SegmentAlreadyExists)."""
    from wirecheck.targets.launcher import launch

    broker = launch(["pravega"], workdir=tmp_path / "on")
    try:
        store_port, port = broker.ports["pravega"], broker.ports["pravega-controller"]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ControllerServiceStub(channel)
            stub.createScope(pb.ScopeInfo(scope="sc"), timeout=5)
            assert create_stream(stub, 1) == pb.CreateStreamStatus.SUCCESS
            uri = stub.getURI(pb.SegmentId(streamInfo=stream_info(), segmentId=0), timeout=5)
            assert (uri.endpoint, uri.port) == ("127.0.0.1", store_port)

        async def create_again():
            reader, writer = await asyncio.open_connection("127.0.0.1", store_port)
            name = b"sc/st/0.#epoch.0"
            payload = struct.pack(">qH", 9, len(name)) + name + struct.pack(">ibHq", 0, 0, 0, 0)
            writer.write(struct.pack(">ii", 20, len(payload)) + payload)
            kind, _ = struct.unpack(">ii", await asyncio.wait_for(reader.readexactly(8), 5))
            writer.close()
            return kind

        assert asyncio.run(create_again()) == 52  # SegmentAlreadyExists
    finally:
        broker.stop()
    off = launch(["pravega"], workdir=tmp_path / "off", extra_args=["--pravega-controller-port", "-1"])
    try:
        assert set(off.ports) == {"pravega"}
    finally:
        off.stop()


# -- the metadata snapshot (--data-dir) ---------------------------------------------------------------------------


def test_the_metadata_snapshot_round_trips(tmp_path):
    from wirecheck.broker.pravega.controller.model import KeyValueTable, Metadata
    from wirecheck.broker.pravega.controller.persist import MetadataFile

    meta = Metadata()
    meta.scopes |= {"s", "t"}
    stream = meta.create_stream("s", "events", 2, b"\x00config\xff", ("tag",))
    Metadata.scale(stream, [stream.epochs[0][0]], [(0.0, 0.25), (0.25, 0.5)])
    stream.head = {stream.epochs[0][1]: 42}
    stream.sealed = True
    meta.add_reader_group("s", "rg", b"\x01group")
    meta.kv_tables[("s", "kv")] = KeyValueTable("s", "kv", b"\x02table", 3)
    file = MetadataFile(tmp_path, fsync=True)
    file.save(meta)
    again = file.load()
    assert again.scopes == meta.scopes and again.reader_groups == meta.reader_groups
    assert again.kv_tables == meta.kv_tables
    assert again.streams == meta.streams
    assert not (tmp_path / "controller.json.tmp").exists()  # written whole, then renamed


def test_an_unreadable_snapshot_is_an_error_naming_the_file(tmp_path):
    from wirecheck.broker.pravega.controller.persist import FILE_NAME, MetadataFile

    (tmp_path / FILE_NAME).write_text('{"scopes": [')
    with pytest.raises(RuntimeError, match=FILE_NAME):
        MetadataFile(tmp_path, fsync=False).load()
