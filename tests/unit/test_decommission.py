"""Whether brokers may leave (kafkaform.plans.decommission, OP-05): refusals table-tested."""

from __future__ import annotations

import pytest

from kafkaform.plans.decommission import Topic, decommission_problems

#: 6 brokers over 3 racks.
BROKERS: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
ORDERS = Topic("orders", replication_factor=3, racks_now=3)


@pytest.mark.parametrize(("removed", "brokers", "topics", "says"), [
    # One broker of a rack that keeps another: every partition still fits, spread over 3 racks.
    ({2}, BROKERS, [ORDERS], []),
    ({2, 4, 6}, BROKERS, [ORDERS], []),
    # A whole rack: the spread over 3 racks is gone.
    ({5, 6}, BROKERS, [ORDERS],
     ["orders: its replicas are spread over 3 racks now, and the brokers that stay are in 2 (a, "
      "b), so a rack's loss could take a partition (OP-05). Keep a broker in every rack, or add "
      "one to the rack you empty first"]),
    # A topic spread over 2 racks only loses nothing when one of three goes.
    ({5, 6}, BROKERS, [Topic("logs", 2, racks_now=2)], []),
    # Fewer brokers than the replication factor: the replicas have nowhere to go.
    ({1, 2, 3, 4}, BROKERS, [ORDERS],
     ["orders: replication factor 3, but only 2 broker(s) would stay (OP-05). Add brokers "
      "first, or lower the topic's replication factor yourself",
      "orders: its replicas are spread over 3 racks now, and the brokers that stay are in 1 (c), "
      "so a rack's loss could take a partition (OP-05). Keep a broker in every rack, or add one "
      "to the rack you empty first"]),
    # No racks declared: only the count matters.
    ({3}, {1: None, 2: None, 3: None, 4: None}, [ORDERS], []),
    ({3, 4}, {1: None, 2: None, 3: None, 4: None}, [ORDERS],
     ["orders: replication factor 3, but only 2 broker(s) would stay (OP-05). Add brokers "
      "first, or lower the topic's replication factor yourself"]),
    # A broker the cluster does not have.
    ({9}, BROKERS, [ORDERS],
     ["broker(s) 9 are not in the cluster (OP-05): name brokers by their kafka_broker_id"]),
])
def test_brokers_leave_only_when_the_rest_hold_every_partition_across_racks(
        removed: set[int], brokers: dict[int, str | None], topics: list[Topic],
        says: list[str]) -> None:
    assert decommission_problems(removed, brokers, topics) == says
