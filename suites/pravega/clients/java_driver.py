"""The Pravega Java client's driver (suites/pravega/clients/java/): a Maven project built into one runnable jar, run
as ``java -jar`` on the same jobs as pravega_driver.py (and two of its own: ``transaction``, ``key-value-table``)."""

from __future__ import annotations

import re
from pathlib import Path

from wirecheck.targets.clients import JavaDriver

DRIVER = JavaDriver(Path(__file__).resolve().parent / "java", "wirecheck-pravega-java-driver.jar",
                    "mvn -q -B -f suites/pravega/clients/java/pom.xml package")
PROJECT, JAR, INSTALL = DRIVER.project, DRIVER.jar, DRIVER.install
missing, argv = DRIVER.missing, DRIVER.argv


def version() -> str:
    """pravega-client's version: the one pom.xml pins (the client's jar, built by Gradle, carries no Maven
    properties of its own)."""
    found = re.search(r"<pravega.version>([^<]+)</pravega.version>", (PROJECT / "pom.xml").read_text())
    return found.group(1) if found else "unknown"
