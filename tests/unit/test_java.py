"""Java in one place (kafkaform.java): the home follows the package and the architecture, and
every role installs the same package by default."""

from __future__ import annotations

import pytest

from kafkaform import java
from kafkaform.defaults import role_defaults


@pytest.mark.parametrize(("package", "architecture", "home"), [
    ("openjdk-17-jre-headless", "amd64", "/usr/lib/jvm/java-17-openjdk-amd64"),
    ("openjdk-21-jre-headless", "ppc64el", "/usr/lib/jvm/java-21-openjdk-ppc64el"),
    ("openjdk-17-jdk", "s390x", "/usr/lib/jvm/java-17-openjdk-s390x"),
])
def test_java_home_follows_the_package_and_the_architecture(package: str, architecture: str,
                                                             home: str) -> None:
    assert java.java_home(package, architecture, "zookeeper_java_home") == home


@pytest.mark.parametrize("role", ["zookeeper", "kafka_broker", "spark_node"])
def test_every_jvm_role_installs_the_one_java_package_by_default(role: str) -> None:
    assert role_defaults(role)[f"{role}_java_package"] == java.DEFAULT_PACKAGE


def test_a_given_home_wins_over_the_package() -> None:
    assert java.java_home("temurin-21-jre", "amd64", "x", "/opt/temurin") == "/opt/temurin"
