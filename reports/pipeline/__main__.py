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
"""

from __future__ import annotations

import argparse
import sys


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
    captures.add_argument("--port", action="append", default=[], metavar="PROTOCOL=PORT",
                          help="server port of a protocol (repeatable); default: the protocols' default ports")
    return parser


#: Exit code when Spark cannot start: different from a gate failure (1) and a usage error (2).
BROKEN_ENVIRONMENT = 3


def main(argv: list[str] | None = None, spark=None) -> int:
    args = build_parser().parse_args(argv)
    if spark is None:
        from wirecheck.reports.pipeline.session import get_session

        try:
            spark = get_session(args.master, app_name=f"wirecheck-{args.job}")
        except Exception as exc:  # no Java, a bad master URL, ...: not a verdict about any run
            print(f"wirecheck-pipeline: cannot start Spark ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
                  "is Java 17+ installed?", file=sys.stderr)
            return BROKEN_ENVIRONMENT
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
              f"{len(summary['regressions'])} regression(s) -> {args.out}/index.html")
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
        from wirecheck.reports.pipeline.captures.job import parse_ports, run_capture_job

        result = run_capture_job(spark, args.inputs, args.out, parse_ports(args.port))
        print(f"captures: {result['files']} file(s), {result['flows']} flow(s), {result['frames']} frame(s), "
              f"{result['violations']} violation(s) -> {args.out}/index.html")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
