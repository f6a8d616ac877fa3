"""The migration from ZooKeeper to KRaft (KR-09): where a cluster stands, which phases a run
takes, and what each node runs in each state."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform import kraft_migration, model
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.kraft_migration import Standing, phases_to_run, standing
from tests.unit.test_checks import errors_of, kraft, lab_like, view_of, with_controllers

ZK = "broker.id=1\nzookeeper.connect=z1:2181/kafka/x\n"
DUAL = ZK + "zookeeper.metadata.migration.enable=true\n"
KRAFT_BROKER = "process.roles=broker\nnode.id=1\n"
MIGRATING = "process.roles=controller\nzookeeper.metadata.migration.enable=true\n"
KRAFT_CONTROLLER = "process.roles=controller\n"


def test_a_nodes_state_is_read_from_the_properties_it_runs_with() -> None:
    assert [kraft_migration.broker_state(t) for t in ("", ZK, DUAL, KRAFT_BROKER)] == [
        "absent", "zookeeper", "dual_write", "kraft"]
    assert [kraft_migration.controller_state(t) for t in ("", MIGRATING, KRAFT_CONTROLLER)] == [
        "absent", "migrating", "kraft"]


@pytest.mark.parametrize(("brokers", "controllers", "expected"), [
    (["zookeeper", "zookeeper"], ["absent", "absent"], ("zookeeper", True)),
    (["zookeeper", "zookeeper"], ["migrating", "absent"], ("controllers", False)),
    (["zookeeper", "zookeeper"], ["migrating", "migrating"], ("controllers", True)),
    (["dual_write", "zookeeper"], ["migrating", "migrating"], ("dual_write", False)),
    (["dual_write", "dual_write"], ["migrating", "migrating"], ("dual_write", True)),
    (["kraft", "dual_write"], ["migrating", "migrating"], ("kraft_brokers", False)),
    (["kraft", "kraft"], ["migrating", "migrating"], ("kraft_brokers", True)),
    (["kraft", "kraft"], ["kraft", "migrating"], ("finalized", False)),
    (["kraft", "kraft"], ["kraft", "kraft"], ("finalized", True)),
])
def test_where_a_cluster_stands(brokers: list[str], controllers: list[str],
                                expected: tuple[str, bool]) -> None:
    found = standing({f"b{i}": s for i, s in enumerate(brokers)},
                     {f"c{i}": s for i, s in enumerate(controllers)})
    assert (found.state, found.complete, found.problem) == (*expected, "")


@pytest.mark.parametrize(("brokers", "controllers"), [
    (["zookeeper"], ["kraft"]),  # controllers out of migration under ZooKeeper-mode brokers
    (["kraft", "zookeeper"], ["migrating"]),  # a broker skipped dual write
    (["kraft", "dual_write"], ["kraft"]),  # finalized before every broker ran KRaft
])
def test_states_no_migration_passes_through_are_named_not_guessed(
        brokers: list[str], controllers: list[str]) -> None:
    found = standing({f"b{i}": s for i, s in enumerate(brokers)},
                     {f"c{i}": s for i, s in enumerate(controllers)})
    assert found.problem and "b0" in found.problem and "KR-09" in found.problem


def test_a_run_goes_up_to_the_soak_point_and_finalizes_only_when_asked() -> None:
    assert phases_to_run(Standing("zookeeper", True), "", False) == (
        ["controllers", "dual_write"], "")
    assert phases_to_run(Standing("dual_write", True), "", False) == ([], "")
    assert phases_to_run(Standing("dual_write", False), "", False) == (["dual_write"], "")
    assert phases_to_run(Standing("dual_write", True), "", True) == (
        ["kraft_brokers", "finalized"], "")
    assert phases_to_run(Standing("finalized", True), "", True) == ([], "")


def test_one_phase_at_a_time_in_order() -> None:
    assert phases_to_run(Standing("dual_write", True), "kraft_brokers", False) == (
        ["kraft_brokers"], "")
    # A phase cut short runs again; a finished one may run again and changes nothing.
    assert phases_to_run(Standing("kraft_brokers", False), "kraft_brokers", False) == (
        ["kraft_brokers"], "")
    assert phases_to_run(Standing("dual_write", True), "dual_write", False) == (
        ["dual_write"], "")
    skipped, why = phases_to_run(Standing("controllers", True), "kraft_brokers", False)
    assert skipped == [] and "kraft_migration_phase=dual_write first" in why
    back, why = phases_to_run(Standing("kraft_brokers", True), "controllers", False)
    assert back == [] and "kraft_rollback.yml" in why
    unknown, why = phases_to_run(Standing("zookeeper", True), "dualwrite", False)
    assert unknown == [] and "controllers, dual_write, kraft_brokers, finalized" in why


def test_finalizing_needs_the_explicit_switch() -> None:
    chosen, why = phases_to_run(Standing("kraft_brokers", True), "finalized", False)
    assert chosen == [] and "kraft_migration_finalize=true" in why
    assert phases_to_run(Standing("kraft_brokers", True), "finalized", True) == (
        ["finalized"], "")


def migrating(state: str) -> dict[str, Any]:
    spec = with_controllers("a", "b", "c")
    return model.build(view_of(spec, {"kafka_kraft_migration": state,
                                      "kafka_cluster_name": "orders"})).to_dict()


def props(context: dict[str, Any]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in context["server_properties"].splitlines()
                if line and not line.startswith("#"))


def test_the_inventory_names_the_state_and_preflight_accepts_a_migration() -> None:
    spec = with_controllers("a", "b", "c")
    assert errors_of(spec, {"kafka_kraft_migration": "dual_write"}) == []
    found = errors_of(spec, {"kafka_kraft_migration": "done"})
    assert [f.rule for f in found] == ["KR-09"] and "finalized" in found[0].fix


def test_kafka_4_waits_until_the_migration_is_finalized() -> None:
    """KR-10: Kafka 4 has no ZooKeeper mode."""
    spec = with_controllers("a", "b", "c")
    spec["kafka_broker"]["k2"]["kafka_broker_version"] = "4.1.2"
    for state in ("", "dual_write", "kraft_brokers"):
        found = [f for f in errors_of(spec, {"kafka_kraft_migration": state} if state else {})
                 if f.rule == "KR-10"]
        assert [f.hosts for f in found] == [("k2",)], state
        assert "4.1.2 has no ZooKeeper mode" in found[0].message
        assert "kafka_kraft_migration is finalized" in found[0].fix
    # Finalized, Kafka 4 may run; the controllers take it first (KR-12), then the brokers.
    assert [(f.rule, f.hosts) for f in errors_of(spec, {"kafka_kraft_migration": "finalized"})
            ] == [("KR-12", ("k2",))]
    for controller in spec["kafka_controller"].values():
        controller["kafka_broker_version"] = "4.1.2"
    assert errors_of(spec, {"kafka_kraft_migration": "finalized"}) == []
    # A ZooKeeper-mode cluster on Kafka 3.9, and a cluster born in KRaft mode on Kafka 4.
    assert [f for f in errors_of(lab_like(), {"kafka_broker_version": "3.9.2"})
            if f.rule == "KR-10"] == []
    assert errors_of(kraft("a", "b", "c"), {"kafka_broker_version": "4.1.2"}) == []


def test_controllers_migrate_as_zookeeper_clients_and_dial_the_brokers() -> None:
    context = kafka_broker_context(migrating("controllers"), "c1", {})
    p = props(context)
    assert p["process.roles"] == "controller"
    assert p["zookeeper.metadata.migration.enable"] == "true"
    assert p["zookeeper.connect"].endswith("/kafka/orders")
    assert p["zookeeper.set.acl"] == "true"
    # It becomes the brokers' controller: their inter-broker listener, over mutual TLS.
    assert p["inter.broker.listener.name"] == "BROKER"
    assert "BROKER:SSL" in p["listener.security.protocol.map"]
    assert p["listeners"] == "CONTROLLER://c1:9094"
    assert p["authorizer.class.name"].endswith("StandardAuthorizer")
    assert context["zookeeper_client"] is True
    assert any("login.config" in o for o in context["java"]["options"])


def test_brokers_change_nothing_until_the_dual_write_phase() -> None:
    before = kafka_broker_context(model.build(view_of(
        lab_like(), {"kafka_cluster_name": "orders"})).to_dict(), "k1", {})
    assert kafka_broker_context(migrating("controllers"), "k1", {})["server_properties"] \
        == before["server_properties"]


def test_dual_write_brokers_stay_in_zookeeper_mode_and_trust_the_controllers() -> None:
    p = props(kafka_broker_context(migrating("dual_write"), "k1", {}))
    assert p["broker.id"] == "1" and "process.roles" not in p
    assert p["zookeeper.metadata.migration.enable"] == "true"
    assert p["controller.quorum.voters"] == "3001@c1:9094,3002@c2:9094,3003@c3:9094"
    assert p["controller.listener.names"] == "CONTROLLER"
    assert "CONTROLLER:SSL" in p["listener.security.protocol.map"]
    assert "User:kafka-controller" in p["super.users"].split(";")
    assert "OU=kafka-controller" in p["ssl.principal.mapping.rules"]
    assert p["authorizer.class.name"].endswith("AclAuthorizer")


def test_kraft_brokers_leave_zookeeper_while_the_controllers_still_write_it() -> None:
    cluster = migrating("kraft_brokers")
    p = props(kafka_broker_context(cluster, "k1", {}))
    assert (p["process.roles"], p["node.id"]) == ("broker", "1")
    assert not [k for k in p if k.startswith("zookeeper.")]
    assert p["authorizer.class.name"].endswith("StandardAuthorizer")
    assert props(kafka_broker_context(cluster, "c1", {}))[
        "zookeeper.metadata.migration.enable"] == "true"


def test_finalized_is_kraft_mode_whether_the_ensemble_is_declared_or_not() -> None:
    finalized = kafka_broker_context(migrating("finalized"), "c1", {})
    assert "zookeeper.connect" not in props(finalized)
    spec = with_controllers("a", "b", "c")
    del spec["zookeeper"]
    without = kafka_broker_context(model.build(view_of(
        spec, {"kafka_cluster_name": "orders", "kafka_kraft_migration": "finalized"})).to_dict(),
        "c1", {})
    assert finalized["server_properties"] == without["server_properties"]


def test_a_rollback_retraces_the_phases_and_stops_at_finalization() -> None:
    steps = kraft_migration.rollback_steps
    assert steps(Standing("zookeeper", True)) == ([], "")
    assert steps(Standing("controllers", False, brokers=frozenset({"zookeeper"}))) == (
        ["controllers_stopped"], "")
    assert steps(Standing("dual_write", True, brokers=frozenset({"dual_write"}))) == (
        ["controllers_stopped", "zookeeper_cleared", "brokers_to_zookeeper"], "")
    # A broker may still run in KRaft mode, or not yet in migration mode: roll them all first.
    assert steps(Standing("dual_write", False, brokers=frozenset({"dual_write", "zookeeper"})))[
        0][0] == "brokers_to_dual_write"
    assert steps(Standing("kraft_brokers", True, brokers=frozenset({"kraft"})))[
        0][0] == "brokers_to_dual_write"
    none, why = steps(Standing("finalized", False))
    assert none == [] and "no way back" in why


def test_a_node_still_running_an_older_configuration_leaves_its_phase_incomplete() -> None:
    """A run stopped between writing a broker's files and restarting it: the state the files
    name is not reached, so the phase runs again (and a rollback rolls that broker too)."""
    brokers = {"b0": "dual_write", "b1": "dual_write"}
    controllers = {"c0": "migrating"}
    assert standing(brokers, controllers).state == "dual_write"
    assert standing(brokers, controllers).complete
    assert not standing(brokers, controllers, pending=["b1"]).complete


def test_a_stopped_controller_sends_the_migration_back_to_its_controllers_phase() -> None:
    """After a rollback stopped the controllers (their files stay), or when one failed, the next
    run starts the controllers phase again; a rollback from there rolls the brokers back too."""
    found = standing({"b0": "zookeeper"}, {"c0": "migrating"}, stopped=["c0"])
    assert (found.state, found.complete) == ("zookeeper", True)
    found = standing({"b0": "dual_write"}, {"c0": "migrating", "c1": "migrating"}, stopped=["c1"])
    assert (found.state, found.complete) == ("controllers", False)
    assert kraft_migration.rollback_steps(found)[0] == list(kraft_migration.ROLLBACK_STEPS)


def test_nodes_that_talk_to_the_quorum_restart_for_new_tls_material() -> None:
    """A broker's connection to the controllers keeps the certificate and trust bundle it
    started with: a node that talks to the quorum restarts for new ones, where a ZooKeeper-mode
    broker reloads them running (SE-02)."""
    def restarts_for_tls(cluster: dict[str, Any], host: str) -> bool:
        context = kafka_broker_context(cluster, host, {})
        return context["tls"]["keystore"] in context["restart_files"]

    assert not restarts_for_tls(migrating("controllers"), "k1")
    assert restarts_for_tls(migrating("controllers"), "c1")
    assert restarts_for_tls(migrating("dual_write"), "k1")
    assert restarts_for_tls(migrating("kraft_brokers"), "k1")
