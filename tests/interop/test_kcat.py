"""kcat (Debian package, its bundled librdkafka) through the reference broker: auto-created topic, group consume."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.interop.offsets import committed

pytestmark = pytest.mark.interop
KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.fixture
def kcat():
    if KCAT is None:
        pytest.fail("kcat is not installed (Debian: apt-get install kcat): a missing client fails, it is not skipped")
    return KCAT


def test_produce_and_group_consume_with_commit(kcat, kafka_bootstrap, unique):
    topic, group = unique("kcat-topic"), unique("kcat-group")
    lines = [f"line-{i}" for i in range(5)]
    # Produce to a topic that does not exist yet: kcat relies on auto-creation through Metadata.
    produced = subprocess.run([kcat, "-b", kafka_bootstrap, "-t", topic, "-P"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=20)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run([kcat, "-b", kafka_bootstrap, "-G", group, "-c", str(len(lines)), "-e", "-q",
                               "-X", "auto.offset.reset=earliest", topic],
                              capture_output=True, text=True, timeout=30)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.split() == lines
    assert committed(kafka_bootstrap, group, topic, 1) == {0: len(lines)}  # committed on close (auto commit)
