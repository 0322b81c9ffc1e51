"""Session settings: local defaults only for a local master, and never over what spark-submit was given."""

from __future__ import annotations

from wirecheck.reports.pipeline.fs import join
from wirecheck.reports.pipeline.session import JOB_CONF, LOCAL_CONF, session_conf


def test_run_directly_the_master_is_local_with_the_local_settings():
    master, conf = session_conf(None, {})
    assert master == "local[*]"
    assert conf == {**JOB_CONF, **LOCAL_CONF}


def test_a_cluster_master_from_spark_submit_gets_no_local_setting():
    given = {"spark.master": "spark://10.0.0.5:7077", "spark.sql.session.timeZone": "Europe/Paris"}
    master, conf = session_conf(None, given)
    assert master == "spark://10.0.0.5:7077"
    assert "spark.driver.host" not in conf and "spark.sql.shuffle.partitions" not in conf
    assert "spark.sql.session.timeZone" not in conf  # given with --conf: not ours to override


def test_a_local_submit_keeps_its_conf_and_gets_the_rest():
    master, conf = session_conf(None, {"spark.master": "local[4]", "spark.sql.shuffle.partitions": "7"})
    assert master == "local[4]"
    assert "spark.sql.shuffle.partitions" not in conf and conf["spark.driver.host"] == "127.0.0.1"


def test_our_master_option_wins_over_spark_submit_defaults():
    master, conf = session_conf("spark://127.0.0.1:7077", {"spark.master": "local[*]"})
    assert master == "spark://127.0.0.1:7077" and "spark.driver.host" not in conf


def test_uris_are_joined_without_losing_their_double_slash():
    assert join("s3a://bucket/wh/", "cases", "date=x") == "s3a://bucket/wh/cases/date=x"
