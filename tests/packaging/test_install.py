"""wirecheck as a vendor gets it: the wheel, installed in a fresh virtualenv outside the checkout, runs a suite
against the reference broker; the container recipes lint clean and their entry points work (no image is built:
there is no container daemon here, so the test runs the commands the images run, from the installed wheel)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import venv
from pathlib import Path

import pytest

from tests.packaging.images import DOCKERFILES, ROOT, command_of
from wirecheck.targets.launcher import ephemeral_ports

pytestmark = pytest.mark.slow

GENERIC_NAMES = {"protocols", "strategies", "targets", "reports", "suites", "broker"}


#: exits 1 if any module named on its command line can be imported (a dotted name whose parent is absent cannot)
ABSENT = ("import importlib.util, sys\n"
          "def found(name):\n"
          "    try:\n"
          "        return importlib.util.find_spec(name) is not None\n"
          "    except ModuleNotFoundError:\n"
          "        return False\n"
          "sys.exit(any(map(found, sys.argv[1:])))")


def broker_requirements() -> list[str]:
    """pyproject's "broker" extra, read as docker/broker.Dockerfile reads it."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["broker"]


def tracked_tree(destination: Path) -> Path:
    """The checkout's tracked files only: what a clean clone would build from, and no build/ left behind."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    source = tracked_tree(root / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(root / "dist"), str(source)], check=True, cwd=root)
    [built] = (root / "dist").glob("wirecheck-*.whl")
    return built


def virtualenv(root: Path, *installs: list[str]) -> Path:
    """A virtualenv (no system site-packages) and the pip installs given; its bin folder."""
    venv.create(root, with_pip=True)
    for arguments in installs:
        subprocess.run([str(root / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *arguments],
                       check=True, cwd=root)
    return root / "bin"


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel and its declared dependencies, no extra: what `pip install wirecheck` gives a vendor."""
    return virtualenv(tmp_path_factory.mktemp("venv"), [str(wheel)])


@pytest.fixture(scope="module")
def broker_image(wheel, tmp_path_factory):
    """What docker/broker.Dockerfile installs: the wheel without its dependencies, then the broker extra alone."""
    return virtualenv(tmp_path_factory.mktemp("broker"), ["--no-deps", str(wheel)], broker_requirements())


def test_the_wheel_claims_no_generic_top_level_name(installed):
    shown = subprocess.run([str(installed / "pip"), "show", "-f", "wirecheck"], capture_output=True, text=True,
                           check=True).stdout
    files = shown.split("Files:", 1)[1].split()
    tops = {name.split("/")[0] for name in files if not name.startswith("..")}  # ../../../bin: the commands
    assert tops == {"wirecheck", "wirecheck-0.1.0.dist-info"}, tops
    assert {"../../../bin/wirecheck", "../../../bin/wirecheck-broker"} <= set(files)
    assert subprocess.run([str(installed / "python"), "-c", ABSENT, *GENERIC_NAMES], cwd=installed).returncode == 0


def test_a_plain_install_has_no_grpc_and_the_broker_says_what_its_controller_needs(installed, tmp_path):
    """gRPC is the broker extra's alone: without it the Pravega personality serves its segment store and says why
    it has no controller."""
    assert subprocess.run([str(installed / "python"), "-c", ABSENT, "grpc", "google.protobuf"]).returncode == 0
    ports = started(installed / "wirecheck-broker", tmp_path, "pravega")
    assert set(ports) == {"pravega"}, ports
    assert "pip install 'wirecheck[broker]'" in (tmp_path / "broker.log").read_text()


def test_the_broker_image_runs_every_personality_without_the_suite(broker_image, tmp_path):
    assert subprocess.run([str(broker_image / "python"), "-c", ABSENT, "pytest", "hypothesis", "scapy"]).returncode == 0
    ports = started(broker_image / "wirecheck-broker", tmp_path, "kafka,fluvio,pravega,barco,rustlog")
    assert {"kafka", "fluvio", "pravega", "pravega-controller", "barco", "rustlog"} <= set(ports), ports


def test_the_broker_extra_covers_every_import_of_the_broker():
    """Each third-party module broker/ imports (or reads package data of) is installed by a distribution the broker
    extra names."""
    import ast
    from importlib.metadata import packages_distributions

    imported = set()
    for path in (ROOT / "broker").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "files"
                  and node.args and isinstance(node.args[0], ast.Constant)):  # package data read by resources
                imported.add(str(node.args[0].value).split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"wirecheck"}
    named = {requirement.split("==")[0].lower() for requirement in broker_requirements()}
    distributions = packages_distributions()
    uncovered = {module for module in third_party if not {d.lower() for d in distributions.get(module, [])} & named}
    assert not uncovered, uncovered


def started(command: Path, tmp_path: Path, protocols: str) -> dict[str, int]:
    """Starts the broker with the given personalities on ephemeral ports, waits for its ready file, stops it;
    the ports it listened on (its log in broker.log)."""
    ready = tmp_path / "ready.json"
    log = (tmp_path / "broker.log").open("w")
    argv = [str(command), "--host", "127.0.0.1", "--protocols", protocols, "--ready-file", str(ready),
            *ephemeral_ports(protocols.split(","))]
    broker = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and broker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready.exists(), (tmp_path / "broker.log").read_text()[-3000:]
        bound = json.loads(ready.read_text())
        return bound["ports"] | {f"{name}-{endpoint}": port for name, endpoints in bound.get("endpoints", {}).items()
                                 for endpoint, port in endpoints.items()}
    finally:
        broker.terminate()
        broker.wait(timeout=10)
        log.close()


