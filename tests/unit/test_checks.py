"""The preflight rules: bad inventories, each rejected with its message; good ones accepted."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaform import checks, model
from kafkaform.checks import Finding
from kafkaform.model import InventoryView

Spec = dict[str, dict[str, dict[str, Any]]]


#: The pipeline's topic, declared as inventory/lab declares it.
TOPICS = [{"name": "kf.events", "partitions": 6, "replication_factor": 3}]


def lab_like() -> Spec:
    """Groups → hosts → vars, shaped like inventory/lab."""
    return {
        "zookeeper": {
            "zk1": {"zookeeper_id": 1, "rack": "a"},
            "zk2": {"zookeeper_id": 2, "rack": "b"},
            "zk3": {"zookeeper_id": 3, "rack": "c"},
        },
        "kafka_broker": {
            "k1": {"kafka_broker_id": 1, "rack": "a", "kafka_topics": TOPICS},
            "k2": {"kafka_broker_id": 2, "rack": "a", "kafka_topics": TOPICS},
            "k3": {"kafka_broker_id": 3, "rack": "b", "kafka_topics": TOPICS},
        },
        "spark_master": {"sm": {}},
        "spark_worker": {"sw1": {}},
    }


def view_of(spec: Spec, cluster: dict[str, Any] | None = None) -> InventoryView:
    groups = {group: list(hosts) for group, hosts in spec.items()}
    hostvars: dict[str, dict[str, Any]] = {}
    for hosts in spec.values():
        for host, host_vars in hosts.items():
            hostvars.setdefault(host, {}).update(cluster or {}, **host_vars)
    return InventoryView(groups=groups, hostvars=hostvars)


def errors_of(spec: Spec, cluster: dict[str, Any] | None = None) -> list[Finding]:
    return checks.errors(checks.check(view_of(spec, cluster)))


def test_lab_like_inventory_is_valid() -> None:
    assert errors_of(lab_like()) == []


def test_five_members_and_no_racks_at_all_is_valid() -> None:
    spec = lab_like()
    spec["zookeeper"] = {f"zk{i}": {"zookeeper_id": i} for i in range(1, 6)}
    for host_vars in spec["kafka_broker"].values():
        del host_vars["rack"]
    assert errors_of(spec) == []


def test_single_member_passes_only_with_the_development_switch() -> None:
    spec = lab_like()
    spec["zookeeper"] = {"zk1": {"zookeeper_id": 1, "rack": "a"}}
    assert [f.rule for f in errors_of(spec)] == ["ZK-06"]
    assert errors_of(spec, {"kafkaform_allow_single_zookeeper": True}) == []


def test_an_even_ensemble_is_a_step_of_a_membership_change_and_only_warned() -> None:
    """4 members: one added to 3 (or removed from 5) in this run, the next makes it odd. ZK-16"""
    spec = mutate(lambda s: s["zookeeper"].update(zk4={"zookeeper_id": 4, "rack": "d"}))
    assert errors_of(spec) == []
    warned = [f for f in checks.check(view_of(spec, None)) if f.rule == "ZK-06"]
    assert [f.severity for f in warned] == ["warning"]
    assert "4 members" in warned[0].message and "one more member in the next run" in warned[0].fix


def test_two_members_pass_only_with_the_development_switch() -> None:
    spec = mutate(lambda s: s["zookeeper"].pop("zk3"))
    assert [f.rule for f in errors_of(spec)] == ["ZK-06"]
    assert errors_of(spec, {"kafkaform_allow_single_zookeeper": True}) == []


def test_nine_members_pass_only_with_the_large_ensemble_switch() -> None:
    spec = lab_like()
    spec["zookeeper"] = {f"zk{i}": {"zookeeper_id": i, "rack": "abc"[i % 3]} for i in range(1, 10)}
    assert [f.rule for f in errors_of(spec)] == ["ZK-06"]
    assert errors_of(spec, {"kafkaform_allow_large_ensemble": "yes"}) == []


def mutate(change: Callable[[Spec], None]) -> Spec:
    spec = copy.deepcopy(lab_like())
    change(spec)
    return spec


#: Every broker: a declaration shared by the cluster names them all.
BROKERS = {"k1", "k2", "k3"}


def with_topic(**fields: Any) -> Spec:
    """The lab-like inventory with one more topic, ``fields`` over a valid one, on every broker."""
    topic = {"name": "kf.more", "partitions": 3, "replication_factor": 3, **fields}
    return mutate(lambda s: [s["kafka_broker"][h].update(kafka_topics=[*TOPICS, topic])
                             for h in s["kafka_broker"]])


# (case, inventory, cluster settings, rule, words in the message, hosts named)
BAD: list[tuple[str, Spec, dict[str, Any], str, str, set[str]]] = [
    ("two members", mutate(lambda s: s["zookeeper"].pop("zk3")),
     {}, "ZK-06", "2 members: fewer than 3", {"zk1", "zk2"}),
    ("brokers without ensemble", mutate(lambda s: s["zookeeper"].clear()),
     {}, "ZK-06", "the kafka_controller group are empty", set()),
    ("missing zookeeper_id", mutate(lambda s: s["zookeeper"]["zk2"].pop("zookeeper_id")),
     {}, "ZK-03", "zookeeper_id is not set", {"zk2"}),
    ("zookeeper_id 0", mutate(lambda s: s["zookeeper"]["zk2"].update(zookeeper_id=0)),
     {}, "ZK-03", "not an integer from 1 to 255", {"zk2"}),
    ("zookeeper_id 256", mutate(lambda s: s["zookeeper"]["zk2"].update(zookeeper_id=256)),
     {}, "ZK-03", "not an integer from 1 to 255", {"zk2"}),
    ("zookeeper_id text", mutate(lambda s: s["zookeeper"]["zk2"].update(zookeeper_id="two")),
     {}, "ZK-03", "'two'", {"zk2"}),
    ("duplicate zookeeper_id", mutate(lambda s: s["zookeeper"]["zk3"].update(zookeeper_id=1)),
     {}, "ZK-03", "zookeeper_id 1 is used by 2 hosts", {"zk1", "zk3"}),
    ("negative broker id", mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_broker_id=-1)),
     {}, "KB-02", "not an integer from 0 to 1000", {"k1"}),
    ("boolean broker id", mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_broker_id=True)),
     {}, "KB-02", "True", {"k1"}),
    ("duplicate broker id", mutate(lambda s: s["kafka_broker"]["k3"].update(kafka_broker_id=2)),
     {}, "KB-02", "kafka_broker_id 2 is used by 2 hosts", {"k2", "k3"}),
    ("missing broker id", mutate(lambda s: s["kafka_broker"]["k3"].pop("kafka_broker_id")),
     {}, "KB-02", "kafka_broker_id is not set", {"k3"}),
    ("rack on some", mutate(lambda s: s["kafka_broker"]["k3"].pop("rack")),
     {}, "RA-01", "not on these", {"k3"}),
    ("rack majority", mutate(lambda s: s["zookeeper"]["zk3"].update(rack="a")),
     {}, "ZK-07", "rack a holds 2 of 3", {"zk1", "zk3"}),
    ("brokers in one rack", mutate(lambda s: s["kafka_broker"]["k3"].update(rack="a")),
     {}, "RA-02", "every broker is in rack a", {"k1", "k2", "k3"}),
    ("rf above brokers", lab_like(), {"kafka_default_replication_factor": 4, },
     "TR-01", "4 is above the broker count 3", {"k1", "k2", "k3"}),
    ("min isr equal to rf", lab_like(), {"kafka_min_insync_replicas": 3},
     "TR-02", "below the replication factor", set()),
    ("min isr zero", lab_like(), {"kafka_min_insync_replicas": 0},
     "TR-02", "at least 1", set()),
    ("worker without master", mutate(lambda s: s["spark_master"].clear()),
     {}, "SP-01", "no master", {"sw1"}),
    ("two spark masters", mutate(lambda s: s["spark_master"].update(sm2={})),
     {}, "SP-06", "has 2 hosts", {"sm", "sm2"}),
    ("shared dir differs",
     mutate(lambda s: s["spark_worker"]["sw1"].update(spark_node_shared_dir="/mnt/other")),
     {}, "SP-07", "differs between Spark nodes", {"sm", "sw1"}),
    ("shared dir in tmp", lab_like(), {"spark_node_shared_dir": "/tmp"},
     "SP-07", "'/tmp'", {"sm", "sw1"}),
    ("executor larger than every worker",
     mutate(lambda s: s["spark_worker"]["sw1"].update(spark_node_worker_cores=1,
                                                       spark_node_worker_memory_mb=4096)),
     {}, "SP-11", "no worker offers that (sw1: 1 core, 4096 MB)", {"sm", "sw1"}),
    ("cluster name differs",
     mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_cluster_name="other")),
     {"kafka_cluster_name": "lab"}, "KF-01", "kafka_cluster_name differs", set()),
    ("tcp max above core max",
     mutate(lambda s: s["kafka_broker"]["k1"].update(
         os_tuning_sysctl_overrides={"net.ipv4.tcp_rmem": "4096 65536 4194304"})),
     {}, "OS-01", "net.ipv4.tcp_rmem maximum 4194304 is above net.core.rmem_max", {"k1"}),
    ("background ratio not below dirty ratio",
     mutate(lambda s: s["zookeeper"]["zk1"].update(
         os_tuning_sysctl_overrides={"vm.dirty_background_ratio": 70})),
     {}, "OS-02", "vm.dirty_background_ratio 70 is not below", {"zk1"}),
    ("swappiness zero",
     mutate(lambda s: s["kafka_broker"]["k2"].update(
         os_tuning_sysctl_overrides={"vm.swappiness": 0})),
     {}, "OS-03", "vm.swappiness 0", {"k2"}),
    # What the brokers ask of ZooKeeper fits what the ensemble grants.
    ("broker session timeout above 20 ticks",
     mutate(lambda s: s["kafka_broker"]["k2"].update(
         kafka_broker_zookeeper_session_timeout_ms=60000)),
     {}, "KB-18", "kafka_broker_zookeeper_session_timeout_ms 60000 is outside the 4000 to 40000 "
     "ms the ensemble grants a session (2 and 20 times zookeeper_tick_time_ms 2000): ZooKeeper "
     "would hold the brokers to 40000 ms", {"k2"}),
    ("ensemble tick too short for the brokers' timeout",
     mutate(lambda s: [s["zookeeper"][h].update(zookeeper_tick_time_ms=500)
                       for h in s["zookeeper"]]),
     {}, "KB-18", "kafka_broker_zookeeper_session_timeout_ms 18000 is outside the 1000 to 10000",
     {"k1", "k2", "k3"}),
    ("kernel setting not a number",
     mutate(lambda s: s["kafka_broker"]["k2"].update(
         os_tuning_sysctl_overrides={"vm.max_map_count": "lots"})),
     {}, "OS-04", "vm.max_map_count is 'lots', not a number", {"k2"}),
    ("TCP buffers not all numbers",
     mutate(lambda s: s["kafka_broker"]["k1"].update(
         os_tuning_sysctl_overrides={"net.ipv4.tcp_wmem": "4096 64k 2048000"})),
     {}, "OS-04", "net.ipv4.tcp_wmem is '4096 64k 2048000', not a number", {"k1"}),
    ("kernel setting with a name sysctl does not know",
     mutate(lambda s: s["zookeeper"]["zk2"].update(
         os_tuning_sysctl_overrides={"max map count": 1})),
     {}, "OS-04", "'max map count' is not a kernel setting's name", {"zk2"}),
    ("kernel setting without a value",
     mutate(lambda s: s["zookeeper"]["zk1"].update(
         os_tuning_sysctl_overrides={"net.core.somaxconn": ""})),
     {}, "OS-04", "net.core.somaxconn has no value", {"zk1"}),
    # Inputs in the syntax of what reads them (kafkaform.formats).
    ("Prometheus retention not a duration",
     mutate(lambda s: s["kafka_broker"]["k1"].update(monitoring_retention_time="15 days")),
     {}, "KF-02", "monitoring_retention_time is '15 days', not a Prometheus duration", {"k1"}),
    ("Prometheus retention size in a unit it does not take",
     mutate(lambda s: s["zookeeper"]["zk1"].update(monitoring_retention_size="10G")),
     {}, "KF-02", "monitoring_retention_size is '10G', not a Prometheus size", {"zk1"}),
    ("scrape interval of zero",
     mutate(lambda s: s["zookeeper"]["zk2"].update(monitoring_scrape_interval="0s")),
     {}, "KF-02", "monitoring_scrape_interval is '0s', not a Prometheus duration", {"zk2"}),
    ("relative install directory",
     mutate(lambda s: s["kafka_broker"]["k2"].update(kafka_broker_install_dir="opt/kafka")),
     {}, "KF-02", "kafka_broker_install_dir is 'opt/kafka', not an absolute path", {"k2"}),
    ("service user with a capital letter",
     mutate(lambda s: s["zookeeper"]["zk3"].update(zookeeper_user="ZooKeeper")),
     {}, "KF-02", "zookeeper_user is 'ZooKeeper', not a system user or group name", {"zk3"}),
    ("JMX address that is a name",
     mutate(lambda s: s["kafka_broker"]["k3"].update(kafka_broker_jmx_address="localhost")),
     {}, "KF-02", "kafka_broker_jmx_address is 'localhost', not an IP address", {"k3"}),
    ("device declared twice",
     mutate(lambda s: s["kafka_broker"]["k1"].update(os_tuning_data_disks=[
         {"device": "/dev/vdb", "mount": "/data0", "purpose": "kafka_log_dir"},
         {"device": "/dev/vdb", "mount": "/data1", "purpose": "kafka_log_dir"}])),
     {}, "DF-03", "device /dev/vdb is declared 2 times", {"k1"}),
    ("mount point reused",
     mutate(lambda s: s["kafka_broker"]["k1"].update(os_tuning_data_disks=[
         {"device": "/dev/vdb", "mount": "/data0", "purpose": "kafka_log_dir"},
         {"device": "/dev/vdc", "mount": "/data0/", "purpose": "kafka_log_dir"}])),
     {}, "DF-03", "mount point /data0 is used by 2 entries", {"k1"}),
    ("disk without device",
     mutate(lambda s: s["kafka_broker"]["k1"].update(os_tuning_data_disks=[
         {"mount": "/data0", "purpose": "kafka_log_dir"}])),
     {}, "DF-03", "has no device", {"k1"}),
    ("unknown disk purpose",
     mutate(lambda s: s["kafka_broker"]["k1"].update(os_tuning_data_disks=[
         {"device": "/dev/vdb", "mount": "/data0", "purpose": "logs"}])),
     {}, "DF-03", "purpose is 'logs'", {"k1"}),
    # Each role's own input checks run in the preflight, before any host is touched.
    ("ZooKeeper heap too small on two members",
     mutate(lambda s: [s["zookeeper"][h].update(zookeeper_heap_mb=32) for h in ("zk1", "zk2")]),
     {}, "ZK-10", "zookeeper_heap_mb below 64 MB", {"zk1", "zk2"}),
    ("unknown ZooKeeper purge method",
     mutate(lambda s: s["zookeeper"]["zk3"].update(zookeeper_purge_method="cron")),
     {}, "KF-02", "zookeeper_purge_method is 'cron'", {"zk3"}),
    ("broker application fsync",
     mutate(lambda s: s["kafka_broker"]["k2"].update(
         kafka_broker_extra_properties={"log.flush.interval.ms": 1000})),
     {}, "KB-13", "log.flush.interval.ms", {"k2"}),
    ("illegal topic name",
     mutate(lambda s: [s["kafka_broker"][h].update(kafka_topics=[*TOPICS, {
         "name": "__mine", "partitions": 3, "replication_factor": 3}]) for h in s["kafka_broker"]]),
     {}, "TR-06", "topic __mine", {"k1", "k2", "k3"}),
    ("pipeline trigger interval unreadable",
     mutate(lambda s: s["spark_master"]["sm"].update(spark_pipeline_trigger_interval="2s")),
     {}, "KF-02", "spark_pipeline_trigger_interval '2s'", {"sm"}),
    ("misspelt role variable",
     mutate(lambda s: s["kafka_broker"]["k2"].update(kafka_broker_heap_md=2048)),
     {}, "KF-03", "kafka_broker_heap_md is not a variable kafkaform reads", {"k2"}),
    ("unknown variable with a kafkaform prefix",
     mutate(lambda s: s["spark_worker"]["sw1"].update(spark_node_gpu_count=2)),
     {}, "KF-03", "spark_node_gpu_count is not a variable kafkaform reads", {"sw1"}),
    ("misspelt cluster variable",
     mutate(lambda s: [s["zookeeper"][h].update(kafka_min_insync_replica=2)
                       for h in s["zookeeper"]]),
     {}, "KF-03", "kafka_min_insync_replica is not", {"zk1", "zk2", "zk3"}),
    ("Spark daemon heap too small on the worker",
     mutate(lambda s: s["spark_worker"]["sw1"].update(spark_node_daemon_heap_mb=64)),
     {}, "KF-02", "spark_node_daemon_heap_mb below 128 MB", {"sw1"}),
    # Topics: every declaration checked before any broker is touched.
    ("topic with 0 partitions", with_topic(partitions=0),
     {}, "KF-02", "topic kf.more: partitions must be a positive integer", BROKERS),
    ("topic with text partitions", with_topic(partitions="abc"),
     {}, "KF-02", "topic kf.more: partitions must be a positive integer", BROKERS),
    ("topic name over 249 characters", with_topic(name="t" * 250),
     {}, "TR-06", "250 characters, Kafka takes at most 249", BROKERS),
    ("topic declared twice", with_topic(name="kf.events"),
     {}, "KF-02", "topic kf.events is declared twice", BROKERS),
    ("topic rf above brokers", with_topic(replication_factor=4),
     {}, "TR-01", "topic kf.more has replication_factor 4, above the 3 brokers", BROKERS),
    ("topic min isr not below its rf", with_topic(configs={"min.insync.replicas": 3}),
     {}, "TR-02", "topic kf.more has min.insync.replicas 3 with replication_factor 3", BROKERS),
    ("topic rf 1 under the cluster's min isr", with_topic(replication_factor=1),
     {}, "TR-02", "no acks=all write can ever succeed", BROKERS),
    ("topic config unknown to Kafka", with_topic(configs={"retention.msec": 1000}),
     {}, "TR-07", "retention.msec is not a topic config of Kafka (did you mean retention.ms?)",
     BROKERS),
    ("topic config value Kafka refuses", with_topic(configs={"cleanup.policy": "erase"}),
     {}, "TR-07", "cleanup.policy='erase' is not one of delete, compact", BROKERS),
    ("topic config number out of range",
     with_topic(configs={"min.cleanable.dirty.ratio": 1.5}),
     {}, "TR-07", "min.cleanable.dirty.ratio='1.5' is out of range (from 0 to 1)", BROKERS),
    ("topic with unclean leader election",
     with_topic(configs={"unclean.leader.election.enable": True}),
     {}, "TR-03", "topic kf.more enables unclean leader election", BROKERS),
    ("broker id above reserved.broker.max.id",
     mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_broker_id=1001)),
     {}, "KB-02", "kafka_broker_id is 1001, not an integer from 0 to 1000", {"k1"}),
    # Types, as each role's meta/argument_specs.yml declares them.
    ("role input of the wrong type",
     mutate(lambda s: s["kafka_broker"]["k3"].update(kafka_broker_heap_mb="lots")),
     {}, "KF-02", "kafka_broker_heap_mb is 'lots': argument 'kafka_broker_heap_mb' is of type str "
     "and we were unable to convert to int", {"k3"}),
    ("boolean input that is not one",
     mutate(lambda s: s["zookeeper"]["zk1"].update(zookeeper_admin_server_enabled="maybe")),
     {}, "KF-02", "zookeeper_admin_server_enabled is 'maybe'", {"zk1"}),
    ("port of the wrong type",
     mutate(lambda s: s["zookeeper"]["zk2"].update(zookeeper_client_port="two-one-eight-one")),
     {}, "KF-02", "zookeeper_client_port is 'two-one-eight-one'", {"zk2"}),
    ("cluster switch that is not a boolean",
     lab_like(), {"kafkaform_allow_large_ensemble": "sometimes"},
     "KF-02", "kafkaform_allow_large_ensemble is 'sometimes', not bool",
     {"zk1", "zk2", "zk3", "k1", "k2", "k3", "sm", "sw1"}),
    ("secret with a line break is not shown",
     mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_broker_jmx_password="s3cret\n")),
     {}, "KF-02", "kafka_broker_jmx_password holds a line break ('\\n') in (hidden)", {"k1"}),
    # Line breaks of any kind, in any rendered value.
    ("carriage return in a rack",
     mutate(lambda s: s["kafka_broker"]["k3"].update(rack="b\r")),
     {}, "KF-02", "rack holds a line break ('\\r')", {"k3"}),
    ("line separator in an extra property",
     mutate(lambda s: s["kafka_broker"]["k2"].update(
         kafka_broker_extra_properties={"log.cleaner.threads": "2\u2028x=1"})),
     {}, "KF-02", "kafka_broker_extra_properties.log.cleaner.threads holds a line break",
     {"k2"}),
    # JVM options that would open a debugger or JMX.
    ("JMX bound to every address through extra JVM options",
     mutate(lambda s: s["kafka_broker"]["k1"].update(kafka_broker_jvm_extra_opts=[
         "-XX:+AlwaysPreTouch", "-Dcom.sun.management.jmxremote.host=0.0.0.0"])),
     {}, "JV-04", "-Dcom.sun.management.jmxremote.host=0.0.0.0, which opens JMX remote", {"k1"}),
    ("remote debugger on ZooKeeper",
     mutate(lambda s: s["zookeeper"]["zk1"].update(zookeeper_jvm_extra_opts=[
         "-agentlib:jdwp=transport=dt_socket,server=y,address=*:5005"])),
     {}, "JV-04", "a remote debugger (JDWP)", {"zk1"}),
    ("debugger in the Spark driver's options",
     mutate(lambda s: s["spark_master"]["sm"].update(spark_node_defaults_extra={
         "spark.driver.defaultJavaOptions": "-Xss4m -Xrunjdwp:transport=dt_socket"})),
     {}, "JV-04", "spark_node_defaults_extra[spark.driver.defaultJavaOptions] holds -Xrunjdwp",
     {"sm"}),
    # Ports: numbers, and one service per port on a host.
    ("port out of range", mutate(lambda s: s["zookeeper"]["zk3"].update(
        zookeeper_client_port=70000)),
     {}, "KF-04", "ZooKeeper's zookeeper_client_port is 70000, not a port", {"zk3"}),
    ("two services on one port",
     mutate(lambda s: s["spark_worker"].update(sm={"spark_node_worker_port": 7077})),
     {}, "KF-04", "port 7077 is bound by Spark master (spark_node_master_port), Spark worker "
     "(spark_node_worker_port)", {"sm"}),
]


@pytest.mark.parametrize(("inventory", "cluster", "rule", "words", "hosts"),
                         [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_inventory_is_rejected_with_its_message(
        inventory: Spec, cluster: dict[str, Any], rule: str, words: str, hosts: set[str]) -> None:
    found = errors_of(inventory, cluster)
    assert [f.rule for f in found] == [rule], [f.text() for f in found]
    finding = found[0]
    assert words in finding.message
    assert set(finding.hosts) == hosts
    assert finding.fix, "every finding says how to fix it"
    assert finding.text().startswith("ERROR ")


def test_every_violation_is_reported_at_once() -> None:
    spec = lab_like()
    spec["zookeeper"]["zk3"].update(rack="a", zookeeper_id=1)
    spec["kafka_broker"]["k3"].pop("kafka_broker_id")
    found = errors_of(spec, {"kafka_min_insync_replicas": 5})
    assert Counter(f.rule for f in found) == Counter({"ZK-03": 1, "ZK-07": 1, "KB-02": 1,
                                                      "TR-02": 1})


def test_shared_zookeeper_and_broker_host_is_a_warning_only() -> None:
    spec = lab_like()
    spec["kafka_broker"]["zk1"] = {"kafka_broker_id": 9, "rack": "a"}
    found = checks.check(view_of(spec))
    assert [(f.rule, f.severity, f.hosts) for f in found] == [("ZK-11", "warning", ("zk1",))]


def test_replication_factor_one_asks_for_replication_not_an_impossible_min_isr() -> None:
    found = errors_of(lab_like(), {"kafka_default_replication_factor": 1,
                                   "kafka_min_insync_replicas": 1})
    assert [f.rule for f in found] == ["TR-02"]
    assert found[0].fix.startswith("replicate over at least 2 brokers")


def test_pipeline_with_one_broker_is_refused() -> None:
    spec = lab_like()
    for host in ("k2", "k3"):
        spec["kafka_broker"].pop(host)
    found = [f for f in errors_of(spec, {"kafka_default_replication_factor": 1})
             if f.rule == "CL-08"]
    assert len(found) == 1 and found[0].hosts == ("sm",)
    assert "at least two bootstrap brokers" in found[0].message


def test_pipeline_topic_not_declared_is_a_warning_only() -> None:
    spec = lab_like()
    spec["spark_master"]["sm"]["spark_pipeline_topic"] = "kf.clicks"
    found = checks.check(view_of(spec))
    assert [(f.rule, f.severity, f.hosts) for f in found] == [("SP-08", "warning", ("sm",))]
    assert "kf.clicks" in found[0].message


@given(st.lists(st.sampled_from("abcdefg"), min_size=3, max_size=7).filter(lambda r: len(r) % 2))
def test_rack_majority_rule_fires_exactly_when_one_rack_holds_a_majority(racks: list[str]) -> None:
    spec = lab_like()
    spec["zookeeper"] = {f"zk{i}": {"zookeeper_id": i, "rack": r}
                         for i, r in enumerate(racks, start=1)}
    flagged = [f for f in errors_of(spec) if f.rule == "ZK-07"]
    rack, most = Counter(racks).most_common(1)[0]
    if most > len(racks) // 2:
        assert len(flagged) == 1
        assert flagged[0].hosts == tuple(h for h, v in spec["zookeeper"].items()
                                         if v["rack"] == rack)
    else:
        assert flagged == []


@given(st.lists(st.integers(min_value=0, max_value=20), min_size=2, max_size=12))
def test_duplicate_broker_ids_name_exactly_the_sharing_hosts(ids: list[int]) -> None:
    spec = lab_like()
    spec["kafka_broker"] = {f"k{n}": {"kafka_broker_id": i, "rack": "ab"[n % 2]}
                            for n, i in enumerate(ids)}
    spec["zookeeper"]["zk1"]["rack"] = "d"  # keep the ensemble valid whatever the broker racks
    flagged = {f.hosts for f in errors_of(spec, {"kafka_default_replication_factor": 1,
                                                 "kafka_min_insync_replicas": 0})
               if f.rule == "KB-02"}
    duplicated = {i for i, count in Counter(ids).items() if count > 1}
    expected = {tuple(f"k{n}" for n, i in enumerate(ids) if i == dup) for dup in duplicated}
    assert flagged == expected


def test_model_groups_are_the_documented_ones() -> None:
    assert set(model.GROUPS) == {*lab_like(), "kafka_controller"}


def test_an_unknown_prefixed_variable_names_the_closest_input() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k2"]["kafka_broker_heap_md"] = 2048
    spec["kafka_broker"]["k3"]["zookeeper_flux_capacitor"] = True  # close to no input
    found = {f.message.split(" ")[0]: f for f in errors_of(spec, {})}
    assert set(found) == {"kafka_broker_heap_md", "zookeeper_flux_capacitor"}
    misspelt = found["kafka_broker_heap_md"]
    assert misspelt.hosts == ("k2",)
    assert "rename it to kafka_broker_heap_mb, the closest input" in misspelt.fix
    assert found["zookeeper_flux_capacitor"].fix.startswith("rename it, remove it")


def test_variables_other_tooling_reads_pass_when_listed() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k3"]["kafka_exporter_version"] = "1.7.0"  # another role's input
    assert [f.rule for f in errors_of(spec, {})] == ["KF-03"]
    assert errors_of(spec, {"kafkaform_other_variables": ["kafka_exporter_version"]}) == []


def test_a_value_of_the_wrong_type_is_one_finding_and_no_rule_fails_on_it() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k2"]["kafka_broker_port"] = "nine-o-nine-two"  # the model reads it
    found = errors_of(spec)
    assert [(f.rule, f.hosts) for f in found] == [("KF-02", ("k2",))]
    assert "kafka_broker_port is 'nine-o-nine-two'" in found[0].message


def test_broker_ids_above_the_default_reserve_pass_when_the_reserve_is_raised() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k1"]["kafka_broker_id"] = 1500
    assert [f.rule for f in errors_of(spec)] == ["KB-02"]
    raised = {"kafka_broker_extra_properties": {"reserved.broker.max.id": 2000}}
    assert errors_of(spec, raised) == []


def test_topic_configs_accept_every_valid_value_kafka_documents() -> None:
    valid = {"cleanup.policy": "compact,delete", "compression.type": "zstd",
             "min.cleanable.dirty.ratio": 0.5, "retention.ms": -1, "retention.bytes": -1,
             "segment.bytes": 1073741824, "message.timestamp.type": "LogAppendTime",
             "preallocate": False, "min.insync.replicas": 2,
             "leader.replication.throttled.replicas": "*",
             "follower.replication.throttled.replicas": "0:1,1:2"}
    assert errors_of(with_topic(configs=valid)) == []


TOPIC_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,30}(\.[a-z0-9-]{1,10}){0,3}", fullmatch=True)


@st.composite
def valid_inventories(draw: st.DrawFn) -> tuple[Spec, dict[str, Any]]:
    """Inventories every rule accepts: odd ensembles spread over racks, brokers over at least
    two racks, topics replicated within the brokers' count and above min.insync.replicas."""
    racks = draw(st.lists(st.sampled_from("abcdefgh"), min_size=3, max_size=5, unique=True))
    members = draw(st.sampled_from([3, 5, 7]))
    brokers = draw(st.integers(min_value=3, max_value=12))
    rf = draw(st.integers(min_value=2, max_value=min(brokers, 5)))
    names = draw(st.lists(TOPIC_NAME, min_size=1, max_size=5, unique=True))
    declared = [
        {"name": name, "partitions": draw(st.integers(min_value=1, max_value=64)),
         "replication_factor": draw(st.integers(min_value=rf, max_value=brokers)),
         "configs": draw(st.dictionaries(st.sampled_from(
             ["retention.ms", "segment.ms", "max.message.bytes"]),
             st.integers(min_value=1, max_value=2**31 - 1), max_size=3))}
        for name in names]
    ids = draw(st.lists(st.integers(min_value=0, max_value=1000), min_size=brokers,
                        max_size=brokers, unique=True))
    spec = lab_like()
    spec["zookeeper"] = {f"zk{i}": {"zookeeper_id": i, "rack": racks[i % len(racks)]}
                         for i in range(1, members + 1)}
    spec["kafka_broker"] = {f"k{n}": {"kafka_broker_id": ids[n], "rack": racks[n % len(racks)],
                                      "kafka_topics": declared} for n in range(brokers)}
    cluster = {"kafka_default_replication_factor": rf, "kafka_min_insync_replicas": rf - 1,
               "zookeeper_client_port": draw(st.integers(min_value=1024, max_value=2000))}
    return spec, cluster


