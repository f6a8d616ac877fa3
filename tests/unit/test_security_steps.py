"""Securing a cluster built open, in place: the steps each file shows, the runs a gate allows, and
what each step renders (SE-10)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform import checks, model, render, security_steps
from kafkaform.contexts.kafka_broker import kafka_broker_context
from kafkaform.contexts.zookeeper import zookeeper_context
from kafkaform.plans.files import template
from kafkaform.template_filters import parse_java_properties
from tests.unit.test_checks import lab_like, view_of

#: server.properties of a broker an earlier kafkaform release built: plaintext only.
OPEN_BROKER = "broker.id=1\nlisteners=PLAINTEXT://0.0.0.0:9092\n" \
              "advertised.listeners=PLAINTEXT://k1:9092\n"
#: zoo.cfg of a member such a release built: no authentication at all.
OPEN_MEMBER = "tickTime=2000\nclientPort=2181\nserver.1=zk1:2888:3888\n"
ZOO_CFG = template("zookeeper", "etc/zookeeper/zoo.cfg.j2")


def cluster(migration: str, **extra: Any) -> dict[str, Any]:
    settings = {"kafka_security_migration": migration, **extra}
    return model.build(view_of(lab_like(), settings)).to_dict()


def props(text: str) -> dict[str, str]:
    return parse_java_properties(text)


def server_properties(migration: str) -> str:
    """k1's server.properties, its client listener moved off the plaintext port (the preflight
    refuses the clash)."""
    context = kafka_broker_context(cluster(migration, kafka_broker_port=9093), "k1", {})
    return str(context["server_properties"])


def zoo_cfg(migration: str) -> str:
    ctx = zookeeper_context(cluster(migration), "zk1", {})
    return render.render(ZOO_CFG, {"zookeeper": ctx})


def test_an_open_cluster_reads_as_open() -> None:
    assert security_steps.broker_step(OPEN_BROKER) == "open"
    assert security_steps.member_step(OPEN_MEMBER) == "open"


@pytest.mark.parametrize("migration", security_steps.MIGRATION_VALUES)
def test_each_step_renders_files_that_read_as_that_step(migration: str) -> None:
    """The gate reads the step back from the files the roles write: the two must agree."""
    wanted = security_steps.target_step(migration)
    assert security_steps.broker_step(server_properties(migration)) == wanted
    assert security_steps.member_step(zoo_cfg(migration)) == wanted
    assert kafka_broker_context(cluster(migration, kafka_broker_port=9093), "k1",
                                {})["security_step"] == wanted
    assert zookeeper_context(cluster(migration), "zk1", {})["security_step"] == wanted


def test_plaintext_replication_keeps_what_the_brokers_not_yet_restarted_need() -> None:
    p = props(server_properties("plaintext_replication"))
    assert p["listeners"] == "BROKER://k1:9091,CLIENT://k1:9093,PLAINTEXT://k1:9092"
    assert p["advertised.listeners"] == p["listeners"]
    assert p["inter.broker.listener.name"] == "PLAINTEXT"
    assert "PLAINTEXT:PLAINTEXT" in p["listener.security.protocol.map"]
    assert "User:ANONYMOUS" in p["super.users"].split(";")
    assert p["zookeeper.set.acl"] == "false"


def test_tls_replication_moves_replication_and_znode_acls_to_the_secured_side() -> None:
    p = props(server_properties("tls_replication"))
    assert p["inter.broker.listener.name"] == "BROKER"
    assert p["zookeeper.set.acl"] == "true"
    assert "PLAINTEXT://" in p["listeners"] and "User:ANONYMOUS" in p["super.users"]
    moved = cluster("tls_replication", kafka_broker_port=9093)
    assert kafka_broker_context(moved, "k1", {})["secure_existing_znodes"]


def test_the_end_keeps_nothing_plaintext() -> None:
    p = props(server_properties(""))
    assert "PLAINTEXT" not in p["listeners"] and "ANONYMOUS" not in p["super.users"]
    assert props(zoo_cfg(""))["enforce.auth.enabled"] == "true"


def test_the_admin_tools_use_the_listener_every_broker_has_at_every_step() -> None:
    """Brokers still open have no BROKER listener: while securing, admin goes over plaintext."""
    during = kafka_broker_context(cluster("plaintext_replication", kafka_broker_port=9093),
                                  "k1", {})
    assert during["admin_bootstrap_servers"] == "k1:9092,k2:9092,k3:9092"
    assert "security.protocol" not in props(during["admin_client_properties"])
    after = kafka_broker_context(cluster(""), "k1", {})
    assert after["admin_bootstrap_servers"] == "k1:9091,k2:9091,k3:9091"


@pytest.mark.parametrize(("running", "wanted", "allowed"), [
    ("open", "plaintext_replication", True),
    ("open", "tls_replication", False),
    ("open", "secured", False),
    ("plaintext_replication", "tls_replication", True),
    ("plaintext_replication", "secured", False),
    ("tls_replication", "secured", True),
    ("tls_replication", "plaintext_replication", True),
    ("secured", "secured", True),
    ("secured", "plaintext_replication", False),
])
def test_a_run_moves_a_host_one_step_at_most(running: str, wanted: str, allowed: bool) -> None:
    problem = security_steps.step_problem("k1", "/etc/kafka/server.properties", running, wanted)
    assert (problem == "") is allowed
    if not allowed:
        assert "k1 runs at step " + running in problem and "SE-10" in problem
        assert "kafka_security_migration: " in problem


def test_the_refusal_names_the_run_to_make_first() -> None:
    problem = security_steps.step_problem("zk1", "/etc/zookeeper/zoo.cfg", "open", "secured")
    assert "kafka_security_migration: plaintext_replication first" in problem
    problem = security_steps.step_problem("k1", "x", "plaintext_replication", "secured")
    assert "kafka_security_migration: tls_replication first" in problem


def test_the_preflight_checks_the_step_and_the_plaintext_port() -> None:
    def findings(**settings: Any) -> list[checks.Finding]:
        found = checks.check(view_of(lab_like(), settings))
        return [f for f in found if f.rule == "SE-10" or "share a port" in f.message]

    assert findings() == []
    wrong = [f for f in findings(kafka_security_migration="halfway") if f.rule == "SE-10"]
    assert [f.severity for f in wrong] == ["error"] and "'halfway'" in wrong[0].message
    clash = findings(kafka_security_migration="plaintext_replication")
    assert {f.hosts for f in clash if f.severity == "error"} == {("k1",), ("k2",), ("k3",)}
    assert "listeners share a port: 9092 (CLIENT, PLAINTEXT)" in clash[0].message
    moved = findings(kafka_security_migration="plaintext_replication", kafka_broker_port=9093)
    assert [f.severity for f in moved] == ["warning"]
    assert "stays open to the network" in moved[0].message


# ZooKeeper's TLS (SE-18) ---------------------------------------------------------------------


#: zoo.cfg of a member an earlier release secured with SASL, without TLS.
SASL_MEMBER = OPEN_MEMBER + "authProvider.sasl=x\nenforce.auth.enabled=true\n" \
                            "quorum.auth.learnerRequireSasl=true\n"


def zoo_cfg_at(tls_migration: str, migration: str = "") -> dict[str, str]:
    built = cluster(migration, kafka_zookeeper_tls_migration=tls_migration)
    return props(render.render(ZOO_CFG,
                               {"zookeeper": zookeeper_context(built, "zk1", {})}))


@pytest.mark.parametrize("tls_migration", security_steps.TLS_MIGRATION_VALUES)
def test_each_tls_step_renders_a_zoo_cfg_that_reads_as_that_step(tls_migration: str) -> None:
    wanted = security_steps.tls_target_step(tls_migration, "")
    rendered = render.render(ZOO_CFG, {"zookeeper": zookeeper_context(
        cluster("", kafka_zookeeper_tls_migration=tls_migration), "zk1", {})})
    assert security_steps.member_tls_step(rendered) == wanted
    assert security_steps.member_tls_step(OPEN_MEMBER) == "plain"
    assert security_steps.member_tls_step(SASL_MEMBER) == "plain"


def test_tls_is_offered_beside_plaintext_then_used_then_required() -> None:
    """What keeps a roll serving: members restarted at a step accept what those not restarted
    yet send, and clients move to the secure port only once every member serves it."""
    offered = zoo_cfg_at("offered")
    assert (offered["secureClientPort"], offered["portUnification"], offered["sslQuorum"]) == \
        ("2182", "true", "false")
    assert "clientPortAddress" not in offered  # brokers still connect in plaintext
    connecting = zoo_cfg_at("connecting")
    assert (connecting["portUnification"], connecting["sslQuorum"]) == ("true", "true")
    assert "clientPortAddress" not in connecting  # members not restarted yet probe it
    required = zoo_cfg_at("")
    assert (required["portUnification"], required["sslQuorum"]) == ("false", "true")
    assert required["clientPortAddress"] == "127.0.0.1"
    for cfg in (offered, connecting, required):
        assert cfg["serverCnxnFactory"].endswith("NettyServerCnxnFactory")
        assert cfg["ssl.clientAuth"] == cfg["ssl.quorum.clientAuth"] == "need"
        assert cfg["ssl.quorum.hostnameVerification"] == "true"
        assert cfg["secureClientPortAddress"] == "zk1"
        assert "CBC" not in cfg["ssl.ciphersuites"] + cfg["ssl.quorum.ciphersuites"]
        assert cfg["ssl.keyStore.passwordPath"].endswith("keystore.password")
        assert "password=" not in "\n".join(f"{k}={v}" for k, v in cfg.items()).lower()


def test_an_open_cluster_takes_the_tls_steps_with_its_securing_steps() -> None:
    assert security_steps.member_tls_step(
        render.render(ZOO_CFG, {"zookeeper": zookeeper_context(
            cluster("plaintext_replication"), "zk1", {})})) == "offered"
    assert zookeeper_context(cluster("tls_replication"), "zk1", {})["tls_step"] == "connecting"
    assert zookeeper_context(cluster("tls_replication"), "zk1", {})["probe_options"]
    assert zookeeper_context(cluster("plaintext_replication"), "zk1", {})["probe_options"] == []


@pytest.mark.parametrize(("running", "wanted", "allowed"), [
    ("plain", "offered", True),
    ("plain", "connecting", False),
    ("plain", "required", False),
    ("offered", "connecting", True),
    ("offered", "required", False),
    ("connecting", "required", True),
    ("required", "offered", False),
    ("required", "connecting", True),
])
def test_a_run_moves_a_member_one_tls_step_at_most(running: str, wanted: str,
                                                    allowed: bool) -> None:
    problem = security_steps.tls_step_problem("zk1", "/etc/zookeeper/zoo.cfg", running, wanted)
    assert (problem == "") is allowed
    if not allowed:
        assert "zk1 runs at step " + running in problem and "SE-18" in problem


def test_a_member_secured_without_tls_is_told_the_first_tls_step() -> None:
    """A cluster an earlier release secured: its SASL step is reached, its TLS one is not."""
    path = "/etc/zookeeper/zoo.cfg"
    problem = security_steps.member_problem("zk1", path, SASL_MEMBER, "secured", "required")
    assert "kafka_zookeeper_tls_migration: offered first" in problem, problem
    assert security_steps.member_problem("zk1", path, SASL_MEMBER, "secured", "offered") == ""
    # An open member is told its authentication's step first.
    problem = security_steps.member_problem("zk1", path, OPEN_MEMBER, "secured", "required")
    assert "kafka_security_migration: plaintext_replication first" in problem


def test_the_preflight_checks_the_tls_step() -> None:
    found = checks.check(view_of(lab_like(), {"kafka_zookeeper_tls_migration": "halfway"}))
    wrong = [f for f in found if f.rule == "SE-18"]
    assert [f.severity for f in wrong] == ["error"] and "'halfway'" in wrong[0].message
    found = checks.check(view_of(lab_like(), {"kafka_zookeeper_tls_migration": "offered"}))
    assert [f.severity for f in found if f.rule == "SE-18"] == ["warning"]
