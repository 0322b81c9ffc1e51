"""Command line of the pipeline: ``python -m wirecheck.reports.pipeline <job> ...``.

The same jobs run under spark-submit from the repository root:
  PYTHONPATH=. spark-submit --master local[2] reports/pipeline/__main__.py <job> ...
(on a cluster, ship the packages with --py-files instead of PYTHONPATH).

  ingest   RUN_DIR_OR_GLOB... --warehouse W [--reingest]
           run directories -> Parquet warehouse (incremental: finished runs already there are skipped)
  report   --warehouse W --out DIR [--window N] [--max-case-pages N] [--compare OLD NEW]
           conformance matrix, trend, comparison, ... -> summary.json + HTML with charts
  gate     --warehouse W [--run ID] [--baseline ID] [--ingest RUN_DIR...]
           exit 1 on any regression (OK then, FAILED now) or when the run executed no case
  captures PCAP_OR_GLOB... --out DIR [--port kafka=9092 ...]
           passive checks of captured traffic -> violations.parquet, summary.parquet, HTML

Exit codes: 0 done; 1 the gate failed (a regression, or a run that executed nothing); 2 usage error; 3 the job
could not do its work (Spark cannot start, an input that matches nothing or cannot be read, a warehouse that is
not there), with one line on stderr: never 1, so a CI gate cannot mistake a broken step for a verdict.
"""

from __future__ import annotations

import argparse
import sys
import traceback


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m wirecheck.reports.pipeline", description="wirecheck's PySpark jobs",
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--master", default=None, help="Spark master (default local[*]; kept under spark-submit)")
    jobs = parser.add_subparsers(dest="job", required=True)

    ingest = jobs.add_parser("ingest", help="load run directories into the warehouse")
    ingest.add_argument("inputs", nargs="+", help="run directories or globs of them (any Spark-readable path)")
    ingest.add_argument("--warehouse", required=True)
    ingest.add_argument("--reingest", action="store_true",
                        help="read runs again even when the warehouse has them (default: skip finished runs)")

    report = jobs.add_parser("report", help="write the conformance report")
    report.add_argument("--warehouse", required=True)
    report.add_argument("--out", required=True, help="directory or URI for summary.json and the HTML site")
    report.add_argument("--window", type=int, default=10, help="runs per target for pass rates (default 10)")
    report.add_argument("--max-case-pages", type=int, default=200,
                        help="failing cases per run that get a page (default 200; Parquet keeps all)")
    report.add_argument("--compare", nargs=2, metavar=("OLD_RUN", "NEW_RUN"), default=None,
                        help="compare these two runs (default: each target's two newest runs)")

    gate = jobs.add_parser("gate", help="CI gate: fail on regressions or on an empty run")
    gate.add_argument("--warehouse", required=True)
    gate.add_argument("--run", default=None, help="run id to gate (default: the newest run)")
    gate.add_argument("--baseline", default=None, help="run id to compare with (default: each target's previous run)")
    gate.add_argument("--ingest", nargs="*", default=[], help="ingest these run directories first")

    captures = jobs.add_parser("captures", help="check captured traffic")
    captures.add_argument("inputs", nargs="+", help="pcap/pcapng files or globs")
    captures.add_argument("--out", required=True, help="directory or URI for the Parquet tables and the HTML")
    captures.add_argument("--port", action="append", default=[], metavar="PROTOCOL=PORT", type=_port,
                          help="server port of a protocol (repeatable); default: the protocols' default ports")
    return parser


def _port(pair: str) -> tuple[int, str]:
    """``kafka=9093`` -> (9093, "kafka"); anything else is a usage error (exit 2) before Spark starts."""
    name, _, port = pair.partition("=")
    if not name.strip() or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"wants PROTOCOL=PORT, got {pair!r}")
    return int(port), name.strip()


#: Exit code when a job cannot do its work (Spark does not start, an input cannot be read): different from a
#: gate failure (1) and a usage error (2).
NOT_DONE = 3


def _input_errors() -> tuple[type[Exception], ...]:
    """What bad input raises: our own checks (OSError, ValueError) and Spark's (a path that does not exist, a
    file system that cannot be reached). Anything else is a bug here: its traceback is printed too."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return OSError, ValueError, PySparkException, Py4JJavaError


def _one_line(exc: Exception) -> str:
    from wirecheck.reports.pipeline.fs import java_message

    text = java_message(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def main(argv: list[str] | None = None, spark=None) -> int:
    args = build_parser().parse_args(argv)
    if spark is None:
        from wirecheck.reports.pipeline.session import get_session

        try:
            spark = get_session(args.master, app_name=f"wirecheck-{args.job}")
        except Exception as exc:  # no Java, a bad master URL, ...: not a verdict about any run
            print(f"wirecheck-pipeline: cannot start Spark ({type(exc).__name__}: {_one_line(exc)}); "
                  "is Java 17+ installed?", file=sys.stderr)
            return NOT_DONE
    try:
        return _run(args, spark)
    except Exception as exc:
        if not isinstance(exc, _input_errors()):
            traceback.print_exc()
        print(f"wirecheck-pipeline {args.job}: {_one_line(exc)}", file=sys.stderr)
        return NOT_DONE


def _run(args: argparse.Namespace, spark) -> int:
    if args.job == "ingest":
        from wirecheck.reports.pipeline.warehouse import ingest

        stats = ingest(spark, args.inputs, args.warehouse, reingest=args.reingest)
        print(f"ingested {stats['runs']} run(s), {stats['cases']} case record(s) into {args.warehouse}; "
              f"skipped {stats['skipped']} run(s) already there")
        return 0
    if args.job == "report":
        from wirecheck.reports.pipeline.report import build_report

        summary = build_report(spark, args.warehouse, args.out, args.window, args.max_case_pages,
                               tuple(args.compare) if args.compare else None)
        print(f"report: {len(summary['targets'])} target(s), {len(summary['matrix'])} matrix cell(s), "
              f"{sum(summary['regressions_total'].values())} regression(s), "
              f"{len(summary['safety_runs'])} safety run(s) -> {args.out}/index.html")
        return 0
    if args.job == "gate":
        from wirecheck.reports.pipeline.gate import gate
        from wirecheck.reports.pipeline.warehouse import ingest

        if args.ingest:
            ingest(spark, args.ingest, args.warehouse)
        result = gate(spark, args.warehouse, args.run, args.baseline)
        print("\n".join(result.lines()))
        return result.exit_code
    if args.job == "captures":
        from wirecheck.reports.pipeline.captures.job import run_capture_job

        result = run_capture_job(spark, args.inputs, args.out, dict(args.port))
        print(f"captures: {result['files']} file(s), {result['flows']} flow(s), {result['frames']} frame(s), "
              f"{result['violations']} violation(s) -> {args.out}/index.html")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
