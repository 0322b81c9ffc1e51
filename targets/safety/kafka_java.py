"""The Apache Kafka Java client's (kafka-clients') slots in the Kafka safety workload (kafka.py KAFKA_JAVA_SLOTS):
the Java driver's jar (suites/kafka/clients/java, SafetyClient.java) runs the role and writes its history lines
itself, in a JVM that takes the client process's place (client.py execs it), so that the supervisor's kill -9 and
SIGTERM reach the JVM itself. The workload's numbers go to it on the command line, from here; its client settings
and how it records each outcome are SafetyClient.java's, mirroring kafka.py's and kafka_python.py's.
"""

from __future__ import annotations

from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.clients import JavaDriver
from wirecheck.targets.safety.kafka import ABORT_CHANCE, OP_TIMEOUT_S, PARTITIONS
from wirecheck.targets.safety.workload import LIFE, PACE_S

#: the Kafka suite's Java driver (suites/kafka/clients/java_driver.py DRIVER), found by its path: targets/ imports
#: no suite (tests/unit/test_safety_kafka_java.py keeps the two the same)
DRIVER = JavaDriver(Path(__file__).resolve().parents[2] / "suites" / "kafka" / "clients" / "java",
                    "wirecheck-kafka-java-driver.jar", "mvn -q -B -f suites/kafka/clients/java/pom.xml package")

#: a JVM per slot on a shared machine: the serial collector and C1 only start faster and take less CPU than the
#: defaults, and a small heap is plenty for one client
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m")


def check() -> None:
    """A HarnessError before any client starts when java or the built jar is missing: the Java slots never fall
    back to another client silently."""
    if DRIVER.missing():
        raise HarnessError(f"the Kafka safety workload's Java client slots need java on PATH and the Java driver's "
                           f"jar built from its current sources ({DRIVER.install})")


def argv(role: str, options: dict) -> list[str]:
    """The JVM's command line for one role; ``options``: the client process's (client.py)."""
    java, *rest = DRIVER.argv()  # java -jar JAR
    return [java, *JVM_OPTIONS, *rest, "safety", role,
            "--bootstrap", options["bootstrap"], "--topic", options["topic"], "--history", str(options["history"]),
            "--started", repr(options["started"]), "--base", str(options["base"]), "--slot", str(options["slot"]),
            "--seed", str(options["seed"]), "--partitions", str(PARTITIONS), "--abort-chance", repr(ABORT_CHANCE),
            "--op-timeout", repr(OP_TIMEOUT_S), "--life", ",".join(map(str, LIFE)),
            "--pace", ",".join(map(repr, PACE_S))]