@given(valid_inventories())
def test_a_valid_inventory_stays_valid(inventory: tuple[Spec, dict[str, Any]]) -> None:
    spec, cluster = inventory
    assert errors_of(spec, cluster) == []


# KRaft controllers: the quorum an inventory declares is checked like the ZooKeeper ensemble.
def with_controllers(*racks: str) -> Spec:
    """The lab-like inventory with one controller per rack given, c1 to cN, node ids 3001 up."""
    spec = lab_like()
    spec["kafka_controller"] = {f"c{i}": {"kafka_node_id": 3000 + i, "rack": rack}
                                for i, rack in enumerate(racks, start=1)}
    return spec


def rules_and_hosts(spec: Spec,
                    cluster: dict[str, Any] | None = None) -> list[tuple[str, set[str]]]:
    """Each error as (rule, hosts named), leaving out KR-05, which every controller group gets."""
    return [(f.rule, set(f.hosts)) for f in errors_of(spec, cluster) if f.rule != "KR-05"]


def kraft(*racks: str) -> Spec:
    """with_controllers without the ZooKeeper ensemble: a new cluster in KRaft mode."""
    spec = with_controllers(*racks)
    del spec["zookeeper"]
    return spec


def test_controllers_beside_an_ensemble_are_a_migration_site_yml_does_not_run() -> None:
    found = errors_of(with_controllers("a", "b", "c"))
    assert [(f.rule, f.hosts) for f in found] == [("KR-05", ("c1", "c2", "c3"))]
    assert "remove the zookeeper group" in found[0].fix
    assert "playbooks/kraft_migration.yml" in found[0].fix


