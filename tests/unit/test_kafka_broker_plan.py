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

from kafkaform.model import InventoryView
from kafkaform.model import kafka_release as model_kafka_release
from kafkaform.plans import hostread
from kafkaform.plans.kafka_broker import (
    AGENT_JAR_STATE,
    ZNODES_SECURED_MARKER,
    KafkaBrokerFiles,
    KafkaBrokerHost,
    files_plan,
    host_read,
    install_plan,
    kafka_broker_plan,
    parse_host,
    running_cluster_vars,
)
from kafkaform.plans.running_cluster import running_cluster
from tests.unit.test_hostread_units import STARTS

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
    settings = {"kafka_broker_conf_dir": str(tmp_path / "conf"), "kafka_broker_user": user,
                "kafka_broker_group": group}
    data = tmp_path / "data"
    model = zk_cluster()
    model["brokers_by_host"]["k1"]["log_dirs"] = [str(data)]

    def read() -> KafkaBrokerHost:
        return parse_host(subprocess.run(host_read(model, "k1", settings), capture_output=True,
                                         text=True, check=True).stdout)

    fresh = read()
    assert fresh.release == "" and fresh.cores == os.cpu_count()
    assert "enabled:kafka.service" in hostread.answers(subprocess.run(
        host_read(model, "k1", settings), capture_output=True, text=True, check=True).stdout)
    assert fresh.passwd.startswith(f"{user}:") and fresh.group.startswith(f"{group}:")
    assert (fresh.running_config, fresh.cluster_id) == (None, "")
    (tmp_path / "conf").mkdir()
    data.mkdir()
    (tmp_path / "conf" / "release").write_text("kafka 3.9.2\n")
    (tmp_path / "conf" / "server.properties").write_text("broker.id=1\nlisteners=A://:1\n")
    (data / "meta.properties").write_text("version=0\ncluster.id=-3tiUGnOQzGepXxILMP_TA\n")
    found = read()
    assert found.release == "3.9.2"
    assert found.running_config == "broker.id=1\nlisteners=A://:1\n"
    assert found.cluster_id == "-3tiUGnOQzGepXxILMP_TA"
    assert found.znodes_secured == os.path.exists(ZNODES_SECURED_MARKER)


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


def zk_cluster(migration: str = "") -> dict[str, Any]:
    from tests.unit.test_security_steps import cluster

    return cluster(migration, kafka_broker_port=9093)


def kraft_cluster() -> dict[str, Any]:
    from tests.unit.test_kafka_context import kraft_cluster as built

    return built()


def test_a_converged_zookeeper_mode_broker_is_rolled_on_the_brokers_gate() -> None:
    p = kafka_broker_plan(zk_cluster(), "k1", {"kafka_broker_topics": [{"name": "t"}]}, CONVERGED)
    assert (p.refusal, p.format_storage_argv, p.older_release_argv) == ("", [], [])
    assert (p.converge_topics, p.converge_users, p.converge_acls) == (True, False, False)
    assert not p.raise_metadata_version and not p.secure_znodes
    assert p.roll.rule == "OP-02" and p.roll.after_argv == [*p.admin_argv, "elect"]
    assert p.roll.health_argv[:len(p.admin_argv)] == p.admin_argv
    assert p.verify_retries * (p.roll.try_s + p.roll.delay_s) >= p.roll.timeout_s
    assert p.as_vars()["install"]["admin_files"][0]["dest"] == p.install.admin_files[0].dest


def test_an_open_broker_is_not_secured_in_one_run() -> None:
    from tests.unit.test_security_steps import OPEN_BROKER

    running = KafkaBrokerHost(**{**CONVERGED.__dict__, "running_config": OPEN_BROKER})
    refusal = kafka_broker_plan(zk_cluster(), "k1", {}, running).refusal
    assert "k1 runs at step open" in refusal and "/etc/kafka/server.properties" in refusal
    assert "kafka_security_migration: plaintext_replication first" in refusal
    stepped = kafka_broker_plan(zk_cluster("plaintext_replication"), "k1", {}, running)
    assert stepped.refusal == ""


def test_old_znodes_get_acls_once_and_the_mark_goes_with_plaintext_replication() -> None:
    marked = KafkaBrokerHost(**{**CONVERGED.__dict__, "znodes_secured": True})
    first = kafka_broker_plan(zk_cluster("tls_replication"), "k1", {}, CONVERGED)
    again = kafka_broker_plan(zk_cluster("tls_replication"), "k1", {}, marked)
    assert (first.secure_znodes, first.mark_znodes_secured) == (True, True)
    assert (again.secure_znodes, again.mark_znodes_secured) == (False, True)
    back = kafka_broker_plan(zk_cluster("plaintext_replication"), "k1", {}, marked)
    assert back.forget_znodes_secured and not back.secure_znodes
    assert not kafka_broker_plan(zk_cluster("plaintext_replication"), "k1", {},
                                 CONVERGED).forget_znodes_secured


