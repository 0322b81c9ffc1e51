"""Fluvio SPU values for Hypothesis, built from ``protocols.fluvio``: records, batches, RecordSets, every
codec's values, Produce and Fetch bodies and whole request frames, for property-based cases (they shrink a
failure to one frame); and :func:`produce_frame`, the valid Produce the bulk mutants start from."""

from __future__ import annotations

from hypothesis import strategies as st

from wirecheck.protocols.fluvio import errors, messages, records, sc, wire


# -- valid values ------------------------------------------------------------------------------------------------


def _sized_binary(max_size: int):
    # Hypothesis' st.binary is tiny on average (stack notes): draw the size first.
    return st.integers(0, max_size).flatmap(lambda n: st.binary(min_size=n, max_size=n))


@st.composite
def records_(draw, max_records: int = 4, max_value: int = 48, wide_varints: bool = False) -> list[records.Record]:
    """Records with offset deltas 0..n-1; ``wide_varints`` draws timestamp deltas outside the i32 range (which
    upstream's encoder cannot write, A11, but its decoder and the SPU's storage take)."""
    count = draw(st.integers(1, max_records))
    deltas = st.integers(-(2**62), 2**62) if wide_varints else st.integers(0, 10_000)
    return [records.Record(value=draw(_sized_binary(max_value)), key=draw(st.none() | _sized_binary(12)),
                           timestamp_delta=draw(deltas), offset_delta=i, headers=draw(st.sampled_from([0, 0, 1])))
            for i in range(count)]


@st.composite
def batches(draw, codecs=tuple(records.CODECS), schema: bool | None = None, wide_varints: bool = False) -> bytes:
    recs = draw(records_(wide_varints=wide_varints))
    with_schema = draw(st.booleans()) if schema is None else schema
    return records.encode_batch(records.Batch(
        records=recs, compression=draw(st.sampled_from(codecs)),
        schema_id=draw(st.integers(0, 2**32 - 1)) if with_schema else None,
        first_timestamp=draw(st.sampled_from([-1, 0, 1_700_000_000_000])),
        max_time_stamp=draw(st.sampled_from([-1, 1_700_000_000_000])),
        partition_leader_epoch=draw(st.sampled_from([-1, 0]))))


def record_sets(max_batches: int = 3, **options):
    return st.lists(batches(**options), min_size=0, max_size=max_batches).map(b"".join)


def codec_values(codec, version: int, max_items: int = 3):
    """Values the codec writes at ``version`` and reads back unchanged (one per codec kind of protocols.fluvio)."""
    if isinstance(codec, wire.Plain):
        return st.integers(codec.codec.low, codec.codec.high)
    if codec is wire.BOOL:
        return st.booleans()
    if codec is wire.STRING:
        return st.text(max_size=24)
    if codec in (wire.BYTES, errors.RECORD_DATA):
        return _sized_binary(32)
    if codec is wire.RECORD_SET:
        return record_sets(max_batches=2)
    if codec is errors.ERROR_CODE:
        return st.sampled_from(sorted(errors.VARIANTS)).flatmap(lambda code: st.fixed_dictionaries(
            {name: codec_values(inner, version) for name, inner in errors.VARIANTS[code][1]}
        ).map(lambda payload: errors.ErrorValue(code, payload)))
    if isinstance(codec, wire.FluvioVec):
        return st.lists(codec_values(codec.item, version, max(1, max_items - 1)), max_size=max_items)
    if isinstance(codec, wire.FluvioOption):
        return st.none() | codec_values(codec.item, version, max_items)
    if isinstance(codec, wire.StringMap):
        return st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=max_items)
    if isinstance(codec, wire.Struct):
        return st.fixed_dictionaries({fl.name: codec_values(fl.codec, version, max_items)
                                      for fl in codec.fields if fl.present(version)})
    if isinstance(codec, sc.SizedBody):
        return _sized_binary(32)
    if isinstance(codec, sc.IdMap):
        return st.dictionaries(st.integers(0, 2**32 - 1), codec_values(codec.item, version, max(1, max_items - 1)),
                               max_size=max_items)
    if isinstance(codec, wire.Union):
        return st.one_of([st.tuples(st.just(name), st.none() if inner is None else codec_values(inner, version))
                          for name, inner in codec.variants.values()])
    raise TypeError(f"no strategy for codec {codec!r}")


