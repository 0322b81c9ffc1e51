"""Apache Kafka itself as a target: one KRaft node in combined mode (broker and controller) on loopback.

The broker's jars come from Maven Central through a checked-in build file per version (builds/kafka-<V>.pom.xml,
exact versions) and are kept in wirecheck's cache (``install``); ``start`` formats a fresh log directory in the
given work directory and starts ``kafka.Kafka`` there, with its log beside it. The configuration is Kafka's own
defaults but for what one node needs (replication factors of the internal topics 1) and the initial rebalance
delay, which only slows a group's first join (Kafka's own tests set it to 0 too).
"""

from __future__ import annotations

import base64
import subprocess
import uuid
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.upstream import maven
from wirecheck.targets.upstream.maven import MavenBuild
from wirecheck.targets.upstream.process import HOST, UpstreamProcess, free_port, respawn, spawn, wait_ready

#: the newest 4.x line Maven Central serves here, and the 3.x line's last release (3.9: still patched after 4.0,
#: and the line most users upgrade from); the first is the default
VERSIONS = ("4.4.0", "3.9.2")
TITLE = "Apache Kafka"
START_TIMEOUT = 90.0  # seconds: a JVM's start on a loaded 2-core machine
STARTED = "Kafka Server started"  # KafkaRaftServer's last start-up line, 3.x and 4.x alike
HEAP = "-Xmx768m"

# Kafka 4 logs through log4j 2, 3.9 through reload4j: one configuration each, the server's INFO lines to stdout
_LOG4J2 = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
"""
_LOG4J1 = """log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


BUILD = MavenBuild("kafka", TITLE, VERSIONS, "kafka_2.13-*.jar")
install, install_line, installed = BUILD.install, BUILD.install_line, BUILD.installed


def cluster_id() -> str:
    """A cluster id as Kafka's storage tool makes one: a random UUID in URL-safe base64 without padding, never one
    starting with '-', which the tool's argument parser would take for an option (Uuid.randomUuid skips those too:
    clients/src/main/java/org/apache/kafka/common/Uuid.java, randomUuid)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def properties(node_id: int, port: int, controller_port: int, data: Path) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": f"{node_id}@{HOST}:{controller_port}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data),
        # one node: the internal topics cannot have more replicas than it
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def start(workdir: Path, version: str = VERSIONS[0], node_id: int = 1) -> UpstreamProcess:
    """Format a fresh node in ``workdir`` and start it; returns once it answers ApiVersions and says it started."""
    lib = installed(version)
    java = maven.java("Apache Kafka needs Java 17 or newer")
    workdir.mkdir(parents=True, exist_ok=True)
    port, controller_port = free_port(), free_port()
    config = workdir / "server.properties"
    config.write_text(properties(node_id, port, controller_port, workdir / "data"))
    classpath = str(lib / "*")
    if version.startswith("3."):
        (workdir / "log4j.properties").write_text(_LOG4J1)
        logging = f"-Dlog4j.configuration=file:{workdir / 'log4j.properties'}"
    else:
        (workdir / "log4j2.yaml").write_text(_LOG4J2)
        logging = f"-Dlog4j2.configurationFile={workdir / 'log4j2.yaml'}"
    jvm = [java, HEAP, "-XX:+UseG1GC", "-Djava.awt.headless=true", logging, "-cp", classpath]
    formatted = subprocess.run([*jvm, "kafka.tools.StorageTool", "format", "-t", cluster_id(), "-c", str(config)],
                               capture_output=True, text=True, cwd=workdir)
    if formatted.returncode != 0:
        raise HarnessError(f"Apache Kafka {version}'s storage tool failed (exit {formatted.returncode}):\n"
                           f"{(formatted.stdout + formatted.stderr)[-3000:]}")
    server = spawn(f"Apache Kafka {version}", [*jvm, "kafka.Kafka", str(config)], workdir,
                   {"primary": port, "controller": controller_port})

    wait_ready(server, lambda: _ready(server, 0), START_TIMEOUT)
    return server


def restart(server: UpstreamProcess) -> UpstreamProcess:
    """kill -9 and start again on the same log directory and ports (KRaft recovers the log and its metadata from
    disk); returns once the new process says it started and answers ApiVersions."""
    since = server.log_path.stat().st_size
    again = respawn(server)
    wait_ready(again, lambda: _ready(again, since), START_TIMEOUT)
    return again


def _ready(server: UpstreamProcess, since: int) -> bool:
    """It logged its start-up line after byte ``since`` of its log, and answers ApiVersions."""
    from wirecheck.protocols.kafka import SPEC
    from wirecheck.targets import probe

    with server.log_path.open("rb") as log:
        log.seek(since)
        started = STARTED.encode() in log.read()
    return started and probe.hello_answered(server.address, SPEC, 2.0)[0]
