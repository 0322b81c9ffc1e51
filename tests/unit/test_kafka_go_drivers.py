"""The Go client drivers (suites/kafka/clients/go_drivers.py): NOT-RUN without go or without the binary; the
install line builds with the machine's Go and the go.sum as it is; each module pins its library exactly and asks
for no toolchain download; franz-go's KIP-848 needs ConsumerGroupHeartbeat v1."""

from __future__ import annotations

import os
import re

import pytest

from wirecheck.suites.kafka.clients import go_drivers


@pytest.fixture
def driver(tmp_path, monkeypatch):
    """A driver folder of sources, its binary not built yet; go found on PATH."""
    folder = tmp_path / "franz-go"
    folder.mkdir()
    for name in ("main.go", "go.mod", "go.sum"):
        (folder / name).write_text("x")
        os.utime(folder / name, (1_000, 1_000))
    monkeypatch.setitem(go_drivers.FOLDERS, "franz-go", folder)
    monkeypatch.setattr(go_drivers.shutil, "which", lambda name: "/usr/bin/go" if name == "go" else None)
    return folder


@pytest.mark.usefixtures("driver")
def test_a_driver_is_missing_without_its_binary_and_here_once_built():
    assert go_drivers.missing("franz-go")
    go_drivers.binary("franz-go").write_text("built")
    assert not go_drivers.missing("franz-go")


@pytest.mark.usefixtures("driver")
def test_no_go_toolchain_is_missing(monkeypatch):
    go_drivers.binary("franz-go").write_text("built")
    monkeypatch.setattr(go_drivers.shutil, "which", lambda name: None)
    assert go_drivers.missing("franz-go")


def test_the_install_line_builds_with_the_local_go_and_the_pinned_sums():
    line = go_drivers.install_line("sarama")
    assert "GOTOOLCHAIN=local" in line and "GOFLAGS=-mod=readonly" in line
    assert line.endswith("go build -o sarama-driver .")


@pytest.mark.parametrize(("client", "pins"), [
    ("franz-go", {"github.com/twmb/franz-go": "v1.22.3", "github.com/twmb/franz-go/pkg/kadm": "v1.20.0"}),
    ("sarama", {"github.com/IBM/sarama": "v1.61.1"})])
def test_each_module_pins_its_library_and_downloads_no_toolchain(client, pins):
    mod = (go_drivers.FOLDERS[client] / "go.mod").read_text()
    for module, version in pins.items():
        assert re.search(rf"^\s*{re.escape(module)} {re.escape(version)}$", mod, re.M), (module, version)
    assert re.search(r"^go 1\.2\d(\.\d+)?$", mod, re.M) and "toolchain" not in mod
    assert (go_drivers.FOLDERS[client] / "go.sum").read_text().count(next(iter(pins))) >= 2


def test_franz_go_joins_kip848_only_where_consumer_group_heartbeat_v1_is_advertised():
    assert go_drivers.versions_lacking("franz-go", "consumer-group-protocol", {68: (0, 0)}) == ["68 v1"]
    assert go_drivers.versions_lacking("franz-go", "consumer-group-protocol", {68: (0, 1)}) == []
    assert go_drivers.versions_lacking("sarama", "consumer-group-protocol", {68: (0, 0)}) == []