def layer_examples() -> dict:
    """Every message layer (protocols.fluvio.layers.message_layers) -> a strategy of built body layers."""
    from wirecheck.protocols.fluvio import layers, sc_layers

    def built(cls, codec, version):
        return codec_values(codec, version).map(lambda value: cls(**value))

    spu = {cls.__name__: built(cls, (messages.REQUESTS if kind == "request" else messages.RESPONSES)[key], version)
           for (kind, key, version), cls in layers.LAYERS.items()}
    sc_classes = sc_layers.message_layers()
    return spu | {name: built(sc_classes[name], codec, version)
                  for name, (codec, version) in sc_layers.layer_codecs().items()}


@st.composite
def produce_bodies(draw, topic: str, partitions: int = 1) -> dict:
    parts = draw(st.lists(st.tuples(st.integers(0, partitions - 1), record_sets(max_batches=2)), min_size=1,
                          max_size=3))
    return {"transactional_id": draw(st.none() | st.just("wirecheck-tx")),
            "isolation": draw(st.sampled_from([messages.READ_UNCOMMITTED, messages.READ_COMMITTED])),
            "timeout_ms": draw(st.integers(0, 5_000)),
            "topics": [{"name": topic, "partitions": [{"partition_index": p, "records": r} for p, r in parts]}],
            "smartmodules": []}


@st.composite
def fetch_bodies(draw, topic: str, partitions: int = 1) -> dict:
    max_bytes = draw(st.integers(0, 1 << 20))
    return {"max_wait": draw(st.integers(0, 100)), "min_bytes": draw(st.integers(0, 10)), "max_bytes": max_bytes,
            "isolation": draw(st.sampled_from(messages.FETCH_ISOLATIONS)),
            "topics": [{"name": topic, "fetch_partitions": [{
                "partition_index": draw(st.integers(0, partitions - 1)), "current_leader_epoch": 0,
                "fetch_offset": draw(st.integers(0, 3)), "log_start_offset": 0, "max_bytes": max_bytes}]}],
            "forgotten": []}


@st.composite
def request_frames(draw, topic: str, correlation_id: int = 1) -> tuple[int, int, bytes]:
    """(api key, version, frame) of a valid Produce / Fetch / FetchOffsets / ApiVersions request."""
    api = draw(st.sampled_from([messages.PRODUCE, messages.FETCH, messages.FETCH_OFFSETS, messages.API_VERSIONS]))
    if api == messages.PRODUCE:
        version, body = draw(st.integers(0, 25)), draw(produce_bodies(topic))
    elif api == messages.FETCH:
        version, body = draw(st.integers(0, 25)), draw(fetch_bodies(topic))
    elif api == messages.FETCH_OFFSETS:
        version = 25
        body = {"topics": [{"name": topic, "partitions": [{"partition_index": 0}]}], "consumer_id": None}
    else:
        version = draw(st.integers(0, 2))
        body = {"client_version": "0.18.2", "client_os": "linux", "client_arch": "x86_64"}
    return api, version, messages.encode_request(api, version, correlation_id, body)


def produce_frame(topic: str, record_set: bytes, correlation_id: int, version: int = 25, **body_options) -> bytes:
    body = {"transactional_id": None, "isolation": messages.READ_UNCOMMITTED, "timeout_ms": 1500,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "records": record_set}]}],
            "smartmodules": [], **body_options}
    return messages.encode_request(messages.PRODUCE, version, correlation_id, body)