def test_an_installed_wirecheck_runs_a_suite_outside_the_checkout(installed, tmp_path):
    """The pytest11 entry point loads the plugin; the reference broker is launched from site-packages."""
    # the wheel alone, without the interop extra: the real-client cases are left out (they would be NOT-RUN)
    result = subprocess.run([str(installed / "wirecheck"), "run", "barco", "-p", "no:xdist", "-q", "-k", "not clients",
                             "--report-dir", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [run] = (tmp_path / "out").iterdir()
    totals = json.loads((run / "run.json").read_text())["totals"]
    assert totals.get("OK", 0) > 100 and set(totals) <= {"OK", "UNIMPLEMENTED"}, totals
    plain = subprocess.run([str(installed / "python"), "-m", "pytest", "--pyargs", "wirecheck.suites.rustlog",
                            "-p", "no:cacheprovider", "-q", "-k", "framing", "--report-dir", "plain"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and " passed" in plain.stdout, plain.stdout[-3000:] + plain.stderr[-3000:]
    kafka = subprocess.run([str(installed / "python"), "-m", "pytest", "--pyargs", "wirecheck.suites.kafka",
                            "-p", "no:cacheprovider", "-q", "-k", "kafka.api-versions", "--report-dir", "kafka"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert kafka.returncode == 0, kafka.stdout[-3000:] + kafka.stderr[-3000:]
    assert "Warning" not in kafka.stdout + kafka.stderr, kafka.stdout[:3000]  # as quiet as a checkout run


def test_the_container_recipes_lint_clean():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    result = subprocess.run([hadolint, *map(str, DOCKERFILES.values())], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_images_entry_points_run(installed, tmp_path):
    """The broker image's command (bound to loopback here) serves the tool image's command."""
    entry, default = command_of("broker")
    ready = tmp_path / "ready.json"
    broker = subprocess.Popen([str(installed / entry[0]), *entry[1:], *default, "--host", "127.0.0.1",
                               "--protocols", "rustlog", "--rustlog-port", "0", "--ready-file", str(ready)])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and broker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        port = json.loads(ready.read_text())["ports"]["rustlog"]
        entry, default = command_of("tool")
        tool = [str(installed / entry[0]), *entry[1:]]
        shown = subprocess.run([*tool, *default], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and "--target" in shown.stdout, shown.stderr[-2000:]
        result = subprocess.run([*tool, "rustlog", "--target", f"rustlog=127.0.0.1:{port}", "-p", "no:xdist",
                                 "-q", "-k", "fetch"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0 and " passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
    finally:
        broker.terminate()
        broker.wait(timeout=10)


def test_a_failure_reproduces_where_the_installed_run_ran(installed, tmp_path):
    """The reproduce and replay lines of an installed run work outside any checkout (no file paths of the
    package's own layout): the faulted broker fails the case again both ways."""
    ready = tmp_path / "ready.json"
    broker = subprocess.Popen([str(installed / "wirecheck-broker"), "--host", "127.0.0.1", "--protocols", "rustlog",
                               "--rustlog-port", "0", "--ready-file", str(ready),
                               "--fault", "rustlog.at-hw-next-offset-zero"])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and broker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        target = f"rustlog=127.0.0.1:{json.loads(ready.read_text())['ports']['rustlog']}"
        first = subprocess.run([str(installed / "wirecheck"), "run", "rustlog", "--target", target, "-p", "no:xdist",
                                "-q", "-k", "high_watermark", "--report-dir", "out"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
        assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-2000:]
        [record] = [json.loads(line) for path in (tmp_path / "out").glob("*/cases-*.jsonl")
                    for line in path.read_text().splitlines() if '"FAILED"' in line]
        reproduce = shlex.split(record["reproduce"])
        assert reproduce[:2] == ["pytest", "--pyargs"] and reproduce[2].startswith("wirecheck.suites.rustlog."), reproduce
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        again = subprocess.run([str(installed / "python"), "-m", *reproduce, "-p", "no:xdist", "--report-dir", "again"],
                               cwd=elsewhere, capture_output=True, text=True, timeout=300)
        assert again.returncode == 1 and "rustlog.fetch.at-hw: FAILED" in again.stdout, again.stdout[-3000:]
        replay = [line.split("replay:", 1)[1].strip() for line in first.stdout.splitlines()
                  if line.strip().startswith("replay:")]
        assert replay, first.stdout[-3000:]
        replayed = subprocess.run([str(installed / shlex.split(replay[0])[0]), *shlex.split(replay[0])[1:]],
                                  cwd=elsewhere, capture_output=True, text=True, timeout=120)
        assert replayed.returncode == 1 and "1 reproduced" in replayed.stdout, replayed.stdout + replayed.stderr
    finally:
        broker.terminate()
        broker.wait(timeout=10)