def test_a_kraft_cluster_needs_no_ensemble_and_names_its_quorum() -> None:
    spec = kraft("a", "b", "c")
    assert errors_of(spec) == []
    cluster = model.build(view_of(spec))
    assert cluster.metadata_mode == "kraft"
    assert cluster.controller_quorum_voters == "3001@c1:9094,3002@c2:9094,3003@c3:9094"
    assert cluster.bootstrap_controllers == "c1:9094,c2:9094,c3:9094"
    assert model.build(view_of(lab_like())).metadata_mode == "zookeeper"


def test_the_cluster_id_is_stable_per_name_and_can_be_set() -> None:
    def cluster_id(**cluster: Any) -> str:
        return model.build(view_of(kraft("a", "b", "c"), cluster)).cluster_id

    derived = cluster_id(kafka_cluster_name="orders")
    # Kafka's Uuid.toString(): 16 bytes, base64url without padding.
    assert len(derived) == 22 and set(derived) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert cluster_id(kafka_cluster_name="orders") == derived
    assert cluster_id(kafka_cluster_name="payments") != derived
    assert cluster_id(kafka_cluster_id="MkU3OEVBNTcwNTJENDM2Qg") == "MkU3OEVBNTcwNTJENDM2Qg"


def combined(*racks: str) -> Spec:
    """A KRaft cluster whose broker k3 is also its third controller."""
    spec = kraft(*racks)
    spec["kafka_controller"].pop("c3")
    spec["kafka_controller"]["k3"] = {"kafka_node_id": 3,
                                      "rack": spec["kafka_broker"]["k3"]["rack"]}
    return spec


