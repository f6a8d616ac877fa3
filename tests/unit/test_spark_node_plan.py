"""The spark_node role's plan: the host read's command and parser, and each decision the role
and the pyinfra deploy take from it (kafkaform.plans.spark_node)."""

from __future__ import annotations

import getpass
import grp
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafkaform.catalog import CATALOG
from kafkaform.plans.spark_node import (
    DAEMON_NAMES,
    JAR_STATE,
    SparkNodeHost,
    host_read,
    parse_host,
    pth_files,
    spark_node_plan,
)
from tests.unit.test_hostread_units import STARTS
from tests.unit.test_spark import cluster

JAR_URL = "http://mirror.test/maven/spark-sql-kafka_2.13-4.0.0.jar"
JAR = "/opt/kafkaform/spark/connector/spark-sql-kafka_2.13-4.0.0.jar"
#: The role's settings as the role_settings lookup hands them (the jars' URLs templated).
SETTINGS = {"spark_node_connector_urls": [JAR_URL], "spark_node_version": "4.0.0"}
CONVERGED = SparkNodeHost(
    architecture="amd64", installed=frozenset({"openjdk-17-jre-headless", "python3-minimal"}),
    cores=4, memory_mb=8192, python_env=True,
    passwd="spark:x:998:998:Apache Spark:/var/lib/spark:/usr/sbin/nologin",
    group="spark:x:998:", jars={JAR: JAR_STATE})


def plan(read: SparkNodeHost = CONVERGED, host: str = "sw1", **settings: Any) -> Any:
    return spark_node_plan(cluster(), host, {**SETTINGS, **settings}, read)


def test_a_new_node_gets_its_packages_account_environment_and_jars() -> None:
    p = plan(SparkNodeHost(architecture="arm64", cores=2, memory_mb=6144))
    assert (p.install_packages, p.create_account, p.create_python_env) == (True, True, True)
    assert p.jars_missing == [[JAR_URL, JAR]]
    assert p.context["java"]["binary"] == "/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
    assert (p.context["worker_cores"], p.context["worker_memory_mb"]) == (2, 6144 - 2048)


def test_a_converged_node_needs_nothing_installed() -> None:
    p = plan()
    assert (p.install_packages, p.create_account, p.create_python_env) == (False, False, False)
    assert p.jars_missing == []


def test_one_missing_package_installs_them() -> None:
    read = SparkNodeHost(**{**CONVERGED.__dict__, "installed": frozenset({"python3-minimal"})})
    assert plan(read).install_packages


def test_a_jar_not_as_downloaded_is_fetched_again() -> None:
    read = SparkNodeHost(**{**CONVERGED.__dict__, "jars": {JAR: "root:root:600"}})
    assert plan(read).jars_missing == [[JAR_URL, JAR]]


def test_every_file_a_daemon_reads_at_start_restarts_it() -> None:
    p = plan(host="sm")
    restarting = {f.dest for f in (*p.files, *p.secret_files) if f.restarts}
    daemon_files = {path for d in p.context["daemons"] for path in d["restart_files"]}
    assert restarting <= daemon_files
    assert {"/etc/spark/spark-defaults.conf", "/etc/systemd/system/spark-master.service"} \
        <= restarting


def test_the_workers_gate_skips_a_worker_by_its_address() -> None:
    p = plan(host="sm")
    assert set(p.gate_skips) == {"sw1", "sw2"}
    assert set(p.gate_skips.values()) <= set(p.workers_alive_argv)
    assert p.apps_served_argv[:2] == ["python3", "-c"]
    assert plan(spark_node_register_timeout_s=10).probe_retries == 4


def test_the_default_connector_urls_are_templated_as_the_role_templates_them() -> None:
    """The role default is a Jinja expression over the version: read as Ansible reads it."""
    planned = spark_node_plan(cluster(), "sw1", {}, SparkNodeHost(architecture="amd64"))
    assert [path.rsplit("/", 1)[-1] for _url, path in planned.jars_missing] == [
        jar.file_name for jar in CATALOG.spark_kafka_connectors[CATALOG.spark.version]]


def test_the_parser_reads_labels_not_positions() -> None:
    read = parse_host("\n".join([
        f"jar:{JAR} {JAR_STATE}", "memory_mb 3000", "package:python3-minimal ii ",
        "package:openjdk-17-jre-headless un ", "cores 6", "architecture ppc64el",
        "python_env yes"]))
    assert read.installed == {"python3-minimal"}
    assert (read.cores, read.memory_mb, read.architecture) == (6, 3000, "ppc64el")
    assert read.python_env and read.jars == {JAR: JAR_STATE}


