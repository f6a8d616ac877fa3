"""The capacity plan's formulas (kafkaform.sizing): the literature's worked examples reproduced,
each bound on the broker count binding in its own cluster, the inputs refused, and where an
inventory falls short of a plan."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaform import sizing
from kafkaform.sizing import Deployed, Workload, plan, shortfalls

#: One day of writes at 1 TB a day, in MB/s.
ONE_TB_A_DAY = 1_000_000 / 86_400

#: A small workload with every input given, so no test leans on a default: 10 MB/s kept a day,
#: three replicas, one consumer group; disks, network and memory far above what it needs.
BASE: dict[str, Any] = {
    "ingress_mb_s": 10.0, "retention_hours": 24.0, "replication_factor": 3, "consumer_groups": 1,
    "headroom": 0.0, "target_disk_fill": 1.0, "overhead": 1.0, "disk_tb": 10.0,
    "disks_per_broker": 1, "nic_gbps": 10.0, "ram_gb": 64.0, "heap_gb": 4.0,
    "producer_mb_s": 100.0, "consumer_mb_s": 100.0, "mode": "kraft",
}


def workload(**changes: Any) -> Workload:
    return Workload(**{**BASE, **changes})


def test_disk_capacity_worked_example() -> None:
    """Kafka: The Definitive Guide, ch. 2, "Hardware Selection", "Disk Capacity": a broker that
    receives 1 TB of traffic a day, kept 7 days, needs a minimum of 7 TB of usable storage for
    its log segments, plus at least 10% overhead for other files: 7.7 TB."""
    book = plan(workload(ingress_mb_s=ONE_TB_A_DAY, retention_hours=7 * 24, replication_factor=1,
                         overhead=1.1, target_disk_fill=1.0))
    assert book.value("retained_tb") == pytest.approx(7.0, rel=1e-12)
    assert book.value("disk_tb") == pytest.approx(7.7, rel=1e-12)


@pytest.mark.parametrize(("replication_factor", "brokers"), [(1, 5), (2, 10)])
def test_how_many_brokers_worked_example(replication_factor: int, brokers: int) -> None:
    """Kafka: The Definitive Guide, ch. 2, "Kafka Clusters", "How Many Brokers?": a cluster that
    retains 10 TB on brokers that store 2 TB each needs five brokers; replication increases the
    storage by at least 100%, so the same cluster with replication needs at least 10."""
    ten_tb_a_day = 10 * ONE_TB_A_DAY
    book = plan(workload(ingress_mb_s=ten_tb_a_day, retention_hours=24, disk_tb=2.0,
                         replication_factor=replication_factor))
    assert book.value("retained_tb") == pytest.approx(10.0, rel=1e-12)
    assert book.value("disk_bound") == brokers
    assert book.brokers == brokers
    assert [f.key for f in book.bound_by] == ["disk_bound"]


@pytest.mark.parametrize(("producer_mb_s", "partitions"), [
    (100.0, 20),  # the book's example: producers faster than consumers, the consumers bound it
    (25.0, 40),  # a producer slower than the consumers bounds it instead
])
def test_how_to_choose_the_number_of_partitions_worked_example(producer_mb_s: float,
                                                               partitions: int) -> None:
    """Kafka: The Definitive Guide, ch. 2, "Topic Defaults", "How to Choose the Number of
    Partitions": to write and read 1 GB/sec from a topic with consumers that each process only
    50 MB/s, the topic needs at least 20 partitions."""
    book = plan(workload(ingress_mb_s=1_000.0, consumer_mb_s=50.0, producer_mb_s=producer_mb_s))
    assert book.value("partitions_needed") == partitions


@pytest.mark.parametrize(("replication_factor", "brokers"), [(1, 2), (2, 3)])
def test_how_many_brokers_network_worked_example(replication_factor: int, brokers: int) -> None:
    """Kafka: The Definitive Guide, ch. 2, "How Many Brokers?": a broker whose network interface
    runs at 80% of its capacity at peak cannot serve two consumers of that data unless there are
    two brokers; replication is one more consumer (here a third broker's worth)."""
    eighty_percent = 0.8 * 10 * 125  # of a 10 Gbit/s interface, in MB/s
    book = plan(workload(ingress_mb_s=eighty_percent, nic_gbps=10.0, headroom=0.0,
                         consumer_groups=2, replication_factor=replication_factor,
                         retention_hours=0.01))
    assert book.value("network_bound") == brokers
    assert book.brokers == brokers


def test_page_cache_holds_30_seconds_of_each_brokers_writes() -> None:
    """Apache Kafka documentation, "Hardware and OS": estimate the memory needed to buffer the
    active readers and writers as write_throughput*30. 100 MB/s written three times over three
    brokers is 100 MB/s a broker: 3 GB of page cache beside the heap."""
    book = plan(workload(ingress_mb_s=100.0, heap_gb=4.0))
    assert book.brokers == 3
    assert book.value("page_cache_gb") == pytest.approx(3.0)
    assert book.value("memory_per_broker_gb") == pytest.approx(7.0)


def test_partition_allocation_worked_example() -> None:
    """Kafka: The Definitive Guide, ch. 5, "Physical Storage", "Partition Allocation": a topic of
    10 partitions with replication factor 3 on 6 brokers is 30 replicas, 5 a broker."""
    assert sizing.replicas_per_broker(10, 3, 6) == 5


#: Each bound binding in a cluster of its own, with the arithmetic that makes it the largest.
BINDING = [
    # 100 MB/s kept 30 days, 3 replicas: 777.6 TB on 10 TB a broker; the network carries 300
    # MB/s of 1,250, the page cache 9 GB of 60.
    ("disk", {"ingress_mb_s": 100.0, "retention_hours": 720.0}, 78),
    # 1 GB/s read by 10 groups: 12 GB/s out over 1,250 MB/s a broker; the disks hold 10.8 TB.
    ("network", {"ingress_mb_s": 1_000.0, "retention_hours": 1.0, "consumer_groups": 10}, 10),
    # 400 MB/s x 3 x 30 s = 36 GB of page cache, 4 GB a broker beside a 4 GB heap in 8 GB.
    ("memory", {"ingress_mb_s": 400.0, "retention_hours": 1.0, "ram_gb": 8.0}, 9),
    # 200 partitions (1 MB/s each) x 3 replicas over 10 a broker.
    ("partition", {"ingress_mb_s": 200.0, "producer_mb_s": 1.0, "consumer_mb_s": 1.0,
                   "broker_partition_limit": 10}, 60),
    # Nothing else needs more than one broker.
    ("replication", {}, 3),
]


@pytest.mark.parametrize(("bound", "changes", "brokers"), BINDING, ids=[b[0] for b in BINDING])
def test_the_largest_bound_sets_the_broker_count(bound: str, changes: dict[str, Any],
                                                 brokers: int) -> None:
    result = plan(workload(**changes))
    assert result.brokers == brokers
    assert [f.key for f in result.bound_by] == [f"{bound}_bound"]
    others = [f.value for f in result.sections["brokers"]
              if f.key.endswith("_bound") and f.key != f"{bound}_bound"]
    assert max(others) < brokers


@pytest.mark.parametrize(("headroom", "brokers"), [(0.0, 1), (0.3, 2)])
def test_headroom_keeps_part_of_each_network_interface_free(headroom: float, brokers: int) -> None:
    # 1,000 MB/s in and out: within one 1,250 MB/s interface, not within 70% of it (875 MB/s).
    result = plan(workload(ingress_mb_s=1_000.0, replication_factor=1, headroom=headroom,
                           retention_hours=0.01))
    assert result.value("network_bound") == brokers


@pytest.mark.parametrize(("groups", "replication_factor", "times_ingress"), [
    (0, 1, 0), (1, 1, 1), (2, 1, 2), (1, 3, 3), (3, 3, 5)])
def test_egress_is_every_group_and_every_follower(groups: int, replication_factor: int,
                                                  times_ingress: int) -> None:
    result = plan(workload(consumer_groups=groups, replication_factor=replication_factor))
    assert result.value("egress_mb_s") == pytest.approx(10.0 * times_ingress)
    assert result.value("writes_mb_s") == pytest.approx(10.0 * replication_factor)


@pytest.mark.parametrize("consumer_mb_s", [0.3, 1.0, 0.7, 2.0, 5.0])
def test_partitions_per_topic_are_a_multiple_of_the_brokers_and_enough(
        consumer_mb_s: float) -> None:
    result = plan(workload(consumer_mb_s=consumer_mb_s))
    needed, per_topic = result.value("partitions_needed"), result.value("partitions_per_topic")
    assert per_topic % result.brokers == 0
    assert needed <= per_topic < needed + result.brokers
    assert result.value("replicas_per_broker") == per_topic * 3 / result.brokers


def test_each_broker_gets_its_share_and_the_disks_it_needs() -> None:
    # 50 MB/s kept 7 days, 3 replicas, 1.1 overhead at 0.7 fill: 142.56 TB over 4 disks of 4 TB.
    result = plan(workload(ingress_mb_s=50.0, retention_hours=168.0, overhead=1.1,
                           target_disk_fill=0.7, disk_tb=4.0, disks_per_broker=4))
    assert result.value("disk_tb") == pytest.approx(142.56)
    assert result.brokers == 9  # ceil(142.56 / 16)
    assert result.value("storage_per_broker_tb") == pytest.approx(15.84)
    assert result.value("disks_per_broker") == 4  # ceil(15.84 / 4)
    assert result.value("in_per_broker_mb_s") == pytest.approx(150.0 / 9)
    assert result.value("out_per_broker_mb_s") == pytest.approx(150.0 / 9)


def test_each_figure_shows_its_formula_numbers_and_rule() -> None:
    result = plan(workload(ingress_mb_s=50.0, retention_hours=168.0, overhead=1.1,
                           target_disk_fill=0.7))
    disk = next(f for f in result.sections["storage"] if f.key == "disk_tb")
    assert disk.text() == (
        "disk = ingress x retention x replication x overhead / target fill\n"
        "     = 50 MB/s x 168 h x 3 x 1.1 / 0.7 = 142.56 TB  [CP-01]")
    rules = {f.rule for figures in result.sections.values() for f in figures}
    assert rules == {"CP-01", "CP-02", "CP-03", "CP-04", "CP-05", "CP-06"}


@pytest.mark.parametrize(("mode", "per_broker", "per_cluster"), [
    ("zookeeper", 4_000, 200_000), ("kraft", 4_000, None)])
def test_the_modes_partition_limits(mode: str, per_broker: int, per_cluster: int | None) -> None:
    limits = workload(mode=mode).limits
    assert (limits.per_broker, limits.per_cluster) == (per_broker, per_cluster)
    overridden = workload(mode=mode, broker_partition_limit=2_000, cluster_partition_limit=9).limits
    assert (overridden.per_broker, overridden.per_cluster) == (2_000, 9)


def test_a_ratio_that_is_whole_is_not_rounded_up_by_float_noise() -> None:
    assert sizing.ceil_ratio(10.000000000000002, 2.0) == 5
    assert sizing.ceil_ratio(10.1, 2.0) == 6


@pytest.mark.parametrize(("values", "expected"), [
    ({"ingress_mb_s": 5.0}, []),
    ({"ingress_mb_s": -5.0}, [("ingress_mb_s", "must be above 0")]),
    ({"ingress_mb_s": 0}, [("ingress_mb_s", "must be above 0")]),
    ({"ingress_mb_s": "fast"}, [("ingress_mb_s", "must be a number")]),
    ({"ingress_mb_s": True}, [("ingress_mb_s", "must be a number")]),
    ({"ingress_mb_s": float("nan")}, [("ingress_mb_s", "must be a finite number")]),
    ({"ingress_mb_s": 5.0, "target_disk_fill": 1.5}, [("target_disk_fill", "must be at most 1")]),
    ({"ingress_mb_s": 5.0, "target_disk_fill": 0}, [("target_disk_fill", "must be above 0")]),
    ({"ingress_mb_s": 5.0, "headroom": 1}, [("headroom", "must be below 1")]),
    ({"ingress_mb_s": 5.0, "overhead": 0.9}, [("overhead", "must be at least 1")]),
    ({"ingress_mb_s": 5.0, "replication_factor": 2.5},
     [("replication_factor", "must be a whole number")]),
    ({"ingress_mb_s": 5.0, "replication_factor": 0},
     [("replication_factor", "must be at least 1")]),
    ({"ingress_mb_s": 5.0, "consumer_groups": -1}, [("consumer_groups", "must be at least 0")]),
    ({"ingress_mb_s": 5.0, "mode": "zk"}, [("mode", "must be zookeeper or kraft")]),
    ({"ingress_mb_s": 5.0, "ram_gb": 4.0, "heap_gb": 5.0},
     [("ram_gb", "must be above the heap (5 GB) to leave some for the page cache")]),
    ({"ingress_mb_s": 5.0, "heap_gb": 80.0},
     [("heap_gb", "must be below the memory (64 GB) to leave some for the page cache")]),
    ({"ingress_mb_s": -1, "disk_tb": 0}, [("ingress_mb_s", "must be above 0"),
                                          ("disk_tb", "must be above 0")]),
])
def test_inputs_a_workload_cannot_take(values: dict[str, Any],
                                       expected: list[tuple[str, str]]) -> None:
    assert sizing.input_problems(values) == expected


#: The plan the shortfalls are found against: 3 brokers (the replication factor), 10 partitions
#: needed (10 MB/s at 1 MB/s a partition), 12 a topic on 3 brokers.
SMALL = {"consumer_mb_s": 1.0}
RACKED = {"k1": "a", "k2": "b", "k3": "c"}
HOSTS = ("k1", "k2", "k3")


def topic(partitions: int, **more: Any) -> dict[str, Any]:
    return {"name": "events", "partitions": partitions, **more}


SHORTFALLS: list[tuple[str, dict[str, Any], Deployed, str | None, list[tuple[str, str]]]] = [
    ("meets the plan", SMALL, Deployed(RACKED, [topic(12)]), "events", []),
    ("the minimum partitions suffice", SMALL, Deployed(RACKED, [topic(10)]), "events", []),
    ("too few brokers and racks", SMALL, Deployed({"k1": "a", "k2": "b"}), None, [
        ("CP-06", "the kafka_broker group has 2 broker(s), the plan needs 3"),
        ("CP-06", "the brokers span 2 rack(s) (a, b), fewer than the replication factor 3")]),
    ("no broker at all", SMALL, Deployed({}), None, [
        ("CP-06", "the kafka_broker group has 0 broker(s), the plan needs 3")]),
    ("no rack set", SMALL, Deployed(dict.fromkeys(HOSTS)), None, [
        ("CP-06", "the brokers span 0 rack(s), fewer than the replication factor 3")]),
    ("disk-bound, too few brokers", {"retention_hours": 24.0 * 30, "ingress_mb_s": 100.0},
     Deployed(RACKED), None, [("CP-01", "the plan needs 78 (disk-bound brokers")]),
    ("the workload's topic undeclared", SMALL, Deployed(RACKED, [topic(12)]), "clicks", [
        ("CP-03", "topic clicks is not declared in kafka_topics")]),
    ("the workload's topic too small", SMALL, Deployed(RACKED, [topic(6)]), "events", [
        ("CP-03", "topic events has 6 partitions, the workload needs at least 10")]),
    ("over the per-broker limit", SMALL, Deployed(RACKED, [topic(4_001)]), None, [
        ("CP-04", "the declared topics hold 12,003 partition replicas, 4,001 on each of 3 "
                  "brokers, above the 4,000 a broker holds in kraft mode")]),
    ("a topic's own replication factor counts", SMALL,
     Deployed(RACKED, [topic(12_000, replication_factor=1)]), None, []),
    ("over the cluster limit in ZooKeeper mode", {**SMALL, "mode": "zookeeper"},
     Deployed(RACKED, [topic(3_000, replication_factor=3)] * 23), None, [
         ("CP-04", "4,000 a broker holds in zookeeper mode"),
         ("CP-04", "the declared topics hold 207,000 partition replicas, above the 200,000 a "
                   "cluster holds in zookeeper mode")]),
    ("no cluster limit in KRaft mode", {**SMALL, "mode": "kraft"},
     Deployed(RACKED, [topic(3_000, replication_factor=3)] * 23), None, [
         ("CP-04", "4,000 a broker holds in kraft mode")]),
    ("malformed topics are the preflight's", SMALL,
     Deployed(RACKED, [{"name": "x", "partitions": "many"}, {"name": "y"}]), None, []),
]


@pytest.mark.parametrize(("changes", "deployed", "workload_topic", "expected"),
                         [case[1:] for case in SHORTFALLS], ids=[case[0] for case in SHORTFALLS])
def test_where_an_inventory_falls_short_of_the_plan(
        changes: dict[str, Any], deployed: Deployed, workload_topic: str | None,
        expected: list[tuple[str, str]]) -> None:
    found = shortfalls(plan(workload(**changes)), deployed, workload_topic)
    assert len(found) == len(expected), [f.text() for f in found]
    for finding, (rule, message) in zip(found, expected, strict=True):
        assert finding.rule == rule
        assert message in finding.message
        assert finding.severity == "warning"
        assert finding.fix


def test_a_topic_short_of_partitions_is_told_a_multiple_of_the_brokers() -> None:
    found = shortfalls(plan(workload(**SMALL)), Deployed(RACKED, [topic(6)]), "events")
    assert "set its partitions to 12 in kafka_topics" in found[0].fix


def test_too_many_replicas_names_the_brokers_that_would_hold_them() -> None:
    found = shortfalls(plan(workload(**SMALL)), Deployed(RACKED, [topic(4_001)]))
    assert found[0].hosts == HOSTS
    assert "add brokers (at least 4)" in found[0].fix  # 12,003 replicas over 4,000 a broker


def test_strict_findings_are_errors() -> None:
    found = shortfalls(plan(workload(**SMALL)), Deployed({"k1": "a"}), severity="error")
    assert {f.severity for f in found} == {"error"}
