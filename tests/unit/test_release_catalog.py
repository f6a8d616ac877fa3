"""The preflight's release rules (kafkaform.checks.releases): a release, Java, ZooKeeper line,
connector line or Scala build the catalog does not know is refused with its hosts and the fix
(KF-05), and so is a KRaft broker newer than its controllers (KR-12) and a feature an upgrade
must not raise (KR-13)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform import catalog, java, model
from kafkaform.defaults import role_default
from tests.unit.test_checks import Spec, errors_of, kraft, lab_like, view_of

OLD, NEW = catalog.KAFKA_VERSION, catalog.KAFKA_UPGRADE_VERSION


def _set(spec: Spec, group: str, key: str, value: Any, hosts: tuple[str, ...] = ()) -> Spec:
    for host in hosts or tuple(spec[group]):
        spec[group][host][key] = value
    return spec


def found(spec: Spec, cluster: dict[str, Any] | None = None) -> list[tuple[str, set[str], str]]:
    """Each release finding as (rule, hosts, message and fix)."""
    return [(f.rule, set(f.hosts), f"{f.message}. Fix: {f.fix}") for f in errors_of(spec, cluster)
            if f.rule in ("KF-05", "KR-12", "KR-13")]


def test_the_defaults_are_a_combination_the_catalog_knows() -> None:
    assert found(lab_like()) == []
    assert found(kraft("a", "b", "c")) == []
    for role in ("kafka_broker", "zookeeper", "spark_node"):
        assert java.java_major(role_default(f"{role}_java_package")) == 17
    for known in catalog.COMPATIBLE:
        assert 17 in known.java, known  # the one Java Debian 12 packages


@pytest.mark.parametrize(("group", "key", "value", "hosts", "says"), [
    ("kafka_broker", "kafka_broker_version", "3.9.0", ("k2",),
     f"kafka_broker_version 3.9.0 is not a release kafkaform's catalog knows. Fix: use {OLD}, "
     f"{catalog.KAFKA_PREVIOUS_VERSION}, {NEW} or {catalog.KAFKA_UPGRADE_PREVIOUS_VERSION}"),
    ("zookeeper", "zookeeper_version", "3.7.2", (),
     f"zookeeper_version 3.7.2 is not a release kafkaform's catalog knows. Fix: use "
     f"{catalog.ZOOKEEPER_VERSION} or {catalog.ZOOKEEPER_PREVIOUS_VERSION}"),
    ("spark_worker", "spark_node_version", "3.5.1", ("sw1",), "spark_node_version 3.5.1 is not"),
    ("kafka_broker", "kafka_broker_java_package", "openjdk-8-jre-headless", ("k1",),
     f"kafka {OLD} does not run on Java 8 (kafka_broker_java_package openjdk-8-jre-headless). "
     f"Fix: use openjdk-17-jre-headless (kafka {OLD} runs on Java 11, 17, 21)"),
    ("spark_master", "spark_node_java_package", "openjdk-11-jre-headless", ("sm",),
     f"spark {catalog.SPARK_VERSION} does not run on Java 11"),
    ("kafka_broker", "kafka_broker_archive_url",
     "http://mirror.test/kafka/3.9.2/kafka_2.12-3.9.2.tgz", (),
     "kafka_broker_archive_url is Kafka's Scala 2.12 build; the catalog knows its Scala 2.13 "
     "builds"),
])
def test_what_the_catalog_does_not_know_is_refused_naming_hosts_and_fix(
        group: str, key: str, value: str, hosts: tuple[str, ...], says: str) -> None:
    spec = _set(lab_like(), group, key, value, hosts)
    [(rule, named, text)] = found(spec)
    assert (rule, named) == ("KF-05", set(hosts or spec[group]))
    assert text.startswith(says)


def test_a_java_package_the_catalog_cannot_read_and_a_templated_version_are_left_alone() -> None:
    spec = _set(lab_like(), "kafka_broker", "kafka_broker_java_package", "temurin-21-jre")
    spec = _set(spec, "kafka_broker", "kafka_broker_version", "{{ kafka_version_of_site }}")
    assert found(spec) == []


def test_kafka_4_runs_on_java_17_not_11() -> None:
    spec = _set(_set(kraft("a", "b", "c"), "kafka_broker", "kafka_broker_version", NEW),
                "kafka_controller", "kafka_broker_version", NEW)
    assert found(spec) == []
    spec = _set(spec, "kafka_controller", "kafka_broker_java_package", "openjdk-11-jre-headless",
                ("c2",))
    [(rule, hosts, text)] = found(spec)
    assert (rule, hosts) == ("KF-05", {"c2"}) and f"kafka {NEW} does not run on Java 11" in text


def test_the_pipelines_connector_runs_against_the_lines_it_was_run_with(
        monkeypatch: pytest.MonkeyPatch) -> None:
    only_39 = catalog.Compatible("spark", catalog.SPARK_VERSION, java=(17,), kafka_lines=("3.9",))
    monkeypatch.setattr(catalog, "COMPATIBLE", (
        *(c for c in catalog.COMPATIBLE if c.name != "spark"), only_39))
    spec = _set(_set(kraft("a", "b", "c"), "kafka_broker", "kafka_broker_version", NEW),
                "kafka_controller", "kafka_broker_version", NEW)
    [(rule, hosts, text)] = found(spec)
    assert (rule, hosts) == ("KF-05", {"sm", "sw1"})
    assert text == (f"Spark {catalog.SPARK_VERSION}'s Kafka connector is not run with Kafka "
                    f"{catalog.release_line(NEW)} "
                    f"brokers (kafka_broker_version {NEW}). Fix: run the brokers on Kafka 3.9, "
                    "or Spark on a release whose connector is run with them")


def test_the_ensemble_runs_a_zookeeper_line_the_brokers_are_run_with(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Both ensembles' releases are ones Kafka 3.9.2 is run with: one member may be upgraded.
    mixed = _set(lab_like(), "zookeeper", "zookeeper_version", catalog.ZOOKEEPER_PREVIOUS_VERSION,
                 ("zk3",))
    assert found(mixed) == []
    only_38 = catalog.Compatible("kafka", OLD, java=(17,), modes=("zookeeper", "kraft"),
                                 zookeeper_lines=("3.8",))
    monkeypatch.setattr(catalog, "COMPATIBLE", (
        only_38, *(c for c in catalog.COMPATIBLE if c.name != "kafka" or c.version != OLD)))
    [(rule, hosts, text)] = found(mixed)
    assert (rule, hosts) == ("KF-05", {"k1", "k2", "k3"})
    assert text == (f"Kafka {OLD} is not run with ZooKeeper 3.9 (zookeeper_version "
                    f"{catalog.ZOOKEEPER_VERSION} on zk1, zk2). Fix: run the ensemble on "
                    "ZooKeeper 3.8")
    # Once the migration to KRaft has finalized, the ensemble no longer serves the brokers.
    assert found(mixed, {"kafka_kraft_migration": "finalized"}) == []


@pytest.mark.parametrize(("controllers", "brokers", "refused"), [
    (OLD, OLD, set()),
    (NEW, OLD, set()),  # the controllers rolled first: the brokers follow
    (NEW, NEW, set()),
    (OLD, NEW, {"k1", "k2", "k3"}),
])
def test_a_broker_never_runs_ahead_of_the_controllers(controllers: str, brokers: str,
                                                     refused: set[str]) -> None:
    spec = _set(_set(kraft("a", "b", "c"), "kafka_controller", "kafka_broker_version",
                     controllers), "kafka_broker", "kafka_broker_version", brokers)
    kr12 = [(hosts, text) for rule, hosts, text in found(spec) if rule == "KR-12"]
    assert kr12 == ([(refused, f"brokers would run a newer Kafka than the controller(s) c1, c2, "
                               f"c3 on {OLD}. Fix: raise kafka_broker_version on every "
                               "controller first (a run rolls them), then on the brokers")]
                    if refused else [])


def test_an_unset_release_or_java_is_the_roles_default() -> None:
    """The rule reads an unset input as its role's default, without templating each one."""
    from kafkaform.checks import releases
    from kafkaform.defaults import setting
    for _name, _groups, version_key, java_key in releases.ROLES:
        for key in (version_key, java_key):
            if key == "kafka_broker_version":  # the cluster's: model.kafka_release
                assert setting({}, key) == ""
                continue
            assert releases._default(key) == str(setting({}, key))


