"""An upstream server's runtime jars, resolved by Maven from a checked-in build file with exact versions
(builds/<name>-<version>.pom.xml) into wirecheck's cache once, and the Java runtime that runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from wirecheck.protocols.verdicts import HarnessError
from wirecheck.targets.upstream.process import cache_root

BUILDS = Path(__file__).resolve().parent / "builds"


@dataclass(frozen=True)
class MavenBuild:
    name: str  # the build files' and the cache entries' stem, and the protocol: "kafka"
    title: str  # "Apache Kafka"
    versions: tuple[str, ...]  # the first is the default
    marker: str  # a jar every complete copy holds: "kafka_2.13-*.jar"

    def pom(self, version: str) -> Path:
        if version not in self.versions:
            raise HarnessError(f"{self.title} {version} has no build file here; known: {', '.join(self.versions)}")
        return BUILDS / f"{self.name}-{version}.pom.xml"

    def lib_dir(self, version: str) -> Path:
        self.pom(version)
        return cache_root() / f"{self.name}-{version}" / "lib"

    def install_line(self, version: str) -> str:
        return f"wirecheck upstream {self.name} --version {version} --install"

    def install(self, version: str) -> Path:
        """Resolve the runtime jars into the cache (once: a complete copy is kept as it is). The copy is made beside
        the cache entry and renamed into place, so an interrupted install leaves nothing half-made."""
        target = self.lib_dir(version)
        if any(target.glob(self.marker)):
            return target
        mvn = shutil.which("mvn")
        if mvn is None:
            raise HarnessError(f"Maven (mvn) is not on PATH: it resolves {self.title} from Maven Central")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="lib-", dir=target.parent))
        done = subprocess.run([mvn, "-q", "-B", "-f", str(self.pom(version)), "dependency:copy-dependencies",
                               f"-DoutputDirectory={staging}", "-DincludeScope=runtime"], capture_output=True, text=True)
        if done.returncode != 0 or not any(staging.glob(self.marker)):
            shutil.rmtree(staging, ignore_errors=True)
            raise HarnessError(f"Maven could not resolve {self.title} {version} (exit {done.returncode}):\n"
                               f"{(done.stdout + done.stderr)[-3000:]}")
        try:
            staging.rename(target)
        except OSError:  # another process installed it meanwhile: theirs is as good
            shutil.rmtree(staging, ignore_errors=True)
        return target

    def installed(self, version: str) -> Path:
        target = self.lib_dir(version)
        if not any(target.glob(self.marker)):
            raise HarnessError(f"{self.title} {version} is not installed here ({self.install_line(version)})")
        return target


def java(needs: str) -> str:
    """The Java runtime: JAVA_HOME's, else the one on PATH; ``needs`` says which version the server needs."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        raise HarnessError(f"no Java runtime (java on PATH or JAVA_HOME): {needs}")
    return found
