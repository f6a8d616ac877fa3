"""What a layout can lose (kafkaform.topology, the TP rules): quorum majorities per rack, the
brokers' margins at acks=all, and the most replicas of a partition Kafka's rack-aware placement
puts in one rack (kafkaform.rack_placement)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from kafkaform import model, rack_placement
from kafkaform.cli import InputError
from kafkaform.topology import NO_RACK, Topology, topology


def layout(groups: Mapping[str, Mapping[str, str | None]], **settings: Any) -> Topology:
    """The topology of an inventory given as group -> {host: rack}, with cluster settings."""
    hostvars: dict[str, dict[str, Any]] = {}
    for members in groups.values():
        for host, rack in members.items():
            hostvars.setdefault(host, {"kafka_cluster_name": "t", **settings})
            if rack is not None:
                hostvars[host]["rack"] = rack
    view = model.InventoryView(groups={g: list(m) for g, m in groups.items()}, hostvars=hostvars)
    return topology(view)


def spread(prefix: str, racks: Mapping[str, int]) -> dict[str, str | None]:
    """Hosts named prefix1, prefix2 ... with ``racks[rack]`` of them in each rack."""
    hosts: dict[str, str | None] = {}
    for rack, count in racks.items():
        for _ in range(count):
            hosts[f"{prefix}{len(hosts) + 1}"] = rack
    return hosts


def lost(t: Topology) -> dict[str, bool | None]:
    return {rack.name: t.verdict(rack).can_be_lost for rack in t.racks}


@pytest.mark.parametrize(("group", "racks", "majority", "can_fail", "can_be_lost"), [
    # 3 over 3 racks: any rack leaves 2 of 3
    ("zookeeper", {"a": 1, "b": 1, "c": 1}, 2, 1, {"a": True, "b": True, "c": True}),
    # 3 over 2 racks: the rack of 2 takes the majority with it (ZK-07 refuses it)
    ("zookeeper", {"a": 2, "b": 1}, 2, 1, {"a": False, "b": True}),
    # 5 over 3 racks: the racks of 2 leave 3 of 5, still a majority
    ("zookeeper", {"a": 2, "b": 2, "c": 1}, 3, 2, {"a": True, "b": True, "c": True}),
    # 5 over 2 racks: 3 in one rack is the majority
    ("zookeeper", {"a": 3, "b": 2}, 3, 2, {"a": False, "b": True}),
    # an even ensemble tolerates no more than one member fewer
    ("zookeeper", {"a": 2, "b": 2}, 3, 1, {"a": False, "b": False}),
    ("kafka_controller", {"a": 1, "b": 1, "c": 1}, 2, 1, {"a": True, "b": True, "c": True}),
    ("kafka_controller", {"a": 2, "b": 1}, 2, 1, {"a": False, "b": True}),
])
def test_a_quorum_keeps_its_majority_outside_the_rack(
        group: str, racks: dict[str, int], majority: int, can_fail: int,
        can_be_lost: dict[str, bool]) -> None:
    t = layout({group: spread("q", racks)})
    (quorum,) = t.quorums
    assert (quorum.voters, quorum.majority, quorum.can_fail) == (sum(racks.values()), majority,
                                                                 can_fail)
    assert lost(t) == can_be_lost
    assert t.hosts_can_fail == can_fail


def test_a_migration_shows_both_quorums_and_a_rack_needs_both() -> None:
    t = layout({"zookeeper": spread("zk", {"a": 1, "b": 1, "c": 1}),
                "kafka_controller": spread("ctl", {"a": 2, "b": 1})})
    assert [q.name for q in t.quorums] == ["ZooKeeper", "the KRaft quorum"]
    verdict = {r.name: t.verdict(r) for r in t.racks}
    assert verdict["a"].can_be_lost is False
    assert "ZooKeeper keeps 2 of 3 (majority held)" in verdict["a"].text()
    assert "the KRaft quorum keeps 1 of 3 (majority lost)" in verdict["a"].text()
    assert verdict["b"].can_be_lost is True


#: Brokers per rack, RF, min.insync.replicas -> replicas each rack's loss leaves, and whether
#: every partition stays writable without it.
BROKER_CASES = [
    # RF 3 over 3 racks: one replica a rack
    ({"a": 1, "b": 1, "c": 1}, 3, 2, {"a": 2, "b": 2, "c": 2}, 1),
    ({"a": 2, "b": 2, "c": 2}, 3, 2, {"a": 2, "b": 2, "c": 2}, 1),
    # RF 3 over 2 racks (the lab): the rack of 2 holds 2 replicas of every partition
    ({"a": 2, "b": 1}, 3, 2, {"a": 1, "b": 2}, 1),
    # over 2 racks of 2: ceil(3/2) = 2 in either
    ({"a": 2, "b": 2}, 3, 2, {"a": 1, "b": 1}, 1),
    # over 1 rack: everything goes with it
    ({"a": 3}, 3, 2, {"a": 0}, 1),
    # RF 2 with min.insync.replicas 2: no broker can fail
    ({"a": 1, "b": 1, "c": 1}, 2, 2, {"a": 1, "b": 1, "c": 1}, 0),
    # a rack with fewer brokers than ceil(RF / racks) = 2: it loses its one, the others the rest
    ({"a": 1, "b": 2, "c": 2}, 5, 3, {"a": 4, "b": 3, "c": 3}, 2),
    # KIP-36 over racks of 2 and 3 brokers at RF 4 puts 3 replicas of some partitions in the
    # larger rack, not ceil(4/2) = 2
    ({"a": 2, "b": 3}, 4, 2, {"a": 2, "b": 1}, 2),
]


@pytest.mark.parametrize(("racks", "rf", "isr", "keeps", "can_fail"), BROKER_CASES)
def test_brokers_margins(racks: dict[str, int], rf: int, isr: int, keeps: dict[str, int],
                         can_fail: int) -> None:
    t = layout({"kafka_broker": spread("kafka", racks)},
               kafka_default_replication_factor=rf, kafka_min_insync_replicas=isr)
    (defaults,) = t.replication
    assert defaults.can_fail == can_fail
    assert {rack: defaults.keeps(rack) for rack in racks} == keeps
    assert lost(t) == {rack: kept >= isr for rack, kept in keeps.items()}


def test_the_verdict_says_what_stops_in_plain_words() -> None:
    t = layout({"zookeeper": spread("zk", {"lab-a": 1, "lab-b": 1, "lab-c": 1}),
                "kafka_broker": spread("kafka", {"lab-a": 2, "lab-b": 1})},
               kafka_default_replication_factor=3, kafka_min_insync_replicas=2)
    text = {r.name: t.verdict(r).text() for r in t.racks}
    assert text["lab-a"].startswith(
        "losing rack lab-a: ZooKeeper keeps 2 of 3 (majority held); brokers keep 1 of 3 replicas "
        "of every partition, below min.insync.replicas 2: writes with acks=all stop")
    assert text["lab-a"].endswith("[TP-01, TP-03]")
    assert "brokers keep 2 of 3 replicas of every partition (min.insync.replicas 2: still " \
        "writable)" in text["lab-b"]
    assert "no broker there" in text["lab-c"]
    assert t.margins_text() == ("any 1 host can fail; racks that can be lost: lab-b and lab-c, "
                                "not lab-a")


def test_each_declared_topic_has_its_own_margin() -> None:
    topics = [{"name": "audit", "partitions": 3, "replication_factor": 2,
               "configs": {"min.insync.replicas": 2}},
              {"name": "events", "partitions": 6, "replication_factor": 3}]
    t = layout({"kafka_broker": spread("kafka", {"a": 1, "b": 1, "c": 1})},
               kafka_default_replication_factor=3, kafka_min_insync_replicas=2,
               kafka_topics=topics)
    margins = {r.name: (r.replication_factor, r.min_insync, r.can_fail) for r in t.replication}
    assert margins == {"the brokers' defaults": (3, 2, 1), "topic audit": (2, 2, 0),
                       "topic events": (3, 2, 1)}
    assert t.hosts_can_fail == 0
    verdict = t.verdict(t.racks[0])
    assert verdict.can_be_lost is False
    assert "brokers keep 1 of 2 replicas of every partition of topic audit, below " \
        "min.insync.replicas 2" in verdict.text()
    assert "2 of 3 replicas of every partition of the brokers' defaults and topic events" \
        in verdict.text()


def test_brokers_without_racks_are_not_placed_rack_aware() -> None:
    t = layout({"kafka_broker": {"k1": None, "k2": None, "k3": "a"}},
               kafka_default_replication_factor=3, kafka_min_insync_replicas=2)
    assert [r.name for r in t.racks] == ["a", NO_RACK]
    assert t.verdict(t.racks[1]).can_be_lost is None
    assert t.replication[0].keeps("a") == 2  # a's one broker: one replica at most


def test_a_replication_factor_above_the_brokers_is_never_created() -> None:
    t = layout({"kafka_broker": spread("kafka", {"a": 1, "b": 1})},
               kafka_default_replication_factor=3, kafka_min_insync_replicas=2)
    assert not t.replication[0].creatable
    assert "Kafka creates none of its partitions" in t.replication[0].text()
    assert set(lost(t).values()) == {False}


@pytest.mark.parametrize(("setting", "value"), [
    ("kafka_default_replication_factor", "three"), ("kafka_min_insync_replicas", 0)])
def test_a_replication_setting_that_is_no_count_is_an_input_error(setting: str,
                                                                   value: Any) -> None:
    with pytest.raises(InputError, match=f"^{setting} is {value!r}, not a positive integer"):
        layout({"kafka_broker": spread("kafka", {"a": 3})}, **{setting: value})


def test_hosts_sit_in_their_racks_with_every_role() -> None:
    t = layout({"kafka_controller": {"n1": "a"}, "kafka_broker": {"n1": "a", "n2": "b"},
                "spark_worker": {"w1": None}, "monitoring": {"m1": None}})
    columns = {rack.name: [(h.name, h.roles) for h in rack.hosts] for rack in t.racks}
    assert columns == {"a": [("n1", ("kafka_controller", "kafka_broker"))],
                       "b": [("n2", ("kafka_broker",))],
                       NO_RACK: [("w1", ("spark_worker",)), ("m1", ("monitoring",))]}


# Kafka's own AdminRackAwareTest (testGetRackAlternatedBrokerListAndAssignReplicasToBrokers):
# brokers 0..5 in racks rack1, rack3, rack3, rack2, rack2, rack1 alternate as 0, 3, 1, 5, 4, 2,
# and with start index and shift 0 the partitions of RF 3 take 3 brokers in a row of that list.
def test_kip36_walk_follows_kafkas_rack_alternated_list() -> None:
    order = rack_placement.rack_alternated({"rack1": 2, "rack2": 2, "rack3": 2})
    assert order == ["rack1", "rack2", "rack3"] * 2
    for first in range(6):
        assert rack_placement._walk(order, first, 0, 3) == [(first + i) % 6 for i in range(3)]


@pytest.mark.parametrize("racks", [1, 2, 3, 4])
@pytest.mark.parametrize("per_rack", [1, 2, 3])
def test_equal_racks_hold_ceil_rf_over_racks_in_kraft(racks: int, per_rack: int) -> None:
    counts = {f"r{i}": per_rack for i in range(racks)}
    for rf in range(1, racks * per_rack + 1):
        expected = min(per_rack, math.ceil(rf / racks))
        assert rack_placement.striped_share(counts, rf) == dict.fromkeys(counts, expected), rf
        kip36 = rack_placement.kip36_share(counts, rf)
        assert min(kip36.values()) >= expected, rf
        if rf <= racks:
            assert kip36 == dict.fromkeys(counts, 1), rf


def test_kip36_can_put_more_than_ceil_rf_over_racks_in_a_rack() -> None:
    # 3 racks of 3 brokers at RF 6: a partition whose first pass skips a broker of a rack that has
    # a replica goes on from there, giving one rack 3 (brokers a1, c2, b3, c3, b1, c1).
    order = rack_placement.rack_alternated({"a": 3, "b": 3, "c": 3})
    assert [order[b] for b in rack_placement._walk(order, 0, 4, 6)].count("c") == 3
    assert rack_placement.rack_share({"a": 3, "b": 3, "c": 3}, 6) == {"a": 3, "b": 3, "c": 3}


def test_striped_placer_gives_a_short_rack_only_its_brokers() -> None:
    assert rack_placement.striped_share({"a": 1, "b": 4, "c": 4}, 6) == {"a": 1, "b": 3, "c": 3}
    assert rack_placement.striped_share({"a": 1, "b": 1, "c": 4}, 5) == {"a": 1, "b": 1, "c": 3}


def test_fewer_replicas_than_racks_put_at_most_one_in_a_rack() -> None:
    share = rack_placement.kip36_share({"a": 3, "b": 1, "c": 2, "d": 4}, 3)
    assert share == {"a": 1, "b": 1, "c": 1, "d": 1}


def test_a_large_cluster_takes_the_bound_not_the_walk() -> None:
    counts = {"a": 101, "b": 100}
    assert sum(counts.values()) > rack_placement.EXACT_WALK_LIMIT
    assert rack_placement.kip36_share(counts, 4) == {"a": 3, "b": 3}  # 1 + RF - racks
