"""The Pravega Java client's driver (suites/pravega/clients/java/): a Maven project built into one runnable jar, run
as ``java -jar`` on the same jobs as pravega_driver.py (and two of its own: ``transaction``, ``key-value-table``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

PROJECT = Path(__file__).resolve().parent / "java"
JAR = PROJECT / "target" / "wirecheck-pravega-java-driver.jar"
INSTALL = "mvn -q -B -f suites/pravega/clients/java/pom.xml package"


def missing() -> bool:
    """No java on PATH, or the jar not built (or built before its sources last changed)."""
    if shutil.which("java") is None or not JAR.is_file():
        return True
    sources = [PROJECT / "pom.xml", *(PROJECT / "src").rglob("*")]
    return max(path.stat().st_mtime for path in sources if path.is_file()) > JAR.stat().st_mtime


def argv() -> list[str]:
    return ["java", "-jar", str(JAR)]


def version() -> str:
    """pravega-client's version: the one pom.xml pins (the client's jar, built by Gradle, carries no Maven
    properties of its own)."""
    found = re.search(r"<pravega.version>([^<]+)</pravega.version>", (PROJECT / "pom.xml").read_text())
    return found.group(1) if found else "unknown"
