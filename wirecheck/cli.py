"""The ``wirecheck`` command: one entry point for an installed wirecheck, in a vendor's CI or a container.

    wirecheck run [SUITE ...] [PYTEST OPTIONS]   the conformance suites (all, or e.g. ``kafka fluvio``)
    wirecheck broker [BROKER OPTIONS]            the reference broker (same as ``wirecheck-broker``)
    wirecheck pipeline JOB [OPTIONS]             the Spark pipeline: ingest, report, gate, captures
    wirecheck replay FILE|DIR --target HOST:PORT  play a failing case's replay file (or a corpus) against a target
    wirecheck upstream PROTOCOL [--version V] [--install]  start the real server a suite describes (Apache Kafka)
    wirecheck clauses [--protocol P] [--format md|json] [--output DIR]  the clause audit tables (docs/clauses/)
    wirecheck safety PROTOCOL [--target P=HOST:PORT] [--time S] ...  nothing acknowledged lost under faults
"""

from __future__ import annotations

import subprocess
import sys

COMMANDS = ("run", "broker", "pipeline", "replay", "clauses", "upstream", "safety")


def run_suites(argv: list[str]) -> int:
    """pytest over the installed suites: leading bare words name suites, the rest goes to pytest unchanged."""
    from wirecheck.protocols.registry import all_specs

    known = sorted(all_specs())
    suites = []
    while argv and not argv[0].startswith("-"):
        if argv[0] not in known:
            print(f"wirecheck run: unknown suite {argv[0]!r}; known: {', '.join(known)}", file=sys.stderr)
            return 4
        suites.append(argv.pop(0))
    packages = [f"wirecheck.suites.{name}" for name in suites] or ["wirecheck.suites"]
    # pytest runs in a process of its own, which has not imported wirecheck before pytest's plugin loading (the
    # plugin's modules are rewritten on import). The suites live in site-packages: pytest's cache stays off.
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-ra", "--pyargs", *packages, *argv]
    return subprocess.call(command)


def clause_tables(argv: list[str]) -> int:
    """The clause audit (reports/clause_audit.py): print the tables, or write one file per protocol to --output."""
    import argparse
    from pathlib import Path

    from wirecheck.protocols.registry import all_specs
    from wirecheck.reports import clause_audit

    parser = argparse.ArgumentParser(prog="wirecheck clauses", description=clause_tables.__doc__)
    parser.add_argument("--protocol", action="append", help="one protocol (repeatable); default: every one")
    parser.add_argument("--format", choices=sorted(clause_audit.RENDERERS), default="md")
    parser.add_argument("--output", type=Path, help="directory for <protocol>.<format> files; default: stdout")
    options = parser.parse_args(argv)
    specs = all_specs()
    unknown = sorted(set(options.protocol or ()) - set(specs))
    if unknown:
        print(f"wirecheck clauses: unknown protocol {', '.join(unknown)}; known: {', '.join(sorted(specs))}",
              file=sys.stderr)
        return 4
    from wirecheck.targets.upstream import known_divergences

    results = clause_audit.audit_all({name: specs[name] for name in options.protocol or specs}, known_divergences())
    if options.output is None:
        sys.stdout.write(clause_audit.stdout_text(results, options.format))
        return 0
    options.output.mkdir(parents=True, exist_ok=True)
    for name, text in clause_audit.rendered_files(results, options.format).items():
        (options.output / name).write_text(text, encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        # __doc__ is None under python -OO: the usage line alone then
        usage = __doc__ or f"usage: wirecheck {{{','.join(COMMANDS)}}} ..."
        print(usage.strip(), file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 4
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run_suites(rest)
    if command == "broker":
        from wirecheck.broker.__main__ import main as broker

        broker(rest)
        return 0
    if command == "clauses":
        return clause_tables(rest)
    if command == "upstream":
        from wirecheck.targets.upstream.command import main as upstream

        return upstream(rest)
    if command == "safety":
        from wirecheck.targets.safety.command import main as safety

        return safety(rest)
    if command == "replay":
        from wirecheck.targets.replay import main as replay

        return replay(rest)
    from wirecheck.reports.pipeline.__main__ import main as pipeline

    return pipeline(rest)


if __name__ == "__main__":
    sys.exit(main())