def test_combined_mode_is_built_on_a_kraft_cluster_with_its_switch() -> None:
    spec = combined("a", "c", "c")
    assert rules_and_hosts(spec) == [("KR-04", {"k3"})]
    assert errors_of(spec, {"kafka_controller_combined": True}) == []
    assert model.build(view_of(spec)).controller_quorum_voters == \
        "3@k3:9094,3001@c1:9094,3002@c2:9094"


def test_dedicated_controllers_beside_combined_ones_hold_a_majority() -> None:
    spec = kraft("a", "c")
    for n, host in enumerate(("k1", "k2", "k3"), start=1):
        spec["kafka_controller"][host] = {"kafka_node_id": n,
                                          "rack": spec["kafka_broker"][host]["rack"]}
    found = [f for f in errors_of(spec, {"kafka_controller_combined": True}) if f.rule == "KR-04"]
    assert [(f.hosts, f.fix) for f in found] == [
        (("c1", "c2"), "make every controller a broker too, or give the dedicated "
         "controllers a majority (3 of 5)")]


def test_combined_controllers_never_migrate_a_zookeeper_cluster() -> None:
    spec = with_controllers("a", "c", "c")
    spec["kafka_controller"].pop("c3")
    spec["kafka_controller"]["k3"] = {"kafka_node_id": 3,
                                      "rack": spec["kafka_broker"]["k3"]["rack"]}
    found = [f for f in errors_of(spec, {"kafka_controller_combined": True,
                                         "kafka_kraft_migration": "controllers"})
             if f.rule == "KR-05"]
    assert [f.hosts for f in found] == [("k3",)]
    assert "only to dedicated controllers" in found[0].message


