"""Placement properties: no zone holds a quorum majority, brokers round-robin, ids unique; the
security groups the placed hosts get."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from kafkaform import checks, model
from kafkaform.cloud import inventory, provision
from kafkaform.cloud.placement import place
from kafkaform.cloud.spec import Group, Spec, Zone


def make_spec(zones: int, members: int, brokers: int, workers: int) -> Spec:
    groups = [Group(model.ZOOKEEPER, members, "m5.large"),
              Group(model.KAFKA_BROKER, brokers, "m5.xlarge"),
              Group(model.SPARK_MASTER, 1, "m5.large"),
              Group(model.SPARK_WORKER, workers, "m5.large")]
    return Spec(name="prop", region="eu-west-1",
                zones=tuple(Zone(f"eu-west-1{chr(97 + i)}", f"subnet-{i}") for i in range(zones)),
                groups=tuple(groups), image="ami-1", key_pair="k", admin_cidrs=("10.0.0.0/24",),
                client_cidrs=("10.0.0.0/16",))


@given(zones=st.integers(3, 7), members=st.sampled_from([3, 5, 7]),
       brokers=st.integers(3, 40), workers=st.integers(0, 5))
def test_placement_rules_hold(zones: int, members: int, brokers: int, workers: int) -> None:
    spec = make_spec(zones, members, brokers, workers)
    hosts = place(spec)
    zone_names = [z.name for z in spec.zones]
    per_zone = Counter(h.zone for h in hosts if h.group == model.ZOOKEEPER)
    assert max(per_zone.values()) < members // 2 + 1
    broker_zones = [h.zone for h in hosts if h.group == model.KAFKA_BROKER]
    assert broker_zones == [zone_names[i % zones] for i in range(brokers)]
    counts = Counter(broker_zones)
    assert max(counts.values()) - min(counts.values()) <= 1
    zk_ids = [h.zookeeper_id for h in hosts if h.group == model.ZOOKEEPER]
    assert sorted(zk_ids) == list(range(1, members + 1))  # type: ignore[type-var]
    broker_ids = [h.kafka_broker_id for h in hosts if h.group == model.KAFKA_BROKER]
    assert sorted(broker_ids) == list(range(1, brokers + 1))  # type: ignore[type-var]
    assert len({h.name for h in hosts}) == len(hosts)
    # Every host's rack is its zone, and the planned inventory passes the preflight.
    view = inventory.view(spec, hosts, addresses={})
    assert all(view.var(h.name, "rack") == h.zone for h in hosts)
    assert checks.errors(checks.check(view)) == []


def test_os_device_names_follow_the_hypervisor() -> None:
    # Xen families see /dev/xvdX; Nitro families get the stable by-id link of the EBS volume.
    assert inventory.os_device("t2.large", "/dev/sdf", "vol-0abc") == "/dev/xvdf"
    assert inventory.os_device("m5.large", "/dev/sdg", "vol-0abc") == (
        "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0abc")
    assert inventory.os_device("m5.large", "/dev/sdg", None) is None
    assert [inventory.attach_device(i) for i in range(3)] == ["/dev/sdf", "/dev/sdg", "/dev/sdh"]


def kraft_spec(brokers: int, zones: int = 3, monitoring: int = 1) -> Spec:
    groups = [Group(model.KAFKA_CONTROLLER, 3, "m5.large"),
              Group(model.KAFKA_BROKER, brokers, "m5.xlarge"),
              Group(model.SPARK_MASTER, 1, "m5.large"), Group(model.SPARK_WORKER, 1, "m5.large"),
              Group(model.MONITORING, monitoring, "m5.large")]
    return replace(make_spec(zones, 3, brokers, 1), groups=tuple(groups))


@given(before=st.integers(3, 20), added=st.integers(1, 10))
def test_a_larger_count_adds_hosts_zone_by_zone_and_moves_none(before: int, added: int) -> None:
    old, new = place(kraft_spec(before)), place(kraft_spec(before + added))
    assert set(old) <= set(new)  # every host keeps its name, zone and ids
    zones = Counter(h.zone for h in new if h.group == model.KAFKA_BROKER)
    assert max(zones.values()) - min(zones.values()) <= 1


def test_kraft_controllers_and_monitoring_are_placed_with_ids_and_pass_the_preflight() -> None:
    spec = kraft_spec(6)
    hosts = place(spec)
    controllers = [(h.name, h.zone, h.kafka_node_id) for h in hosts
                   if h.group == model.KAFKA_CONTROLLER]
    assert controllers == [("ctl1", "eu-west-1a", 3001), ("ctl2", "eu-west-1b", 3002),
                           ("ctl3", "eu-west-1c", 3003)]
    assert [h.name for h in hosts if h.group == model.MONITORING] == ["monitor1"]
    view = inventory.view(spec, hosts, addresses={})
    assert view.members(model.MONITORING) == ["monitor1"]
    assert model.build(view).metadata_mode == "kraft"
    assert checks.errors(checks.check(view)) == []
    tags = inventory.instance_tags(spec, hosts[0], {})
    assert tags["kafkaform:kafka_node_id"] == "3001"


def rules(spec: Spec, role: str) -> set[tuple[str, int, int, str]]:
    return provision.desired_rules(spec, role)


def test_security_groups_open_each_listener_to_what_connects_to_it() -> None:
    kraft = kraft_spec(3)
    brokers = rules(kraft, model.KAFKA_BROKER)
    # Replication and the admin tools run on the broker listener: between brokers only.
    assert {r[3] for r in brokers if r[1] == 9091} == {"sg:kafka_broker"}
    assert {r[3] for r in brokers if r[1] == 9092} == {"cidr:10.0.0.0/16", "sg:kafka_broker",
                                                       "sg:spark"}
    assert {r[3] for r in rules(kraft, model.KAFKA_CONTROLLER) if r[1] == 9094} == {
        "sg:kafka_broker", "sg:kafka_controller"}
    # Monitoring: its UIs from the admins, and every port it scrapes from it alone.
    assert {(r[1], r[3]) for r in rules(kraft, provision.SPARK) if r[3] == "sg:monitoring"} == {
        (9100, "sg:monitoring"), (8480, "sg:monitoring"), (8481, "sg:monitoring")}
    assert (7071, "sg:monitoring") in {(r[1], r[3]) for r in brokers}
    assert {r[1] for r in rules(kraft, model.MONITORING) if r[3] == "cidr:10.0.0.0/24"} == {
        22, 9090, 9093}
    # ZooKeeper mode, no monitoring: nothing scrapes, and no controller reaches the ensemble.
    zookeeper = make_spec(3, 3, 3, 1)
    assert not any(r[3] == "sg:monitoring" for role in provision.security_roles(zookeeper)
                   for r in rules(zookeeper, role))
    assert {r[3] for r in rules(zookeeper, model.ZOOKEEPER) if r[1] == 2182} == {
        "cidr:10.0.0.0/24", "sg:kafka_broker"}
    # A migration (ensemble and controllers): the controllers reach both.
    both = replace(kraft, groups=(Group(model.ZOOKEEPER, 3, "m5.large"), *kraft.groups))
    assert "sg:kafka_controller" in {r[3] for r in rules(both, model.ZOOKEEPER) if r[1] == 2182}
    assert "sg:kafka_controller" in {r[3] for r in rules(both, model.KAFKA_BROKER)
                                     if r[1] == 9091}
    # The spec's settings are the ports the roles bind.
    moved = replace(kraft, settings={"kafka_broker_internal_port": 19091})
    assert {r[1] for r in rules(moved, model.KAFKA_BROKER) if r[3] == "sg:kafka_broker"} == {
        19091, 9092}


def test_new_brokers_are_named_only_beside_brokers_that_were_there() -> None:
    grown = kraft_spec(5)
    created = [provision.Change("create", "instance", name) for name in ("kafka4", "kafka5")]
    assert provision.new_brokers(grown, created) == ["kafka4", "kafka5"]
    fresh = [provision.Change("create", "instance", h.name) for h in place(grown)]
    assert provision.new_brokers(grown, fresh) == []