def test_a_kraft_broker_formats_its_storage_and_raises_metadata_version() -> None:
    model = kraft_cluster()
    p = kafka_broker_plan(model, "k1", {"kafka_broker_upgrade_metadata_version": True}, CONVERGED)
    assert f"--cluster-id={model['cluster_id']}" in p.format_storage_argv
    assert p.format_storage_argv[-2:] == ["--owner", "kafka:kafka"]
    assert p.raise_metadata_version
    assert set(p.kafka_nodes) == {"c1", "c2", "c3", "k1", "k2", "k3"}
    assert not kafka_broker_plan(model, "k1", {"kafka_broker_upgrade_metadata_version": False},
                                 CONVERGED).raise_metadata_version


def test_a_controller_converges_nothing_and_elects_nothing_after_its_roll() -> None:
    p = kafka_broker_plan(kraft_cluster(), "c1", {"kafka_broker_topics": [{"name": "t"}],
                                                  "kafka_broker_upgrade_metadata_version": True},
                          CONVERGED)
    assert (p.roll.rule, p.roll.after_argv) == ("KR-08", [])
    assert not (p.converge_topics or p.raise_metadata_version)
    assert p.format_storage_argv


def test_a_kraft_node_going_to_an_older_release_asks_the_cluster_first() -> None:
    newer = KafkaBrokerHost(**{**CONVERGED.__dict__, "release": "9.9.0"})
    p = kafka_broker_plan(kraft_cluster(), "k1", {}, newer)
    assert p.older_release_argv[-4:] == ["--dry-run", "features", "--release",
                                         p.context["release"]]
    assert kafka_broker_plan(kraft_cluster(), "k1", {}, CONVERGED).older_release_argv == []
    assert kafka_broker_plan(zk_cluster(), "k1", {}, newer).older_release_argv == []


def test_a_migration_refuses_a_log_directory_of_another_cluster() -> None:
    model = zk_cluster()
    other = KafkaBrokerHost(**{**CONVERGED.__dict__, "cluster_id": "OtherClusterId000000000"})
    refusal = kafka_broker_plan(model, "k1", {}, other).migration_refusal
    assert "meta.properties says cluster.id=OtherClusterId000000000" in refusal
    assert "Set kafka_cluster_id: OtherClusterId000000000" in refusal
    same = KafkaBrokerHost(**{**CONVERGED.__dict__, "cluster_id": str(model["cluster_id"])})
    assert kafka_broker_plan(model, "k1", {}, same).migration_refusal == ""


def _held(cluster_id: str) -> KafkaBrokerHost:
    return KafkaBrokerHost(**{**CONVERGED.__dict__, "cluster_id": cluster_id})


@pytest.mark.parametrize(("declared", "held", "expected", "take", "problem"), [
    # A new cluster: nothing formatted, the derived id.
    (False, {"k1": "", "k2": ""}, "derived", False, ""),
    # A cluster migrated from ZooKeeper: every node holds ZooKeeper's id, which the run takes.
    (False, {"k1": "ZkGivenId000000000000A", "k2": "ZkGivenId000000000000A", "c1": ""},
     "ZkGivenId000000000000A", True, ""),
    # Born in KRaft mode: the nodes hold the derived id, nothing to take.
    (False, {"k1": "derived", "k2": ""}, "derived", False, ""),
    # Two ids, none declared: the operator's to say.
    (False, {"k1": "IdA", "k2": "IdB", "k3": "IdA"}, "derived", False,
     "different cluster ids (k1, k3: IdA; k2: IdB)"),
    # kafka_cluster_id declared: the inventory's, whatever the nodes hold (KR-07 checks them).
    (True, {"k1": "IdA", "k2": "IdB"}, "derived", False, ""),
])
def test_the_cluster_id_comes_from_the_inventory_else_the_nodes_else_the_name(
        declared: bool, held: dict[str, str], expected: str, take: bool, problem: str) -> None:
    model = {**kraft_cluster(), "cluster_id_declared": declared}
    derived = str(model["cluster_id"])
    reads = {host: _held(derived if cid == "derived" else cid) for host, cid in held.items()}
    running = running_cluster(model, reads, {})
    assert running.id == (derived if expected == "derived" else expected)
    assert running.take is take
    assert (problem in running.problem) if problem else running.problem == ""
    if problem:
        assert "Set kafka_cluster_id to the cluster's own" in running.problem
        assert "(KR-07)" in running.problem


