"""Pravega itself as a target: Pravega standalone (io.pravega.local.LocalPravegaEmulator), one in-process
ZooKeeper, controller and segment store, in memory, without auth or TLS, on loopback.

The jars come from Maven Central through a checked-in build file per version (builds/pravega-<V>.pom.xml, exact
versions) and are kept in wirecheck's cache (``install``); ``start`` runs the emulator in the given work directory
with its settings in a properties file there, named by ``singlenode.configurationFile``: the emulator reads its
``singlenode.*`` settings from it (LocalPravegaEmulator.main), and the segment store includes it over its own
(standalone/src/main/java/io/pravega/local/InProcPravegaCluster.java, startLocalSegmentStore).

Addresses (Pravega 0.13.0's source): the segment store listens on 0.0.0.0 unless told otherwise (InProcPravegaCluster
sets LISTENING_IP_ADDRESS to ALL_INTERFACES), so it is told 127.0.0.1 and publishes that to the controller;
ZooKeeper binds "localhost" (ZooKeeperServiceRunner.LOOPBACK_ADDRESS); the REST servers and the admin gateway are off.
The controller's gRPC server has no listening-address setting in 0.13.0 (controller/.../rpc/grpc/GRPCServer.java:
``NettyServerBuilder.forPort(port)``, the wildcard address): wirecheck only ever connects to it on 127.0.0.1.
"""

from __future__ import annotations

import socket
from pathlib import Path

from wirecheck.targets.upstream import maven
from wirecheck.targets.upstream.maven import MavenBuild
from wirecheck.targets.upstream.process import HOST, UpstreamProcess, free_port, spawn, wait_ready

VERSIONS = ("0.13.0",)  # the newest release Maven Central serves here
TITLE = "Pravega"
START_TIMEOUT = 180.0  # seconds: ZooKeeper, a controller and a segment store in one JVM on a loaded 2-core machine
# LocalPravegaEmulator.main's line once start() has returned (standalone/.../local/LocalPravegaEmulator.java)
STARTED = "Pravega Sandbox is running locally now"
MAIN = "io.pravega.local.LocalPravegaEmulator"
JAR = "pravega-standalone-*.jar"
JVM = ["-Xmx1g", "-XX:MaxDirectMemorySize=1g", "-XX:+UseG1GC", "-Djava.awt.headless=true"]

# the emulator logs through logback: INFO to stdout (the log file), without the DEBUG flood of logback's default
_LOGBACK = """<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} %-5level [%thread] %logger{36}: %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.zookeeper" level="WARN"/>
  <logger name="org.apache.curator" level="WARN"/>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


BUILD = MavenBuild("pravega", TITLE, VERSIONS, JAR)
install, install_line, installed = BUILD.install, BUILD.install_line, BUILD.installed


def settings(ports: dict[str, int]) -> dict[str, str]:
    """The emulator's settings (standalone/.../local/SingleNodeConfig.java, component "singlenode") and the segment
    store's addresses (segmentstore/server/.../store/ServiceConfig.java, component "pravegaservice")."""
    return {
        "singlenode.zk.port": str(ports["zookeeper"]),
        "singlenode.controller.rpc.port": str(ports["controller"]),
        "singlenode.segmentStore.port": str(ports["primary"]),
        "singlenode.controller.rest.enable": "false",  # also the segment store's REST listener (InProcPravegaCluster)
        "singlenode.admin.gateway.enable": "false",
        "singlenode.security.auth.enable": "false",
        "singlenode.security.tls.enable": "false",
        "singlenode.metrics.enable": "false",
        "pravegaservice.service.listener.host.nameOrIp": HOST,
        "pravegaservice.service.published.host.nameOrIp": HOST,
    }


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=2.0):
            return True
    except OSError:
        return False


def start(workdir: Path, version: str = VERSIONS[0]) -> UpstreamProcess:
    """Start the emulator in ``workdir``; returns once it says it runs, its segment store answers Hello and its
    controller's port accepts. The suite learns the controller through ``options`` (``pravega.controller``)."""
    from wirecheck.protocols.pravega import SPEC
    from wirecheck.targets import probe

    lib = installed(version)
    java = maven.java("Pravega 0.13 needs Java 11 or newer")
    workdir.mkdir(parents=True, exist_ok=True)
    ports = {"primary": free_port(), "controller": free_port(), "zookeeper": free_port()}
    (workdir / "logback.xml").write_text(_LOGBACK)
    config = workdir / "standalone.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in settings(ports).items()))
    argv = [java, *JVM, f"-Dlogback.configurationFile={workdir / 'logback.xml'}",
            f"-Dsinglenode.configurationFile={config}", "-cp", str(lib / "*"), MAIN]
    server = spawn(f"Pravega {version}", argv, workdir, ports,
                   options={"controller": f"{HOST}:{ports['controller']}"})

    def ready() -> bool:
        return STARTED in server.log_path.read_text(errors="replace") and _accepts(ports["controller"]) and \
            probe.hello_answered(server.address, SPEC, 2.0)[0]

    wait_ready(server, ready, START_TIMEOUT)
    return server
