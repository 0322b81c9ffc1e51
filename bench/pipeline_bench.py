"""Pipeline throughput: result records/s through the warehouse job, frames/s through capture analysis.

Each measurement runs in a fresh process per Spark master (``local[1]``, ``local[2]`` by default), so the cold
start (JVM + SparkSession + first job) is measured too, and the scaling ratio local[2]/local[1] is printed.

    python bench/pipeline_bench.py                     # 10,000,000 records, 40,000 frames
    python bench/pipeline_bench.py --records 200000 --frames 8000   # a quick run

Input data is generated once (records with Spark, captures with reports.pcap) and is not timed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RECORDS_PER_RUN = 200_000
VERDICTS = ["OK", "OK", "OK", "OK", "OK", "FAILED", "NON-STRICT", "UNIMPLEMENTED", "ERROR", "XFAIL"]


def generate_runs(spark, root: Path, records: int) -> int:
    """Run directories of synthetic case records (run.json + cases-*.jsonl), written by Spark."""
    from pyspark.sql import functions as F

    runs = max(1, -(-records // RECORDS_PER_RUN))
    verdicts = F.array(*[F.lit(v) for v in VERDICTS])
    frame = (spark.range(records)
             .withColumn("run", (F.col("id") % runs).cast("int"))
             .select(F.lit("wirecheck.case/1").alias("schema"),
                     F.format_string("bench-%04d", "run").alias("run_id"),
                     F.format_string("rustlog.case.c%04d", (F.col("id") % 997).cast("int")).alias("case"),
                     F.format_string("suites/rustlog/test_bench.py::test_c[%d]", "id").alias("nodeid"),
                     F.lit("rustlog").alias("protocol"),
                     F.format_string("rustlog.clause.c%03d", (F.col("id") % 113).cast("int")).alias("clause"),
                     F.lit("a requirement").alias("requirement"), F.lit("seed").alias("source"),
                     F.lit("MUST").alias("level"),
                     verdicts[(F.col("id") * 7919 % len(VERDICTS)).cast("int")].alias("verdict"),
                     F.lit("").alias("message"), F.lit(0.01).alias("duration_s"),
                     F.format_string("127.0.0.1:%d", (9000 + F.col("run") % 4).cast("int")).alias("target"),
                     F.lit("main").alias("worker"), F.lit("2026-11-21T23:00:00Z").alias("finished_at"),
                     "run"))
    staging = root / "_staging"
    frame.repartition(runs * 2, "run").write.partitionBy("run").json(str(staging))
    for run in range(runs):
        run_dir = root / f"bench-{run:04d}"
        run_dir.mkdir(parents=True)
        for i, part in enumerate(sorted((staging / f"run={run}").glob("part-*.json"))):
            part.rename(run_dir / f"cases-gw{i}.jsonl")
        (run_dir / "run.json").write_text(json.dumps({
            "schema": "wirecheck.run/1", "run_id": f"bench-{run:04d}", "suite_version": "0.1.0",
            "started_at": f"2026-11-{1 + run % 28:02d}T10:00:00Z", "finished_at": None, "profile": "ci",
            "strict": False, "baseline": None, "targets": {}, "argv": [], "totals": {}}))
    shutil.rmtree(staging)
    return runs


def generate_captures(root: Path, frames: int, files: int = 8) -> int:
    """Kafka conversations (ApiVersions, Produce with a CRC'd batch) as pcaps; returns the frame count."""
    from protocols.kafka import messages, records
    from reports.pcap import write_pcap

    root.mkdir(parents=True, exist_ok=True)
    per_file = max(4, frames // files)
    batch = records.encode_batch(records.RecordBatch(records=[records.Record(value=b"v" * 64)] * 4))
    total = 0
    for n in range(files):
        events, t = [], 0.0
        for flow in range(4):
            conn = flow + 1
            events.append({"t": t, "conn": conn, "kind": "connect", "peer": "127.0.0.1:9092",
                           "local": f"127.0.0.1:{41000 + flow}"})
            for cid in range(per_file // 8):
                if cid % 2 == 0:
                    req = messages.encode_request(18, 0, cid, "bench", {})
                    resp = messages.encode_response(18, 0, cid, {"ErrorCode": 0, "ApiKeys": [
                        {"ApiKey": 0, "MinVersion": 0, "MaxVersion": 9}, {"ApiKey": 18, "MinVersion": 0,
                                                                          "MaxVersion": 3}]})
                else:
                    req = messages.encode_request(0, 3, cid, "bench", {
                        "TransactionalId": None, "Acks": 1, "TimeoutMs": 1000,
                        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch}]}]})
                    resp = messages.encode_response(0, 3, cid, {"ThrottleTimeMs": 0, "Responses": [
                        {"Name": "t", "PartitionResponses": [{"Index": 0, "ErrorCode": 0, "BaseOffset": 4 * cid,
                                                              "LogAppendTimeMs": -1}]}]})
                t += 0.001
                events.append({"t": t, "conn": conn, "kind": "send", "hex": req.hex()})
                events.append({"t": t, "conn": conn, "kind": "recv", "hex": resp.hex()})
                total += 2
            events.append({"t": t, "conn": conn, "kind": "close"})
        write_pcap({"events": events}, root / f"bench-{n}.pcap", base_time=1_763_700_000.0)
    return total


