"""The jobs on a real standalone Spark cluster (a master and a worker on 127.0.0.1, from the pyspark install),
submitted with spark-submit and --py-files, give the same results as local mode.

Inputs and outputs are given as ``file://`` URIs, so every file the jobs touch goes through Hadoop's file
system; the executors run in the worker's own JVM and import this project only from the --py-files zip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wirecheck.reports.pipeline.__main__ import main
from tests.pipeline.injected import write_injected
from tests.pipeline.runs import write_history

SPARK_HOME = Path(pytest.importorskip("pyspark").__file__).parent
HERE = Path(__file__).resolve().parent
MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_GATEWAY_PORT", "SPARK_HOME")}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_NO_DAEMONIZE="1")
    return env


def _wait_for(log: Path, pattern: re.Pattern, process: subprocess.Popen, seconds: float = 90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = pattern.search(log.read_text(errors="replace")) if log.exists() else None
        if found:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"{pattern.pattern!r} not in {log}:\n{log.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT with one worker of 2 cores; stopped (by process id) at the end."""
    root = tmp_path_factory.mktemp("cluster")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    processes = []
    try:
        master_log = root / "master.log"
        master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", "0", "--webui-port", "0"], env=_env(), cwd=root,
                                  stdout=master_log.open("wb"), stderr=subprocess.STDOUT)
        processes.append(master)
        url = _wait_for(master_log, MASTER_URL, master).group(1)
        worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--cores", "2", "--memory", "1g", "--webui-port", "0",
                                   "--work-dir", str(root / "work")], env=_env(), cwd=root,
                                  stdout=(root / "worker.log").open("wb"), stderr=subprocess.STDOUT)
        processes.append(worker)
        _wait_for(master_log, re.compile(r"Registering worker 127\.0\.0\.1"), master)
        yield url, root
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster-inputs")
    write_history(root / "runs")
    write_injected(root / "captures")
    return root


def _jobs(runs: str, captures: str, out: str) -> list[list[str]]:
    return [["ingest", f"{runs}/*", "--warehouse", f"{out}/wh"],
            ["report", "--warehouse", f"{out}/wh", "--out", f"{out}/site"],
            ["gate", "--warehouse", f"{out}/wh", "--run", "r2"],
            ["captures", f"{captures}/*.pcap", "--out", f"{out}/captures"]]


@pytest.fixture(scope="module")
def on_cluster(cluster, inputs):
    """The four jobs in one spark-submit application on the cluster, with a --conf that must be kept."""
    from wirecheck.reports.pipeline.bundle import write_bundle

    url, root = cluster
    out = root / "out"
    bundle = write_bundle(root / "wirecheck.zip")
    jobs = _jobs(f"file://{inputs}/runs", f"file://{inputs}/captures", f"file://{out}")
    argv = [arg for job in jobs for arg in [*job, "--"]][:-1]
    submit = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, "--py-files", str(bundle),
         "--conf", "spark.sql.shuffle.partitions=3", "--conf", "spark.executor.memory=512m",
         str(HERE / "cluster_jobs.py"), str(root / "result.json"), *argv],
        env=_env(), cwd=root, capture_output=True, text=True, timeout=600)
    assert submit.returncode == 0, submit.stderr[-4000:]
    return json.loads((root / "result.json").read_text()), out


@pytest.fixture(scope="module")
def on_local(spark, inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("local-out")
    results = []
    for job in _jobs(str(inputs / "runs"), str(inputs / "captures"), str(out)):
        code = main(job, spark=spark)
        results.append(code)
    return results, out


def test_the_cluster_ran_the_jobs_with_submit_settings_kept(on_cluster, cluster):
    result, _ = on_cluster
    session = result["session"]
    assert session["spark.master"] == cluster[0]
    assert session["spark.sql.shuffle.partitions"] == "3"  # --conf wins over our defaults
    assert session["spark.driver.host"] != "127.0.0.1" or session["spark.ui.enabled"] is None  # no local settings
    assert session["executors"] == 1
    assert [job["exit"] for job in result["jobs"]] == [0, 0, 1, 0]  # r2 has a regression: the gate is red


def test_cluster_and_local_mode_give_the_same_warehouse_report_gate_and_captures(spark, on_cluster, on_local):
    result, cluster_out = on_cluster
    codes, local_out = on_local
    assert codes == [job["exit"] for job in result["jobs"]]

    def cases(out):
        frame = spark.read.parquet(str(out / "wh" / "cases"))
        return sorted((tuple(r) for r in frame.select(sorted(frame.columns)).collect()), key=repr)

    assert cases(cluster_out) == cases(local_out) and cases(local_out)

    def summary(out):
        data = json.loads((out / "site" / "summary.json").read_text())
        data.pop("generated_at")
        return data

    assert summary(cluster_out) == summary(local_out)
    assert (cluster_out / "site" / "index.html").is_file()

    def captures(out):
        data = json.loads((out / "captures" / "summary.json").read_text())
        rows = spark.read.parquet(str(out / "captures" / "violations.parquet")).collect()
        return data, sorted((Path(r.file).name, r.flow, r.side, r.frame_index, r.clause) for r in rows)

    assert captures(cluster_out) == captures(local_out)
    gate_lines = [job["lines"] for job in result["jobs"] if job["argv"][0] == "gate"][0]
    assert any(line.startswith("REGRESSION") for line in gate_lines)


def test_concurrent_ingests_on_the_cluster_lose_no_run(spark, cluster, tmp_path):
    """The nightly CI matrix on a cluster: three spark-submit applications, each ingesting its own run into one
    warehouse (file:// URIs, so through Hadoop's file system), submitted at once. Every run is there, once."""
    from wirecheck.reports.pipeline import warehouse
    from wirecheck.reports.pipeline.bundle import write_bundle
    from tests.pipeline.runs import case, write_run

    url, root = cluster
    names = ["c0", "c1", "c2"]
    for n, name in enumerate(names):
        write_run(tmp_path / "runs", name, [case(name, "n::a", "OK")], started_at=f"2026-11-2{n}T02:00:00Z")
    bundle = write_bundle(tmp_path / "wirecheck.zip")
    submits = [subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, "--py-files", str(bundle),
         # one core and a small executor each: two applications run side by side on the worker, the third queues
         "--conf", "spark.cores.max=1", "--conf", "spark.executor.memory=512m",
         str(HERE / "cluster_jobs.py"), str(tmp_path / f"{name}.json"),
         "ingest", f"file://{tmp_path}/runs/{name}", "--warehouse", f"file://{tmp_path}/wh"],
        env=_env(), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for name in names]
    outputs = [submit.communicate(timeout=600)[0] for submit in submits]
    assert [submit.returncode for submit in submits] == [0, 0, 0], "\n".join(out[-3000:] for out in outputs)
    assert [json.loads((tmp_path / f"{name}.json").read_text())["jobs"][0]["exit"] for name in names] == [0, 0, 0]
    assert sorted(r.run_id for r in warehouse.load_runs(spark, str(tmp_path / "wh")).collect()) == names