def test_a_combined_node_keeps_its_controller_port_apart_from_its_listeners() -> None:
    spec = combined("a", "c", "c")
    spec["kafka_controller"]["k3"]["kafka_controller_port"] = 9092
    found = [f for f in errors_of(spec, {"kafka_controller_combined": True}) if f.rule == "KF-02"]
    assert [(f.hosts, f.message) for f in found] == [
        (("k3",), "listeners share a port: 9092 (CLIENT, CONTROLLER)")]


@pytest.mark.parametrize(("racks", "cluster", "expected"), [
    (("a", "b", "c", "a"), {}, [("KR-01", {"c1", "c2", "c3", "c4"})]),
    (("a",), {}, [("KR-01", {"c1"})]),
    (("a",), {"kafkaform_allow_single_controller": True}, []),
    (("a", "a", "b"), {}, [("KR-03", {"c1", "c2"})]),
    (("a", "b", "c", "d", "e"), {}, []),
])
def test_controller_quorum_size_and_racks(racks: tuple[str, ...], cluster: dict[str, Any],
                                          expected: list[tuple[str, set[str]]]) -> None:
    assert rules_and_hosts(with_controllers(*racks), cluster) == expected


def test_controller_node_ids_are_set_unique_and_apart_from_the_brokers() -> None:
    spec = with_controllers("a", "b", "c")
    spec["kafka_controller"]["c1"].pop("kafka_node_id")
    spec["kafka_controller"]["c2"]["kafka_node_id"] = 3003
    assert rules_and_hosts(spec) == [("KR-02", {"c1"}), ("KR-02", {"c2", "c3"})]

    spec = with_controllers("a", "b", "c")
    spec["kafka_controller"]["c3"]["kafka_node_id"] = 2
    found = [f for f in errors_of(spec) if f.rule == "KR-02"]
    assert [(f.hosts, f.message) for f in found] == [
        (("c3", "k2"), "kafka_node_id 2 is also the kafka_broker_id of k2")]