def measure(master: str, runs_root: Path, captures_root: Path, records: int, frames: int) -> dict:
    """In a fresh process: cold start, warehouse ingest throughput, capture analysis throughput."""
    t0 = time.perf_counter()
    from reports.pipeline.session import get_session

    spark = get_session(master, app_name="wirecheck-bench")
    spark.range(100).selectExpr("id % 3 as k").groupBy("k").count().collect()  # the first job pays the warm-up
    cold = time.perf_counter() - t0

    from reports.pipeline import warehouse
    from reports.pipeline.captures.detect import default_ports
    from reports.pipeline.captures.job import analyze

    out = Path(tempfile.mkdtemp(prefix="wirecheck-bench-wh-"))
    try:
        t1 = time.perf_counter()
        stats = warehouse.ingest(spark, [str(runs_root / "bench-*")], str(out / "wh"))
        ingest_s = time.perf_counter() - t1
        assert stats["cases"] == records, stats
        t2 = time.perf_counter()
        violations, flows, _ = analyze(spark, sorted(str(p) for p in captures_root.glob("*.pcap")), default_ports())
        counted = flows.selectExpr("sum(client_frames + server_frames) as n").first().n
        n_violations = violations.count()
        capture_s = time.perf_counter() - t2
        assert counted == frames, (counted, frames)
    finally:
        spark.stop()
        shutil.rmtree(out, ignore_errors=True)
    return {"master": master, "cold_start_s": round(cold, 2), "ingest_s": round(ingest_s, 2),
            "records_per_s": round(records / ingest_s), "capture_s": round(capture_s, 2),
            "frames_per_s": round(frames / capture_s), "violations": n_violations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--frames", type=int, default=40_000)
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--child", nargs=3, metavar=("MASTER", "RUNS", "CAPTURES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        master, runs_root, captures_root = args.child
        print(json.dumps(measure(master, Path(runs_root), Path(captures_root), args.records, args.frames)))
        return

    work = Path(tempfile.mkdtemp(prefix="wirecheck-bench-"))
    try:
        from reports.pipeline.session import get_session

        t = time.perf_counter()
        spark = get_session("local[2]", app_name="wirecheck-bench-data")
        runs = generate_runs(spark, work / "runs", args.records)
        spark.stop()
        frames = generate_captures(work / "captures", args.frames)
        print(f"generated {args.records} records in {runs} runs and {frames} frames in "
              f"{time.perf_counter() - t:.1f} s (not timed below)", flush=True)
        results = []
        for master in args.masters.split(","):
            child = subprocess.run([sys.executable, __file__, "--records", str(args.records), "--frames",
                                    str(frames), "--child", master, str(work / "runs"), str(work / "captures")],
                                   capture_output=True, text=True, cwd=ROOT)
            if child.returncode != 0:
                raise SystemExit(f"{master} failed:\n{child.stderr[-3000:]}")
            results.append(json.loads(child.stdout.strip().splitlines()[-1]))
            print(json.dumps(results[-1]), flush=True)
        print(f"\n{'master':10} {'cold start s':>12} {'records/s':>12} {'frames/s':>10}")
        for r in results:
            print(f"{r['master']:10} {r['cold_start_s']:>12} {r['records_per_s']:>12} {r['frames_per_s']:>10}")
        if len(results) >= 2:
            print(f"scaling {results[-1]['master']} / {results[0]['master']}: "
                  f"records {results[-1]['records_per_s'] / results[0]['records_per_s']:.2f}x, "
                  f"frames {results[-1]['frames_per_s'] / results[0]['frames_per_s']:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
