"""The Apache Kafka Java client's driver (suites/kafka/clients/java/): a Maven project built into one runnable jar,
run as ``java -jar`` on the same jobs as python_driver.py."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parent / "java"
JAR = PROJECT / "target" / "wirecheck-kafka-java-driver.jar"
INSTALL = "mvn -q -B -f suites/kafka/clients/java/pom.xml package"


def missing() -> bool:
    """No java on PATH, or the jar not built (or built before its sources last changed)."""
    if shutil.which("java") is None or not JAR.is_file():
        return True
    sources = [PROJECT / "pom.xml", *(PROJECT / "src").rglob("*")]
    return max(path.stat().st_mtime for path in sources if path.is_file()) > JAR.stat().st_mtime


def argv() -> list[str]:
    return ["java", "-jar", str(JAR)]


def version() -> str:
    """kafka-clients' version as the built jar carries it (kafka/kafka-version.properties)."""
    with zipfile.ZipFile(JAR) as jar:
        text = jar.read("kafka/kafka-version.properties").decode()
    found = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return found.get("version", "unknown")