def test_the_host_read_runs_and_parses_on_a_real_host(tmp_path: Path) -> None:
    user = getpass.getuser()
    group = grp.getgrgid(os.getgid()).gr_name
    jar = tmp_path / "install" / "connector" / "spark-sql-kafka_2.13-4.0.0.jar"
    settings = {**SETTINGS, "spark_node_user": user, "spark_node_group": group,
                "spark_node_install_dir": str(tmp_path / "install"),
                "spark_node_python_env": str(Path(sys.executable).parent.parent)}
    argv = host_read(cluster(), "sw1", settings)
    found = parse_host(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert found.python_env and found.cores >= 1 and found.memory_mb > 0
    assert found.passwd.startswith(f"{user}:") and found.jars == {str(jar): ""}
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"jar")
    jar.chmod(0o644)
    argv = host_read(cluster(), "sw1", settings)
    found = parse_host(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert found.jars[str(jar)] == f"{user}:{group}:644"


def test_the_pth_probe_runs_in_an_environment_and_names_pyspark_and_py4j(tmp_path: Path) -> None:
    """The probe as both engines run it, on this machine's Python, against a release layout."""
    lib = tmp_path / "python" / "lib"
    lib.mkdir(parents=True)
    for name in ("pyspark.zip", "py4j-0.10.9.7-src.zip", "py4j-0.10.9.9-src.zip"):
        (lib / name).write_bytes(b"")
    argv = plan().pth_read_argv
    ran = subprocess.run([sys.executable, *argv[1:-1], str(tmp_path)], capture_output=True,
                         text=True, check=True)
    [item] = pth_files(ran.stdout)
    assert item["dest"].endswith("/spark-release.pth") and item["mode"] == "0644"
    assert item["content"] == f"{lib}/pyspark.zip\n{lib}/py4j-0.10.9.9-src.zip\n"
    assert pth_files("") == []


def _running(*units: str) -> SparkNodeHost:
    return SparkNodeHost(**{**CONVERGED.__dict__, "running_units": frozenset(units)})


def test_only_the_daemons_not_enabled_and_active_are_started() -> None:
    master = [d["name"] for d in plan(host="sm").context["daemons"]]
    assert "spark-master" in master and set(master) <= set(DAEMON_NAMES)
    assert plan(host="sm").start_daemons == master  # nothing running
    assert plan(_running(*(f"{name}.service" for name in master)), host="sm").start_daemons == []
    assert plan(_running("spark-master.service"), host="sm").start_daemons == master[1:]
    # A worker starts its own daemon only; a master's unit running there changes nothing.
    assert plan(_running("spark-master.service")).start_daemons == ["spark-worker"]
    assert plan(_running("spark-worker.service")).start_daemons == []


@pytest.mark.parametrize(("enabled", "active", "start"), STARTS)
def test_the_parser_reads_each_daemons_unit(enabled: str, active: str, start: bool) -> None:
    read = parse_host(f"enabled:spark-worker.service {enabled}\ncores 6\n"
                      f"active:spark-worker.service {active}\n"
                      "enabled:spark-master.service enabled\nactive:spark-master.service active")
    assert read.running_units == ({"spark-master.service"} if start
                                  else {"spark-master.service", "spark-worker.service"})
    assert plan(_running(*read.running_units)).start_daemons == (["spark-worker"] if start
                                                                 else [])


def test_the_host_read_asks_every_daemon_a_node_may_run() -> None:
    """The read does not know which daemons the node runs: it asks each one's unit."""
    for name in DAEMON_NAMES:
        assert any(f"enabled:{name}.service" in part
                   for part in host_read(cluster(), "sw1", SETTINGS))
    run = {d["name"] for host, history in (("sm", True), ("sm", False), ("sw1", False))
           for d in plan(host=host, spark_node_history_server_enabled=history).context["daemons"]}
    assert run == set(DAEMON_NAMES)


def _marker(version: str) -> str:
    return (f"name=spark\nversion={version}\narchive=spark-{version}-bin-hadoop3.tgz\n"
            "sha512=ab\n")


@pytest.mark.parametrize(("installed", "units", "changes"), [
    ("4.0.0", {"spark-worker.service"}, True),  # the daemons run the old release: all at once
    ("4.2.0", {"spark-worker.service"}, False),  # the release is in place
    ("4.0.0", set(), False),  # nothing runs: the ordinary start starts the new release
    (None, set(), False),  # a new node
])
def test_a_new_release_under_running_daemons_moves_the_whole_cluster(
        installed: str | None, units: set[str], changes: bool) -> None:
    read = SparkNodeHost(**{**CONVERGED.__dict__, "running_units": frozenset(units),
                            "release_marker": _marker(installed) if installed else None})
    url = "http://mirror.test/spark/spark-4.2.0/spark-4.2.0-bin-hadoop3.tgz"
    for host in ("sw1", "sm"):
        p = plan(read, host=host, spark_node_version="4.2.0", spark_node_archive_url=url)
        assert p.release_change is changes
    # Only the master keeps a recovery state to empty, under the spark user's home.
    master = plan(read, host="sm", spark_node_version="4.2.0", spark_node_archive_url=url)
    assert master.clear_recovery_argv == ["find", "/var/lib/spark/recovery", "-mindepth", "1",
                                          "-delete"]
    assert plan(read, spark_node_version="4.2.0").clear_recovery_argv == []
    assert plan(read, host="sm", spark_node_master_recovery_mode="NONE").clear_recovery_argv == []
