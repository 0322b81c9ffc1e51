"""``--target-tls/--target-ca``: the suite speaks TLS to a target that only listens on TLS (the reference broker
started with ``--tls-cert/--tls-key``), and the same target fails the suite when TLS is not asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wirecheck.targets.launcher import launch
from tests.tls_support import make_certificates

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    certificates = make_certificates(tmp_path_factory.mktemp("tls"))
    broker = launch(protocols=["rustlog"], workdir=tmp_path_factory.mktemp("broker"),
                    extra_args=["--tls-cert", str(certificates.cert_file), "--tls-key", str(certificates.key_file)])
    yield broker, certificates
    broker.stop()


def _suite(*args: str, report_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           "suites/rustlog/test_admin.py", f"--report-dir={report_dir}", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_suite_passes_over_tls(tls_broker, tmp_path):
    broker, certificates = tls_broker
    done = _suite(f"--target=rustlog=127.0.0.1:{broker.ports['rustlog']}", "--target-tls",
                  f"--target-ca={certificates.ca_file}", report_dir=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]


def test_plaintext_to_a_tls_target_fails(tls_broker, tmp_path):
    broker, _ = tls_broker
    done = _suite(f"--target=rustlog=127.0.0.1:{broker.ports['rustlog']}", "--deadline=1", report_dir=tmp_path)
    assert done.returncode == 4, done.stdout[-3000:]  # said once, at the start: the target speaks TLS
    assert "answers TLS (give --target-tls" in done.stderr
