"""The cluster model: what every engine reads, computed once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkaform import model
from tests.unit.test_checks import lab_like, view_of


def test_zookeeper_connect_lists_every_member_by_id_then_the_chroot() -> None:
    spec = lab_like()
    spec["zookeeper"]["zk1"]["zookeeper_id"] = 7  # order follows ids, not the inventory
    cluster = model.build(view_of(spec, {"kafka_cluster_name": "orders"}))
    assert cluster.zookeeper_connect == "zk2:2182,zk3:2182,zk1:2182/kafka/orders"
    assert cluster.to_dict()["zookeeper_servers"] == [
        "server.2=zk2:2888:3888", "server.3=zk3:2888:3888", "server.7=zk1:2888:3888"]


def test_explicit_chroot_and_addresses_win() -> None:
    spec = lab_like()
    spec["zookeeper"]["zk1"]["ansible_host"] = "10.0.0.1"
    spec["zookeeper"]["zk1"]["zookeeper_secure_client_port"] = 2282
    cluster = model.build(view_of(spec, {"kafka_zookeeper_chroot": "shared/kafka-a/"}))
    assert cluster.zookeeper_connect == "10.0.0.1:2282,zk2:2182,zk3:2182/shared/kafka-a"


def test_brokers_connect_to_the_secure_client_port_once_the_members_serve_it() -> None:
    """SE-18: the plain client port while TLS is only offered (or an open cluster's first step),
    the secure one from the step where clients connect over TLS."""
    spec = lab_like()
    spec["zookeeper"]["zk1"]["zookeeper_client_port"] = 2281

    def connect(**cluster_vars: str) -> tuple[str, str]:
        built = model.build(view_of(spec, {"kafka_cluster_name": "c", **cluster_vars}))
        return built.zookeeper_tls_step, built.zookeeper_connect

    plain = "zk1:2281,zk2:2181,zk3:2181/kafka/c"
    secure = "zk1:2182,zk2:2182,zk3:2182/kafka/c"
    assert connect() == ("required", secure)
    assert connect(kafka_zookeeper_tls_migration="offered") == ("offered", plain)
    assert connect(kafka_zookeeper_tls_migration="connecting") == ("connecting", secure)
    assert connect(kafka_security_migration="plaintext_replication") == ("offered", plain)
    assert connect(kafka_security_migration="tls_replication") == ("connecting", secure)
    # The TLS setting wins: an open cluster may take its TLS steps later than its others.
    assert connect(kafka_security_migration="tls_replication",
                   kafka_zookeeper_tls_migration="offered") == ("offered", plain)


def test_brokers_get_one_log_dir_per_data_mount_and_their_rack() -> None:
    spec = lab_like()
    spec["kafka_broker"]["k1"]["os_tuning_data_disks"] = [
        {"device": "/dev/vdb", "mount": "/var/lib/kafka/data0", "purpose": "kafka_log_dir"},
        {"device": "/dev/vdc", "mount": "/var/lib/kafka/data1/", "purpose": "kafka_log_dir"},
    ]
    cluster = model.build(view_of(spec))
    by_host = {b.host: b for b in cluster.brokers}
    assert by_host["k1"].log_dirs == ("/var/lib/kafka/data0/kafka-logs",
                                      "/var/lib/kafka/data1/kafka-logs")
    assert by_host["k2"].log_dirs == ("/var/lib/kafka/data/kafka-logs",)
    assert [(b.id, b.rack) for b in cluster.brokers] == [(1, "a"), (2, "a"), (3, "b")]
    assert cluster.racks == ("a", "b")
    assert cluster.bootstrap_servers == "k1:9092,k2:9092,k3:9092"


def test_spark_master_url_and_defaults() -> None:
    cluster = model.build(view_of(lab_like()))
    assert cluster.spark_master_url == "spark://sm:7077"
    assert (cluster.replication_factor, cluster.min_insync_replicas) == (3, 2)
    assert cluster.name == "kafka"


@given(st.permutations(["zk1", "zk2", "zk3", "zk4", "zk5"]))
def test_one_connect_string_whatever_the_inventory_order(order: list[str]) -> None:
    spec = lab_like()
    spec["zookeeper"] = {h: {"zookeeper_id": int(h[2:]), "rack": h} for h in order}
    assert model.build(view_of(spec)).zookeeper_connect == (
        "zk1:2182,zk2:2182,zk3:2182,zk4:2182,zk5:2182/kafka/kafka")


def test_spark_master_port_set_on_the_master_reaches_every_node() -> None:
    from kafkaform.contexts.spark_node import spark_node_context

    spec = lab_like()
    spec["spark_master"] = {"sm": {"spark_node_master_port": 7177}}
    spec["spark_worker"] = {"sw": {}}
    cluster = model.build(view_of(spec, {"spark_node_shared_dir": "/srv/shared"})).to_dict()
    assert cluster["spark_master_url"] == "spark://sm:7177"
    resources = {"cores": 2, "memory_mb": 4096}
    master = spark_node_context(cluster, "sm", {"spark_node_master_port": 7177}, resources)
    worker = spark_node_context(cluster, "sw", {}, resources)
    assert master["environment"]["SPARK_MASTER_PORT"] == "7177"
    assert "spark.master=spark://sm:7177" in worker["defaults"].splitlines()


def test_combined_hosts_are_the_controllers_that_are_brokers_whatever_their_ids() -> None:
    spec = {
        "kafka_controller": {"c1": {"kafka_node_id": 3001}, "k2": {}, "k1": {"kafka_node_id": 1}},
        "kafka_broker": {"k1": {"kafka_broker_id": 1}, "k2": {"kafka_broker_id": 2},
                         "k3": {"kafka_broker_id": 3}},
    }
    view = view_of(spec)
    # k2 has no kafka_node_id: the model's controllers leave it out, the combined hosts do not.
    assert model.combined_hosts(view) == ("k2", "k1")
    assert [(c.host, c.combined) for c in model.controllers(view)] == [("k1", True),
                                                                       ("c1", False)]