@pytest.mark.parametrize("given", [None, ""])
def test_an_unnamed_kafka_release_is_a_new_clusters_of_its_mode(given: str | None) -> None:
    from kafkaform.checks import releases
    spec = kraft("a", "b", "c")
    host = next(iter(spec["kafka_broker"]))
    spec["kafka_broker"][host]["kafka_broker_version"] = given
    view = view_of(spec)
    assert releases._value(view, host, "kafka_broker_version") == model.kafka_release(view)
    assert model.kafka_release(view) == catalog.CATALOG.kafka_upgrade.version


@pytest.mark.parametrize(("levels", "says"), [
    ({"transaction.version": 2, "group.version": 1}, None),
    ({"kraft.version": 1}, "kafka_broker_feature_levels: kraft.version would turn the static "
     "controller quorum (controller.quorum.voters) dynamic, for good, and kafkaform runs a static "
     "one. Fix: remove kraft.version from kafka_broker_feature_levels"),
    ({"metadata.version": 30}, "kafka_broker_feature_levels: metadata.version follows the "
     "release on its own. Fix: remove it from kafka_broker_feature_levels; "
     "kafka_broker_upgrade_metadata_version decides when it is raised"),
    ({"Transaction": 2}, "'Transaction' is not a Kafka feature name"),
    ({"group.version": "one"}, "group.version: 'one' is not a feature level. Fix: give "
     "group.version a whole level, 0 or more"),
    ({"group.version": True}, "group.version: True is not a feature level"),
])
def test_an_upgrade_raises_only_named_features_and_never_kraft_version(
        levels: dict[str, Any], says: str | None) -> None:
    spec = _set(_set(kraft("a", "b", "c"), "kafka_broker", "kafka_broker_feature_levels", levels),
                "kafka_controller", "kafka_broker_feature_levels", levels)
    if says is None:
        assert found(spec) == []
        return
    [(rule, hosts, text)] = found(spec)
    assert rule == "KR-13" and hosts == set(spec["kafka_broker"]) | set(spec["kafka_controller"])
    assert says in text
