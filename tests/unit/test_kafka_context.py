"""The kafka_broker template context: server.properties from the model, validated extras."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform import checks, model, render
from kafkaform.catalog import CATALOG
from kafkaform.contexts.kafka_broker import (
    extra_properties_problems,
    kafka_broker_context,
    settings_problems,
    thread_counts,
)
from kafkaform.defaults import role_default
from kafkaform.plans.files import template
from tests.unit.test_checks import lab_like, view_of


def cluster() -> dict[str, Any]:
    return model.build(view_of(lab_like(), {"kafka_cluster_name": "orders"})).to_dict()


def props(context: dict[str, Any]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in context["server_properties"].splitlines())


def test_server_properties_follow_the_model_and_the_literature() -> None:
    p = props(kafka_broker_context(cluster(), "k3", {"kafka_broker_cores": 4}))
    assert p["broker.id"] == "3"
    assert p["broker.rack"] == "b"
    assert p["zookeeper.connect"] == "zk1:2182,zk2:2182,zk3:2182/kafka/orders"
    assert p["advertised.listeners"] == "BROKER://k3:9091,CLIENT://k3:9092"
    assert p["listeners"] == "BROKER://k3:9091,CLIENT://k3:9092"
    assert p["log.dirs"] == "/var/lib/kafka/data/kafka-logs"
    assert int(p["num.recovery.threads.per.data.dir"]) > 1
    assert (p["auto.create.topics.enable"], p["unclean.leader.election.enable"],
            p["controlled.shutdown.enable"]) == ("false", "false", "true")
    assert (p["default.replication.factor"], p["min.insync.replicas"]) == ("3", "2")
    assert int(p["replica.fetch.max.bytes"]) >= int(p["message.max.bytes"])
    assert "auto.leader.rebalance.enable" in p and "delete.topic.enable" in p
    assert (p["num.network.threads"], p["num.io.threads"]) == ("3", "8")


def test_brokers_reach_zookeeper_over_mutual_tls_once_the_members_serve_it() -> None:
    """SE-18: the broker's own keystore and the cluster CA on the secure client port, the
    members' names checked, AEAD suites only; plaintext while the ensemble only offers TLS."""
    p = props(kafka_broker_context(cluster(), "k1", {}))
    assert p["zookeeper.ssl.client.enable"] == "true"
    assert p["zookeeper.clientCnxnSocket"] == "org.apache.zookeeper.ClientCnxnSocketNetty"
    assert p["zookeeper.ssl.keystore.location"] == p["ssl.keystore.location"]
    assert p["zookeeper.ssl.keystore.password"].startswith("${file:")
    assert p["zookeeper.ssl.truststore.location"] == p["ssl.truststore.location"]
    assert p["zookeeper.ssl.endpoint.identification.algorithm"] == "HTTPS"
    assert p["zookeeper.ssl.cipher.suites"] == p["ssl.cipher.suites"]
    offered = model.build(view_of(lab_like(), {"kafka_cluster_name": "orders",
                                               "kafka_zookeeper_tls_migration": "offered"}))
    p = props(kafka_broker_context(offered.to_dict(), "k1", {}))
    assert not [key for key in p if key.startswith("zookeeper.ssl.")]
    assert p["zookeeper.connect"] == "zk1:2181,zk2:2181,zk3:2181/kafka/orders"
    refused = extra_properties_problems({"zookeeper.ssl.client.enable": "false"})
    assert any("zookeeper.ssl.client.enable" in problem for problem in refused), refused


def test_jvm_has_equal_heap_bounds_g1_and_no_jmx_port() -> None:
    context = kafka_broker_context(cluster(), "k1", {"kafka_broker_heap_mb": 256})
    options = context["java"]["options"]
    assert "-Xms256m" in options and "-Xmx256m" in options
    assert "-XX:MaxGCPauseMillis=20" in options
    assert "-XX:InitiatingHeapOccupancyPercent=35" in options
    assert not [o for o in options if "jmxremote" in o or "management.config" in o]
    assert "-Djava.security.auth.login.config=/etc/kafka/kafka-jaas.conf" in options
    assert context["nofile_limit"] >= 100000


