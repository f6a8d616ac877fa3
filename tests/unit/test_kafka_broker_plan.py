"""The kafka_broker role's host read and its install decisions (kafkaform.plans.kafka_broker):
the same for the role and the pyinfra deploy."""

from __future__ import annotations

import getpass
import grp
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkaform.plans.kafka_broker import (
    AGENT_JAR_STATE,
    KafkaBrokerFiles,
    KafkaBrokerHost,
    files_plan,
    host_read,
    install_plan,
    parse_host,
)

CONVERGED = KafkaBrokerHost(
    architecture="amd64", cores=4, installed=frozenset({"openjdk-17-jre-headless", "openssl"}),
    release="3.9.2", passwd="kafka:x:997:997::/var/lib/kafka:/usr/sbin/nologin",
    group="kafka:x:997:", agent_jar=AGENT_JAR_STATE)


def test_a_new_node_gets_its_packages_account_and_agent() -> None:
    p = install_plan({}, KafkaBrokerHost(architecture="arm64", cores=2))
    assert (p.install_packages, p.create_account, p.fetch_agent) == (True, True, True)
    assert p.packages == ["openjdk-17-jre-headless", "openssl"]
    assert (p.java_home, p.cores, p.release_before) == ("/usr/lib/jvm/java-17-openjdk-arm64",
                                                        2, "")


def test_a_converged_node_needs_nothing_installed() -> None:
    p = install_plan({}, CONVERGED)
    assert (p.install_packages, p.create_account, p.fetch_agent) == (False, False, False)
    assert p.release_before == "3.9.2"


def test_without_the_agent_its_jar_is_not_fetched() -> None:
    assert not install_plan({"kafka_broker_metrics_enabled": False},
                            KafkaBrokerHost(architecture="amd64")).fetch_agent


def test_an_account_with_another_shell_is_declared_again() -> None:
    moved = KafkaBrokerHost(**{**CONVERGED.__dict__,
                               "passwd": CONVERGED.passwd.replace("nologin", "bash")})
    assert install_plan({}, moved).create_account


def test_a_java_package_debian_does_not_ship_needs_its_home() -> None:
    with pytest.raises(ValueError, match="kafka_broker_java_home"):
        install_plan({"kafka_broker_java_package": "temurin-21-jre"}, CONVERGED)
    given = install_plan({"kafka_broker_java_package": "temurin-21-jre",
                          "kafka_broker_java_home": "/opt/temurin-21"}, CONVERGED)
    assert given.java_home == "/opt/temurin-21"


def test_the_parser_reads_labels_not_positions() -> None:
    read = parse_host("\n".join(["release kafka 4.1.2", "package:openssl ii ", "cores 8",
                                 "architecture s390x", f"agent_jar {AGENT_JAR_STATE}"]))
    assert (read.release, read.cores, read.architecture) == ("4.1.2", 8, "s390x")
    assert read.installed == {"openssl"} and read.agent_jar == AGENT_JAR_STATE


def test_the_host_read_runs_and_parses_on_a_real_host(tmp_path: Path) -> None:
    user = getpass.getuser()
    group = grp.getgrgid(os.getgid()).gr_name
    settings = {"kafka_broker_conf_dir": str(tmp_path), "kafka_broker_user": user,
                "kafka_broker_group": group}
    fresh = parse_host(subprocess.run(host_read(settings), capture_output=True, text=True,
                                      check=True).stdout)
    assert fresh.release == "" and fresh.cores == os.cpu_count()
    assert fresh.passwd.startswith(f"{user}:") and fresh.group.startswith(f"{group}:")
    (tmp_path / "release").write_text("kafka 3.9.2\n")
    found = parse_host(subprocess.run(host_read(settings), capture_output=True, text=True,
                                      check=True).stdout)
    assert found.release == "3.9.2"


def broker_files(**settings: Any) -> KafkaBrokerFiles:
    from kafkaform.contexts.kafka_broker import kafka_broker_context
    from tests.unit.test_kafka_context import cluster

    return files_plan(kafka_broker_context(cluster(), "k1", settings))


def test_every_file_read_at_start_restarts_the_broker_and_no_other() -> None:
    p = broker_files()
    read_at_start = {f.dest for f in (*p.files, *p.secret_files) if f.restarts}
    assert {"/etc/kafka/server.properties", "/etc/systemd/system/kafka.service",
            "/etc/kafka/kafka-jaas.conf"} <= read_at_start
    rules = next(f for f in p.files if f.dest.endswith("jmx-exporter.yml"))
    assert not rules.restarts  # the agent rereads its rules


def test_the_jmx_password_file_is_the_service_users_alone() -> None:
    p = broker_files(kafka_broker_jmx_enabled=True, kafka_broker_jmx_password="secret")
    [password] = [f for f in p.secret_files if f.dest.endswith("jmx.password")]
    assert (password.owner, password.group, password.mode) == ("kafka", "kafka", "0600")
    assert p.secrets == {"keystore": "keystore", "zookeeper": "zookeeper-kafka"}


def test_without_jmx_or_the_agent_their_files_are_not_written() -> None:
    p = broker_files(kafka_broker_metrics_enabled=False)
    assert not [f for f in (*p.files, *p.secret_files) if "jmx" in f.dest]
