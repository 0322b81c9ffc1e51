"""The Apache Kafka Java client's driver (suites/kafka/clients/java/): a Maven project built into one runnable jar,
run as ``java -jar`` on the same jobs as python_driver.py."""

from __future__ import annotations

import zipfile
from pathlib import Path

from wirecheck.targets.clients import JavaDriver

DRIVER = JavaDriver(Path(__file__).resolve().parent / "java", "wirecheck-kafka-java-driver.jar",
                    "mvn -q -B -f suites/kafka/clients/java/pom.xml package")
PROJECT, JAR, INSTALL = DRIVER.project, DRIVER.jar, DRIVER.install
missing, argv = DRIVER.missing, DRIVER.argv


def version() -> str:
    """kafka-clients' version as the built jar carries it (kafka/kafka-version.properties)."""
    with zipfile.ZipFile(JAR) as jar:
        text = jar.read("kafka/kafka-version.properties").decode()
    found = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return found.get("version", "unknown")