def test_every_listener_speaks_tls_and_authorization_is_on() -> None:
    users = [{"name": "admin", "password": "x" * 12, "superuser": True},
             {"name": "app", "password": "y" * 12}]
    context = kafka_broker_context(cluster(), "k1", {"kafka_users": users,
                                                     "kafka_broker_users": users})
    p = props(context)
    assert p["listener.security.protocol.map"] == "BROKER:SSL,CLIENT:SASL_SSL"
    assert p["inter.broker.listener.name"] == "BROKER"
    assert p["listener.name.broker.ssl.client.auth"] == "required"
    assert p["listener.name.client.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert p["authorizer.class.name"] == "kafka.security.authorizer.AclAuthorizer"
    assert p["allow.everyone.if.no.acl.found"] == "false"
    assert p["super.users"] == "User:kafka-broker;User:admin"
    assert p["zookeeper.set.acl"] == "true"
    # The keystore password is only in the secrets file, read through the config provider.
    provider = "${file:/etc/kafka/tls/secrets.properties:keystore.password}"
    assert p["ssl.keystore.password"] == provider
    text = context["server_properties"] + context["admin_client_properties"]
    assert "x" * 12 not in text and "y" * 12 not in text
    admin = dict(line.split("=", 1) for line in context["admin_client_properties"].splitlines())
    assert admin["bootstrap.servers"] == "k1:9091,k2:9091,k3:9091"
    assert admin["security.protocol"] == "SSL"
    assert set(context["tls_names"]) == {"k1"}


def test_plaintext_listeners_and_security_overrides_are_refused() -> None:
    problems = settings_problems({
        "kafka_broker_extra_listeners": [
            {"name": "OPEN", "protocol": "PLAINTEXT", "port": 9095},
            {"name": "EXTERNAL", "protocol": "SASL_SSL", "port": 9092}],
        "kafka_broker_extra_properties": {"allow.everyone.if.no.acl.found": True,
                                          "ssl.truststore.location": "/tmp/x"},
    })
    text = "\n".join(problems)
    assert "protocol PLAINTEXT is refused" in text
    assert "allow.everyone.if.no.acl.found is refused" in text
    assert "ssl.truststore.location is set by the role" in text


def test_jmx_needs_a_password_and_then_speaks_tls() -> None:
    assert "kafka_broker_jmx_enabled needs kafka_broker_jmx_password" in "\n".join(
        settings_problems({"kafka_broker_jmx_enabled": True}))
    context = kafka_broker_context(cluster(), "k1", {"kafka_broker_jmx_enabled": True,
                                                     "kafka_broker_jmx_password": "secret-pw"})
    assert "-Dcom.sun.management.config.file=/etc/kafka/jmx.properties" in \
        context["java"]["options"]
    jmx = context["jmx"]["properties"]
    assert "com.sun.management.jmxremote.authenticate=true" in jmx
    assert "com.sun.management.jmxremote.ssl=true" in jmx and "secret-pw" not in str(context)


def test_typo_of_a_known_key_is_an_error() -> None:
    problems = extra_properties_problems({"log.retention.chek.interval.ms": 1000})
    assert problems and "did you mean log.retention.check.interval.ms" in problems[0]


def test_unknown_but_not_close_keys_pass() -> None:
    assert extra_properties_problems({"confluent.support.metrics.enable": False}) == []


@pytest.mark.parametrize("extra", [
    {"broker.id": 7}, {"broker.rack": "z"}, {"min.insync.replicas": 1},
    {"zookeeper.connect": "zk1:2181"}, {"log.dirs": "/tmp/kafka-logs"},
])
def test_values_contradicting_the_model_are_errors(extra: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="contradicts the cluster model"):
        kafka_broker_context(cluster(), "k1", {"kafka_broker_extra_properties": extra})


def test_repeating_the_model_value_is_accepted() -> None:
    context = kafka_broker_context(cluster(), "k1",
                                   {"kafka_broker_extra_properties": {"broker.id": 1}})
    assert props(context)["broker.id"] == "1"
    assert context["extra_properties"] == ""


def test_keys_set_by_role_variables_point_to_the_variable() -> None:
    problems = extra_properties_problems({"log.retention.ms": 1})
    assert problems == ["kafka_broker_extra_properties: log.retention.ms is set by the role: "
                        "use kafka_broker_log_retention_ms"]


def test_replica_fetch_below_message_max_is_an_error() -> None:
    with pytest.raises(ValueError, match="KB-12"):
        kafka_broker_context(cluster(), "k1", {
            "kafka_broker_extra_properties": {"replica.fetch.max.bytes": 1000}})


def test_threads_sized_from_cores_and_disks() -> None:
    assert thread_counts(16, 12, 0, 0) == (8, 32)
    assert thread_counts(2, 10, 0, 0) == (3, 10)
    assert thread_counts(2, 1, 5, 9) == (5, 9)


def test_a_host_that_is_not_a_broker_is_refused() -> None:
    with pytest.raises(ValueError, match="not a broker"):
        kafka_broker_context(cluster(), "zk1", {})


def test_listeners_sharing_a_port_are_refused_by_the_preflight_and_the_context() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k2"]["kafka_broker_extra_listeners"] = [
        {"name": "EXTERNAL", "protocol": "SASL_SSL", "port": 9092}]
    view = view_of(spec)
    found = [f for f in checks.check(view) if "share a port" in f.message]
    assert [(f.hosts, f.message) for f in found] == [
        (("k2",), "listeners share a port: 9092 (CLIENT, EXTERNAL)")]
    with pytest.raises(ValueError, match=r"listeners share a port: 9092 \(CLIENT, EXTERNAL\)"):
        kafka_broker_context(model.build(view).to_dict(), "k2", {})