def test_combined_mode_needs_its_switch_and_keeps_the_brokers_own_id() -> None:
    spec = lab_like()
    spec["kafka_controller"] = {host: {"kafka_node_id": n, "rack": host_vars["rack"]}
                                for (host, host_vars), n in
                                zip(spec["kafka_broker"].items(), (1, 2, 3), strict=True)}
    # k1 and k2 share rack a: the broker placement allows it, the quorum does not.
    assert rules_and_hosts(spec) == [("KR-03", {"k1", "k2"}), ("KR-04", {"k1", "k2", "k3"})]
    # KR-04 alone names the combined hosts until the switch is set (then KR-05 does).
    assert not [f for f in errors_of(spec) if f.rule == "KR-05" and "combined" in f.message]
    assert rules_and_hosts(spec, {"kafka_controller_combined": True}) == [
        ("KR-03", {"k1", "k2"})]

    spec["kafka_controller"]["k3"]["kafka_node_id"] = 3003
    found = [f for f in errors_of(spec) if f.rule == "KR-02"]
    assert [(f.hosts, f.fix) for f in found] == [(("k3",), "set kafka_node_id to 3 on this host")]


def test_the_model_lists_controllers_by_node_id_and_marks_combined_hosts() -> None:
    spec = with_controllers("a", "b", "c")
    spec["kafka_controller"]["c1"]["kafka_node_id"] = 3009
    spec["kafka_controller"]["k3"] = {"kafka_node_id": 3, "rack": "b", "ansible_host": "10.0.0.3"}
    found = model.controllers(view_of(spec))
    assert [(c.host, c.node_id, c.combined) for c in found] == [
        ("k3", 3, True), ("c2", 3002, False), ("c3", 3003, False), ("c1", 3009, False)]
    assert found[0].address == "10.0.0.3"


def test_a_session_timeout_the_ensemble_grants_by_its_own_bounds_passes() -> None:
    """maxSessionTimeout in every member's extra settings widens what the ensemble grants."""
    spec = lab_like()
    for member in spec["zookeeper"].values():
        member["zookeeper_extra_settings"] = {"maxSessionTimeout": 60000}
    for broker in spec["kafka_broker"].values():
        broker["kafka_broker_zookeeper_session_timeout_ms"] = 60000
    assert [f.text() for f in checks.check(view_of(spec)) if f.rule == "KB-18"] == []
    spec["zookeeper"]["zk3"]["zookeeper_extra_settings"] = {}  # one member grants less
    found = [f for f in checks.check(view_of(spec)) if f.rule == "KB-18"]
    assert len(found) == 1 and "outside the 4000 to 40000 ms" in found[0].message
