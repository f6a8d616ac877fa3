"""Which brokers restart together (kafkaform.plans.restart_batches, OP-04)."""

from __future__ import annotations

import pytest

from kafkaform.plans.restart_batches import (
    BatchError,
    Partition,
    batch_problem,
    restart_batches,
)

#: 6 brokers over 3 racks: 1, 2 in a; 3, 4 in b; 5, 6 in c.
RACKS = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
BROKERS = [1, 2, 3, 4, 5, 6]


def spread(count: int = 12, min_insync: int = 2) -> list[Partition]:
    """Replication 3, one replica per rack, leaders rotating: as Kafka's rack-aware assignment."""
    found = []
    for p in range(count):
        replicas = (1 + p % 2, 3 + (p // 2) % 2, 5 + (p + p // 2) % 2)
        replicas = replicas[p % 3:] + replicas[:p % 3]
        found.append(Partition("orders", p, replicas, replicas, min_insync))
    return found


def test_with_replicas_spread_across_racks_a_rack_restarts_at_once() -> None:
    assert restart_batches(BROKERS, spread(), parallelism=2, racks=RACKS) == [[1, 2], [3, 4],
                                                                              [5, 6]]
    # More parallelism than a rack holds adds nothing: two racks together would share partitions.
    assert restart_batches(BROKERS, spread(), parallelism=6, racks=RACKS) == [[1, 2], [3, 4],
                                                                              [5, 6]]


def test_parallelism_one_is_the_serial_roll_with_the_controller_last() -> None:
    assert restart_batches(BROKERS, spread(), parallelism=1, racks=RACKS, last=[3]) == [
        [1], [2], [4], [5], [6], [3]]
    assert restart_batches(BROKERS, spread(), parallelism=2, racks=RACKS, last=[3]) == [
        [1, 2], [4], [5, 6], [3]]


def test_brokers_that_share_partitions_never_go_together() -> None:
    # Two replicas of every partition in rack a: its brokers may not go together.
    both_in_a = [Partition("t", p, (1, 2, 3 + p % 4), (1, 2, 3 + p % 4), 2) for p in range(8)]
    batches = restart_batches(BROKERS, both_in_a, parallelism=3, racks=RACKS)
    assert all(not ({1, 2} <= set(b)) for b in batches)
    assert all(batch_problem(b, both_in_a) == "" for b in batches)
    assert sorted(x for b in batches for x in b) == BROKERS


def test_without_racks_the_given_order_is_kept_and_every_batch_is_safe() -> None:
    batches = restart_batches(BROKERS, spread(), parallelism=3)
    assert batches[0][0] == 1
    assert all(batch_problem(b, spread()) == "" for b in batches)
    # min.insync 1: a partition keeps taking writes with two of its three replicas down.
    assert len(restart_batches(BROKERS, spread(min_insync=1), parallelism=6)) < len(batches)


@pytest.mark.parametrize(("batch", "count", "says"), [
    ([1, 2], 12, ""),
    ([1, 3], 12, "restarting broker(s) 1, 3 together would take 3 partition(s) below "
                 "min.insync.replicas, refusing acks=all writes: orders-0 (in sync on 1, 3, 5, "
                 "min.insync.replicas 2); orders-4 (in sync on 3, 5, 1, min.insync.replicas 2); "
                 "orders-8 (in sync on 5, 1, 3, min.insync.replicas 2) (OP-04). Restart fewer "
                 "brokers at a time (a smaller kafka_broker_restart_parallelism), or wait until "
                 "those partitions are back in sync."),
    # Five named, the rest counted.
    ([3, 1], 48, "orders-16 (in sync on 3, 5, 1, min.insync.replicas 2); and 7 more (OP-04)"),
])
def test_a_batch_that_would_refuse_writes_is_refused_naming_the_partitions(
        batch: list[int], count: int, says: str) -> None:
    problem = batch_problem(batch, spread(count))
    assert (says in problem) if says else problem == ""


def test_a_broker_that_cannot_go_even_alone_stops_the_plan() -> None:
    lagging = [*spread(), Partition("payments", 0, (1, 3, 5), (1, 3), 2)]
    with pytest.raises(BatchError, match=r"payments-0 \(in sync on 1, 3, min.insync.replicas 2\)"):
        restart_batches(BROKERS, lagging, parallelism=2, racks=RACKS)
    with pytest.raises(ValueError, match="parallelism must be 1 or more"):
        restart_batches(BROKERS, spread(), parallelism=0)


def placement_answer(partitions: list[Partition]) -> dict[str, object]:
    return {"partitions": [{"topic": p.topic, "partition": p.partition,
                            "replicas": list(p.replicas), "isr": list(p.isr),
                            "min_insync": p.min_insync} for p in partitions]}


def test_a_roll_batches_its_members_by_inventory_name() -> None:
    from kafkaform.plans.restart_batches import roll_batches

    hosts = [f"k{b}" for b in BROKERS]
    ids = {f"k{b}": str(b) for b in BROKERS}
    racks = {f"k{b}": r for b, r in RACKS.items()}
    answer = placement_answer(spread())
    # k3 is the active controller: alone and last.
    assert roll_batches(hosts, {"k3"}, ids, racks, 2, answer) == [
        ["k1", "k2"], ["k4"], ["k5", "k6"], ["k3"]]
    # Serial when the roll may restart one at a time, or has no placement to go by.
    assert roll_batches(hosts, {"k3"}, ids, racks, 1, answer) == [[h] for h in hosts]
    assert roll_batches(hosts, {"k3"}, ids, racks, 3, None) == [[h] for h in hosts]
    # Only the members of the roll: a broker that needs no restart is in no batch.
    assert roll_batches(["k2", "k5"], set(), ids, racks, 2, answer) == [["k2"], ["k5"]]


def test_a_roll_of_an_unhealthy_cluster_is_refused_naming_the_partition() -> None:
    from kafkaform.plans.restart_batches import roll_batches

    ids = {"k1": "1", "k2": "2", "k3": "3"}
    short = [Partition("orders", 0, (1, 2, 3), (1, 2), 2)]
    with pytest.raises(BatchError, match=r"orders-0 \(in sync on 1, 2, min.insync.replicas 2\)"):
        roll_batches(["k1", "k2", "k3"], set(), ids, {}, 2, placement_answer(short))


def test_the_roles_filter_gives_the_batches_or_the_refusal() -> None:
    from kafkaform.plans.restart_batches import roll_batches_vars

    ids = {"k1": "1", "k2": "2", "k3": "3"}
    short = placement_answer([Partition("orders", 0, (1, 2, 3), (1, 2), 2)])
    refused = roll_batches_vars(["k1", "k2", "k3"], [], ids, {}, 2, short)
    assert refused["batches"] == [] and "orders-0" in str(refused["problem"])
    assert roll_batches_vars(["k1", "k2"], [], ids, {}, 1, short) == {
        "batches": [["k1"], ["k2"]], "problem": ""}