def test_a_metrics_agent_on_a_listener_port_is_refused_before_any_host() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k3"]["kafka_broker_metrics_port"] = 9091
    found = [f for f in checks.check(view_of(spec)) if "share a port" in f.message]
    assert [(f.hosts, f.message) for f in found] == [
        (("k3",), "listeners share a port: 9091 (BROKER, metrics agent)")]
    assert "kafka_broker_metrics_port" in found[0].fix


def test_the_health_gate_names_every_broker_and_waits_less_than_the_restart_timeout() -> None:
    context = kafka_broker_context(cluster(), "k1", {})
    args = context["health_args"]
    assert args[:3] == ["health", "--ids", ",".join(str(i) for i in context["broker_ids"])]
    assert args[3:] == ["--wait", str(context["health_wait_s"])]
    # A roll tries the gate more than once within kafka_broker_restart_timeout_s.
    assert context["health_wait_s"] + context["health_poll_s"] < role_default(
        "kafka_broker_restart_timeout_s") / 2
    short = kafka_broker_context(cluster(), "k1", {"kafka_broker_restart_timeout_s": 10})
    assert short["health_args"][-2:] == ["--wait", "10"]


def kraft_cluster() -> dict[str, Any]:
    from tests.unit.test_checks import kraft

    return model.build(view_of(kraft("a", "b", "c"), {"kafka_cluster_name": "orders"})).to_dict()


def test_a_kraft_controller_serves_only_its_mutual_tls_listener_to_the_quorum() -> None:
    context = kafka_broker_context(kraft_cluster(), "c2", {"kafka_controller_heap_mb": 512})
    p = props(context)
    assert (p["process.roles"], p["node.id"]) == ("controller", "3002")
    assert p["controller.quorum.voters"] == "3001@c1:9094,3002@c2:9094,3003@c3:9094"
    assert (p["listeners"], p["controller.listener.names"]) == ("CONTROLLER://c2:9094",
                                                                "CONTROLLER")
    assert p["listener.security.protocol.map"] == "CONTROLLER:SSL"
    assert p["listener.name.controller.ssl.client.auth"] == "required"  # KR-06
    assert p["authorizer.class.name"] == \
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert p["super.users"] == "User:kafka-broker;User:kafka-controller"
    assert "OU=kafka-controller" in p["ssl.principal.mapping.rules"]
    assert p["log.dirs"] == "/var/lib/kafka/metadata"
    # Nothing of ZooKeeper, nor of a broker's topics.
    assert not [k for k in p if k.startswith("zookeeper.") or k == "broker.id"]
    assert "num.partitions" not in p and "advertised.listeners" not in p
    # The active controller's value becomes the cluster-wide default under eligible leader
    # replicas, overriding the brokers': the cluster's, not Kafka's default of 1.
    assert p["min.insync.replicas"] == "2"
    assert "-Xmx512m" in context["java"]["options"]
    assert not [o for o in context["java"]["options"] if "auth.login.config" in o]
    assert (context["principal"], context["kind"], context["metadata_mode"]) == (
        "kafka-controller", "controller", "kraft")
    assert context["health_args"][:3] == ["health", "--ids", "3001,3002,3003"]
    assert context["tls"]["keystore"] in context["restart_files"]
    assert context["ids_by_host"]["c1"] == 3001 and context["ids_by_host"]["k2"] == 2


