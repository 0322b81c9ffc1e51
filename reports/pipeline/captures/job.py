"""The capture conformance job: pcap/pcapng files -> violations, flows, files and summary tables + HTML.

Two stages, so that frame decoding parallelises even when the traffic sits in one big file: stage 1 reads
and reassembles each file (one task per file, mapPartitions), stage 2 decodes and checks each flow
(flows spread over the cluster, mapPartitions). Capture files are read by Spark (``binaryFiles``, Hadoop's file system), so any
URI Hadoop reads works (hdfs://, s3a://, file:); a pattern that matches nothing or a file that cannot be read
fails the job naming it.

Outputs under ``out``: ``violations.parquet`` (clause, flow, frame index, hex excerpt, ...),
``flows.parquet``, ``files.parquet``, ``summary.parquet`` (violations per protocol and clause),
``index.html`` and ``summary.json``.
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from wirecheck.reports.pipeline.captures.analyze import analyze_flow, read_file
from wirecheck.reports.pipeline.captures.detect import default_ports
from wirecheck.reports.pipeline import fs

VIOLATION = StructType([
    StructField("file", StringType()), StructField("flow", StringType()), StructField("protocol", StringType()),
    StructField("side", StringType()), StructField("frame_index", IntegerType()), StructField("clause", StringType()),
    StructField("level", StringType()), StructField("message", StringType()), StructField("hex", StringType()),
])
FLOW = StructType([
    StructField("file", StringType()), StructField("flow", StringType()), StructField("protocol", StringType()),
    StructField("detected_by", StringType()), StructField("state", StringType()),
    StructField("client_frames", IntegerType()), StructField("server_frames", IntegerType()),
    StructField("bytes", LongType()), StructField("violations", IntegerType()), StructField("problems", StringType()),
])
FILE = StructType([
    StructField("file", StringType()), StructField("packets", LongType()), StructField("flows", IntegerType()),
    StructField("ok", BooleanType()), StructField("problems", StringType()),
])


def _read_files(files, server_ports):
    """Stage 1, per partition of files: ("file", row) for each file and ("flow", FlowStreams) for its flows."""
    for path, content in files:
        try:
            file_row, flows = read_file(path, server_ports, bytes(content))
        except Exception as exc:  # read_file handles bad captures; this guards against bugs, per file
            yield ("file", (path, 0, 0, False, f"analysis failed: {type(exc).__name__}: {exc}"))
            continue
        yield ("file", file_row)
        for flow in flows:
            yield ("flow", flow)


def _deal(index: int, items, parts: int):
    """(partition, item): each task of stage 1 deals its flows out in turn, starting at its own index, so every
    partition of stage 2 gets the same number of flows (give or take one per task). A plain repartition deals
    out pickled batches of several items, which left one partition with twice the flows of another and one
    with none."""
    turn = index
    for kind, item in items:
        if kind == "flow":
            yield turn % parts, (kind, item)
            turn += 1
        else:
            yield index % parts, (kind, item)


def _check_flows(items, ports):
    """Stage 2, per partition: file rows pass through; each flow becomes ("flow", row) + ("violation", row)s."""
    for kind, item in items:
        if kind != "flow":
            yield kind, item
            continue
        try:
            flow_row, violations = analyze_flow(item, ports)
        except Exception as exc:
            flow_row = (item.file, item.flow, None, "unknown", item.state, 0, 0,
                        len(item.client_bytes) + len(item.server_bytes), 0,
                        f"analysis failed: {type(exc).__name__}: {exc}")
            violations = []
        yield "flow", flow_row
        for violation in violations:
            yield "violation", violation


def analyze(spark: SparkSession, paths: list[str], ports: dict[int, str]):
    """(violations, flows, files) DataFrames for the given capture files.

    One Spark job computes all three: files are read and reassembled one task per file, the flows are spread
    evenly over the cores (dealt in turn, so that one big capture still keeps every core busy), and each
    partition of flows is decoded in one Python call. Only the small result rows are cached, not the streams.
    """
    sc = spark.sparkContext
    server_ports = set(ports)
    # Files are read whole, up to one task per file (binaryFiles packs small files together); the flows are
    # then dealt out evenly, so the decoding keeps every core busy however the files were packed.
    files = sc.binaryFiles(",".join(paths), minPartitions=max(1, len(paths)))
    parts = max(1, sc.defaultParallelism * 2)
    per_file = files.mapPartitionsWithIndex(lambda index, it: _deal(index, _read_files(it, server_ports), parts))
    rows = (per_file.partitionBy(parts, lambda part: part).values()
            .mapPartitions(lambda it: _check_flows(it, ports))
            .cache())

    def table(kind, schema):
        return spark.createDataFrame(rows.filter(lambda kv: kv[0] == kind).map(lambda kv: kv[1]), schema)

    return table("violation", VIOLATION), table("flow", FLOW), table("file", FILE)


def run_capture_job(spark: SparkSession, inputs: list[str], out_dir: str, ports: dict[int, str] | None = None,
                    html: bool = True) -> dict:
    from wirecheck.reports.html.captures import write_capture_site

    paths = set()
    for pattern in inputs:
        found = fs.expand(spark, pattern)
        if not found:
            raise FileNotFoundError(f"no capture file matches {pattern}")
        paths.update(found)
    paths = sorted(paths)
    port_map = {**default_ports(), **(ports or {})}
    violations, flows, files = analyze(spark, paths, port_map)
    violations.write.mode("overwrite").parquet(fs.join(out_dir, "violations.parquet"))
    flows.write.mode("overwrite").parquet(fs.join(out_dir, "flows.parquet"))
    files.write.mode("overwrite").parquet(fs.join(out_dir, "files.parquet"))
    violations = spark.read.parquet(fs.join(out_dir, "violations.parquet"))
    flows = spark.read.parquet(fs.join(out_dir, "flows.parquet"))
    summary = (violations.groupBy("protocol", "clause", "level")
               .agg(F.count("*").alias("violations"), F.countDistinct("flow").alias("flows"))
               .orderBy("protocol", "clause"))
    summary.write.mode("overwrite").parquet(fs.join(out_dir, "summary.parquet"))
    flow_totals = flows.agg(F.count("*").alias("flows"),
                            F.coalesce(F.sum(F.col("client_frames") + F.col("server_frames")), F.lit(0)).alias("frames")
                            ).first()
    result = {
        "schema": "wirecheck.captures/1",
        "files": len(paths),
        "flows": int(flow_totals["flows"]),
        "frames": int(flow_totals["frames"]),
        "violations": violations.count(),
        "by_clause": [r.asDict() for r in summary.collect()],
    }
    with fs.local_output(spark, out_dir) as local:
        with open(f"{local}/summary.json", "w", encoding="utf-8") as out:  # the driver's own temporary dir
            out.write(json.dumps(result, indent=2))
        if html:
            write_capture_site(result, [r.asDict() for r in spark.read.parquet(fs.join(out_dir, "files.parquet"))
                                        .collect()],
                               [r.asDict() for r in flows.orderBy("file", "flow").collect()],
                               [r.asDict() for r in violations.orderBy("file", "flow", "side", "frame_index")
                                .limit(MAX_HTML_ROWS).collect()], local)
    return result


MAX_HTML_ROWS = 5000  # the Parquet table has every violation; the page shows the first ones
