"""Placement properties: no zone holds a ZooKeeper majority, brokers round-robin, ids unique."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kafkaform import checks, model
from kafkaform.cloud import inventory
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