def test_a_kraft_broker_registers_with_the_quorum_and_keeps_its_listeners() -> None:
    context = kafka_broker_context(kraft_cluster(), "k1", {})
    p = props(context)
    assert (p["process.roles"], p["node.id"]) == ("broker", "1")
    assert p["controller.quorum.voters"] == "3001@c1:9094,3002@c2:9094,3003@c3:9094"
    assert p["listeners"] == "BROKER://k1:9091,CLIENT://k1:9092"
    assert p["listener.security.protocol.map"] == "BROKER:SSL,CLIENT:SASL_SSL,CONTROLLER:SSL"
    assert p["inter.broker.listener.name"] == "BROKER"
    assert "listener.name.controller.ssl.client.auth" not in p  # it serves no such listener
    assert not [k for k in p if k.startswith("zookeeper.") or k == "broker.id"]
    assert context["cluster_id"] == kraft_cluster()["cluster_id"]
    assert context["health_args"][:3] == ["health", "--ids", "1,2,3"]
    assert context["jaas_file"] not in context["restart_files"]


def test_a_combined_node_is_one_broker_and_voter_rolled_on_both_gates() -> None:
    """KR-04: a host in both groups runs one node, process.roles=broker,controller."""
    from tests.unit.test_checks import combined

    built = model.build(view_of(combined("a", "c", "c"), {"kafka_controller_combined": True,
                                                           "kafka_cluster_name": "orders"}))
    context = kafka_broker_context(built.to_dict(), "k3", {"kafka_broker_heap_mb": 768,
                                                           "kafka_controller_heap_mb": 512})
    p = props(context)
    assert (p["process.roles"], p["node.id"]) == ("broker,controller", "3")
    assert p["controller.quorum.voters"] == "3@k3:9094,3001@c1:9094,3002@c2:9094"
    assert p["listeners"] == "BROKER://k3:9091,CLIENT://k3:9092,CONTROLLER://k3:9094"
    # Clients find the brokers' listeners only; the quorum finds the voters by itself.
    assert p["advertised.listeners"] == "BROKER://k3:9091,CLIENT://k3:9092"
    assert p["listener.security.protocol.map"] == "BROKER:SSL,CLIENT:SASL_SSL,CONTROLLER:SSL"
    assert p["listener.name.controller.ssl.client.auth"] == "required"  # KR-06
    assert p["super.users"] == "User:kafka-broker;User:kafka-controller"
    # A broker's data and settings, on the broker's heap; its metadata log in its first log dir.
    assert p["log.dirs"] == ",".join(context["log_dirs"]) and "metadata.log.dir" not in p
    assert "num.partitions" in p and "-Xmx768m" in context["java"]["options"]
    assert (context["principal"], context["kind"]) == ("kafka-broker", "broker and controller")
    # Its roll restarts a voter: the gate names the brokers and every voter.
    assert context["health_args"][:3] == ["health", "--ids", "1,2,3,3001,3002"]
    assert context["registration_argv"] == []  # KR-11 is a dedicated controller's
    assert context["tls"]["keystore"] in context["restart_files"]
    # The brokers next to it gate on the voters too; the dedicated controllers on the voters.
    assert kafka_broker_context(built.to_dict(), "k1", {})["health_args"][2] == "1,2,3,3001,3002"
    assert kafka_broker_context(built.to_dict(), "c1", {})["health_args"][2] == "3,3001,3002"


def test_zookeeper_mode_server_properties_carry_nothing_of_kraft() -> None:
    p = props(kafka_broker_context(cluster(), "k1", {}))
    assert not [k for k in p if k.startswith(("process.", "controller.", "node."))]
    assert p["authorizer.class.name"] == "kafka.security.authorizer.AclAuthorizer"