def test_the_running_cluster_id_reads_the_host_reads_output() -> None:
    model = {**kraft_cluster(), "cluster_id_declared": False}
    found = running_cluster_vars(model, {"k1": "cluster_id ZkGivenId000000000000A\n"
                                               "release kafka 3.9.1\n", "k2": ""},
                                 {"k1": None, "k2": ""})
    assert found == {"id": "ZkGivenId000000000000A", "take": True, "release": "3.9.2",
                     "problem": "", "quorum_formed": False, "serving_brokers": (),
                     "model": {"cluster_id": "ZkGivenId000000000000A", "kafka_release": "3.9.2",
                               "quorum_formed": False, "serving_brokers": []}}
    # The migration's controllers are then formatted with it, and its refusal has nothing to say.
    migrating = {**zk_cluster("controllers"), "cluster_id": found["id"]}
    assert kafka_broker_plan(migrating, "k1", {}, _held(found["id"])).migration_refusal == ""


def _runs(release: str) -> KafkaBrokerHost:
    return KafkaBrokerHost(**{**CONVERGED.__dict__, "release": release})


@pytest.mark.parametrize(("runs", "declared", "expected", "problem"), [
    # A new KRaft cluster: nothing runs, the newest Kafka 4 the catalog has.
    ({"c1": "", "k1": ""}, {}, "4.4.0", ""),
    # A cluster that runs a line keeps it, taking its newest patch release: a new line (and the
    # metadata.version it raises for good) only when named.
    ({"c1": "3.9.1", "k1": "3.9.2", "k2": ""}, {}, "3.9.2", ""),
    ({"c1": "4.1.2", "k1": "4.1.2"}, {}, "4.1.2", ""),
    # Nodes named a release are left out: the others keep the line they run.
    ({"c1": "4.4.0", "k1": "3.9.2"}, {"c1": "4.4.0"}, "3.9.2", ""),
    # Two lines among the nodes that name none: the operator's to say.
    ({"c1": "4.4.0", "k1": "3.9.2"}, {}, "4.4.0",
     "releases of different lines (k1: 3.9.2; c1: 4.4.0)"),
])
def test_a_node_without_a_release_runs_its_clusters_line_else_the_newest_of_its_mode(
        runs: dict[str, str], declared: dict[str, str], expected: str, problem: str) -> None:
    model = kraft_cluster()
    running = running_cluster(model, {host: _runs(r) for host, r in runs.items()}, declared)
    assert running.release == expected
    assert (problem in running.problem) if problem else running.problem == ""
    if problem:
        assert "Set kafka_broker_version in the inventory's group_vars/all" in running.problem
        assert "(KF-05)" in running.problem
    plan = kafka_broker_plan(running.model(model), "k1", {}, _runs(runs["k1"]))
    assert plan.install.release["artifact_version"] == expected
    assert plan.install.release["artifact_url"].endswith(f"/kafka_2.13-{expected}.tgz")
    named = kafka_broker_plan(running.model(model), "k1", {"kafka_broker_version": "4.1.2"},
                              _runs(runs["k1"]))
    assert named.install.release["artifact_version"] == "4.1.2"


def test_brokers_never_outrun_the_controllers_on_the_release_the_run_takes() -> None:
    """KR-12 with the taken line: the preflight sees only what the inventory names."""
    model = kraft_cluster()
    reads = {"c1": _runs("3.9.2"), "k1": _runs("3.9.2")}
    refused = running_cluster(model, reads, {"k1": "4.1.2"})
    assert refused.release == "3.9.2"
    assert refused.problem.startswith("k1 would run a newer Kafka than the controllers' 3.9.2 "
                                      "(KR-12). Raise kafka_broker_version on every controller")
    controllers_first = {host: "4.1.2" for host in ("c1", "c2", "c3", "k1")}
    assert running_cluster(model, reads, {**controllers_first, "k2": "4.1.2",
                                          "k3": "4.1.2"}).problem == ""
    # The brokers that name no release keep the line they run, older than the controllers'.
    assert running_cluster(model, {**reads, "k2": _runs("3.9.2")},
                           controllers_first).release == "3.9.2"


