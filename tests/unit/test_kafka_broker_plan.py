"""The kafka_broker role's host read and its install decisions (kafkaform.plans.kafka_broker):
the same for the role and the pyinfra deploy."""

from __future__ import annotations

import getpass
import grp
import os
import subprocess
from pathlib import Path

import pytest

from kafkaform.plans.kafka_broker import (
    AGENT_JAR_STATE,
    KafkaBrokerHost,
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