def test_a_kraft_extra_property_may_not_change_what_the_model_decides() -> None:
    with pytest.raises(ValueError, match=r"process\.roles=broker,controller contradicts"):
        kafka_broker_context(kraft_cluster(), "k1", {
            "kafka_broker_extra_properties": {"process.roles": "broker,controller"}})


def test_brokers_and_controllers_gate_on_one_metadata_lag_set_for_the_cluster() -> None:
    """kafka_controller_max_lag set with the controllers' group variables reaches the brokers'
    gate too: one value for the whole roll (KR-08)."""
    from tests.unit.test_checks import kraft

    spec = kraft("a", "b", "c")
    for host_vars in spec["kafka_controller"].values():
        host_vars["kafka_controller_max_lag"] = 250
    built = model.build(view_of(spec)).to_dict()
    for host in ("c1", "k1"):
        args = kafka_broker_context(built, host, {})["health_args"]
        assert args[args.index("--max-lag") + 1] == "250", host


def test_kafka_4_logs_with_log4j2_and_each_release_runs_from_its_own_directory() -> None:
    old = kafka_broker_context(kraft_cluster(), "k1", {"kafka_broker_version": "3.9.2"})
    new = kafka_broker_context(kraft_cluster(), "k1", {"kafka_broker_version": "4.1.2"})
    assert old["java"]["classpath"] == "/opt/kafkaform/kafka-3.9.2/libs/*"
    assert new["java"]["classpath"] == "/opt/kafkaform/kafka-4.1.2/libs/*"
    assert "-Dlog4j.configuration=file:/etc/kafka/log4j.properties" in old["java"]["options"]
    assert "-Dlog4j2.configurationFile=/etc/kafka/log4j2.yaml" in new["java"]["options"]
    assert new["log_config"]["template"] == "etc/kafka/log4j2.yaml.j2"
    assert new["docs_url"] == "https://kafka.apache.org/41/documentation.html"
    # A new logging file or release restarts the node onto it.
    assert "/etc/kafka/log4j2.yaml" in new["restart_files"]
    assert "/etc/kafka/log4j.properties" not in new["restart_files"]
    # Without a release named, the cluster's: a new KRaft cluster's is the newest Kafka 4, a
    # ZooKeeper-mode cluster's the newest 3.9 (the model's kafka_release).
    default = kafka_broker_context(kraft_cluster(), "k1", {"kafka_broker_version": ""})
    assert default["release"] == CATALOG.kafka_upgrade.version
    assert default["java"]["classpath"] == (f"/opt/kafkaform/kafka-{CATALOG.kafka_upgrade.version}"
                                            "/libs/*")
    assert kafka_broker_context(cluster(), "k1", {})["release"] == CATALOG.kafka.version


def test_only_a_controllers_start_waits_for_its_registration_with_the_quorum() -> None:
    """KR-11: the controller's unit ends its start once its registration is in the metadata log
    and fails one Kafka dropped; a broker's unit has no such step."""
    controller = kafka_broker_context(kraft_cluster(), "c2", {})
    unit_template = template("kafka_broker", "etc/systemd/system/kafka.service.j2")
    unit = render.render(unit_template, {"kafka_broker": controller})
    post = [line for line in unit.splitlines() if line.startswith("ExecStartPost=")]
    assert post == ["ExecStartPost=+" + " ".join(controller["registration_argv"])]
    assert controller["registration_argv"][:4] == [
        controller["admin_script"], "--conf", controller["conf_dir"], "registration"]
    broker = kafka_broker_context(kraft_cluster(), "k1", {})
    assert broker["registration_argv"] == []
    assert "ExecStartPost" not in render.render(unit_template, {"kafka_broker": broker})


def test_retention_by_size_is_written_only_once_set_and_only_through_its_input() -> None:
    assert "log.retention.bytes" not in props(kafka_broker_context(cluster(), "k1", {}))
    sized = kafka_broker_context(cluster(), "k1", {"kafka_broker_log_retention_bytes": 10 ** 11})
    assert props(sized)["log.retention.bytes"] == "100000000000"
    with pytest.raises(ValueError, match="use kafka_broker_log_retention_bytes"):
        kafka_broker_context(cluster(), "k1", {
            "kafka_broker_extra_properties": {"log.retention.bytes": 10 ** 11}})