@pytest.mark.parametrize(("controllers", "ensemble", "migration", "expected"), [
    (True, False, "", "4.4.0"),            # KRaft from the start
    (False, True, "", "3.9.2"),            # ZooKeeper mode
    (True, True, "dual_write", "3.9.2"),   # a migration under way: Kafka 4 has no ZooKeeper
    (True, True, "kraft_brokers", "3.9.2"),
    (True, True, "finalized", "3.9.2"),    # migrated: on the line the migration ran
    (True, False, "finalized", "3.9.2"),   # and with the ensemble gone from the inventory
])
def test_a_new_clusters_release_is_the_newest_of_its_mode(controllers: bool, ensemble: bool,
                                                          migration: str, expected: str) -> None:
    groups = {"kafka_broker": ["k1"], **({"kafka_controller": ["c1"]} if controllers else {}),
              **({"zookeeper": ["z1"]} if ensemble else {})}
    view = InventoryView(groups, {"k1": {"kafka_kraft_migration": migration}})
    assert model_kafka_release(view) == expected


@pytest.mark.parametrize(("enabled", "active", "start"), STARTS)
def test_kafka_is_started_unless_it_is_enabled_and_active(enabled: str, active: str,
                                                          start: bool) -> None:
    read = parse_host(f"active:kafka.service {active}\narchitecture amd64\n"
                      f"enabled:kafka.service {enabled}\n")
    assert read.service_running is not start
    converged = KafkaBrokerHost(**{**CONVERGED.__dict__, "service_running": read.service_running})
    for cluster, node in ((zk_cluster(), "k1"), (kraft_cluster(), "c1")):
        assert kafka_broker_plan(cluster, node, {}, converged).start_service is start
    assert kafka_broker_plan(zk_cluster(), "k1", {}, KafkaBrokerHost()).start_service


def test_the_declared_state_is_read_on_a_broker_that_was_running() -> None:
    """A broker stopped when the run read the hosts (its failed disk being replaced, OP-13)
    cannot answer a dry run on its own SASL listener: the brokers that ran come first."""
    model = kraft_cluster()
    running = KafkaBrokerHost(**{**CONVERGED.__dict__, "service_running": True})
    stopped = KafkaBrokerHost(**{**CONVERGED.__dict__, "service_running": False})
    found = running_cluster(model, {"c1": running, "k1": stopped, "k2": running,
                                    "k3": running}, {})
    assert found.serving_brokers == ("k2", "k3")  # a controller is not asked
    p = kafka_broker_plan(found.model(model), "k1", {}, stopped)
    assert p.declared_state_hosts == ["k2", "k3", "k1"]
    assert p.as_vars()["declared_state_hosts"] == ["k2", "k3", "k1"]
    # Nothing running (a new cluster), or nothing read: the inventory's order.
    nothing = running_cluster(model, {"k1": stopped, "k2": stopped}, {})
    assert kafka_broker_plan(nothing.model(model), "k2", {}, stopped).declared_state_hosts == [
        "k1", "k2", "k3"]
    assert kafka_broker_plan(model, "k1", {}, stopped).declared_state_hosts == ["k1", "k2", "k3"]
    assert kafka_broker_plan(model, "c1", {}, running).declared_state_hosts == []


def test_brokers_roll_in_batches_only_when_asked_and_controllers_never() -> None:
    serial = kafka_broker_plan(zk_cluster(), "k1", {}, CONVERGED).roll
    assert (serial.parallelism, serial.batch_argv) == (1, [])
    batched = kafka_broker_plan(zk_cluster(), "k1", {"kafka_broker_restart_parallelism": 3},
                                CONVERGED)
    assert batched.roll.parallelism == 3
    assert batched.roll.batch_argv == [*batched.admin_argv, "placement"]
    # Every broker's rack by host, as the model has it: a rack's brokers may go together.
    model = zk_cluster()
    assert batched.roll.racks == {str(b["host"]): str(b["rack"]) for b in model["brokers"]
                                  if b.get("rack")}
    controller = kafka_broker_plan(kraft_cluster(), "c1",
                                   {"kafka_broker_restart_parallelism": 3}, CONVERGED).roll
    assert (controller.parallelism, controller.batch_argv) == (1, [])


def test_kraft_brokers_hold_the_cluster_wide_min_insync_replicas() -> None:
    model = kraft_cluster()
    p = kafka_broker_plan(model, "k1", {}, CONVERGED)
    assert p.cluster_defaults_argv == [*p.admin_argv, "cluster-defaults", "--set",
                                       f"min.insync.replicas={model['min_insync_replicas']}"]
    # Controllers, ZooKeeper-mode brokers: nothing to hold.
    assert kafka_broker_plan(model, "c1", {}, CONVERGED).cluster_defaults_argv == []
    assert kafka_broker_plan(zk_cluster(), "k1", {}, CONVERGED).cluster_defaults_argv == []
