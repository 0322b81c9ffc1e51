"""Driver for the standalone-cluster test, run by spark-submit: several pipeline jobs in one application.

    spark-submit --master spark://... --py-files wirecheck.zip cluster_jobs.py OUT.json JOB ARGS... -- JOB ARGS...

Each job goes through ``reports.pipeline.__main__.main`` exactly as ``spark-submit reports/pipeline/__main__.py``
would run it; one application instead of four saves three driver and executor start-ups. OUT.json gets each
job's exit code and printed lines, and the session's master and settings.
"""

import contextlib
import io
import json
import sys


def main() -> None:
    from wirecheck.reports.pipeline.__main__ import main as run_job
    from wirecheck.reports.pipeline.session import get_session

    out, argv = sys.argv[1], sys.argv[2:]
    jobs, current = [], []
    for arg in argv + ["--"]:
        if arg == "--":
            jobs.append(current)
            current = []
        else:
            current.append(arg)
    results = []
    for job in jobs:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = run_job(job)
        results.append({"argv": job, "exit": code, "lines": printed.getvalue().splitlines()})
    spark = get_session()
    conf = spark.sparkContext.getConf()
    session = {key: conf.get(key, None) for key in ("spark.master", "spark.sql.shuffle.partitions",
                                                    "spark.driver.host", "spark.ui.enabled")}
    session["executors"] = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    with open(out, "w", encoding="utf-8") as handle:  # the driver's local result file, read by the test
        json.dump({"jobs": results, "session": session}, handle)


if __name__ == "__main__":
    main()
