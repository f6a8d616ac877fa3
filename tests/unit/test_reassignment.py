"""Where replicas go when brokers leave or join (kafkaform.plans.reassignment)."""

from __future__ import annotations

from collections import Counter

import pytest

from kafkaform.plans.reassignment import moves_off, moves_onto
from kafkaform.plans.restart_batches import Partition

#: 6 brokers over 3 racks: 1, 2 in a; 3, 4 in b; 5, 6 in c.
RACKS: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}


def spread(brokers: dict[int, str | None], count: int = 12) -> list[Partition]:
    """Replication 3, one replica per rack, rotating through each rack's brokers."""
    by_rack: dict[str | None, list[int]] = {}
    for broker, rack in sorted(brokers.items()):
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack, key=str)
    found = []
    for p in range(count):
        replicas = tuple(by_rack[r][(p + i) % len(by_rack[r])] for i, r in enumerate(racks))
        found.append(Partition("orders", p, replicas, replicas, 2))
    return found


def racks_of(replicas: list[int] | tuple[int, ...]) -> set[str | None]:
    return {RACKS[r] for r in replicas}


def test_a_leaving_brokers_replicas_go_to_its_rack_mate_in_their_places() -> None:
    partitions = spread(RACKS)
    moved = moves_off(partitions, {6}, RACKS, RACKS)
    holding_6 = [p for p in partitions if 6 in p.replicas]
    assert sorted(moved) == sorted((p.topic, p.partition) for p in holding_6)
    for p in holding_6:
        new = moved[(p.topic, p.partition)]
        # Broker 5 (rack c) takes the place 6 held: the same racks, the same preferred order.
        assert new == [5 if r == 6 else r for r in p.replicas]


def test_a_rack_emptied_keeps_each_partition_on_three_distinct_brokers_and_evens_the_load() -> None:
    partitions = spread(RACKS)
    moved = moves_off(partitions, {5, 6}, RACKS, RACKS)
    final = {(p.topic, p.partition): list(p.replicas) for p in partitions} | moved
    assert all(len(set(r)) == 3 and not {5, 6} & set(r) for r in final.values())
    load = Counter(b for r in final.values() for b in r)
    assert max(load.values()) - min(load.values()) <= 1  # 36 replicas on 4 brokers: 9 each


def test_a_partition_with_nowhere_to_go_is_refused_by_name() -> None:
    partitions = [Partition("orders", 0, (1, 2, 3), (1, 2, 3), 2)]
    with pytest.raises(ValueError, match="orders-0: no broker that stays"):
        moves_off(partitions, {3}, [1, 2, 3], {})


def test_new_brokers_get_a_fair_share_from_the_old_ones_keeping_the_racks() -> None:
    old = {b: r for b, r in RACKS.items() if b in (1, 3, 5)}
    partitions = spread(old)  # every replica on 1, 3 and 5: 12 each
    moved = moves_onto(partitions, {2, 4, 6}, [1, 3, 5], RACKS)
    final = {(p.topic, p.partition): list(p.replicas) for p in partitions} | moved
    load = Counter(b for r in final.values() for b in r)
    assert load == Counter({b: 6 for b in RACKS})
    assert all(racks_of(r) == {"a", "b", "c"} for r in final.values())
    # Only partitions that changed are moved, and each move took from an old broker.
    for key, replicas in moved.items():
        before = next(p.replicas for p in partitions if (p.topic, p.partition) == key)
        assert replicas != list(before)
        assert set(before) - set(replicas) <= {1, 3, 5}


def test_a_balanced_cluster_moves_nothing() -> None:
    assert moves_onto(spread(RACKS), set(), list(RACKS), RACKS) == {}
    assert moves_off(spread(RACKS), set(), list(RACKS), RACKS) == {}
