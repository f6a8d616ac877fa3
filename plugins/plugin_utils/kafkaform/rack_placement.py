"""How many replicas of one partition Kafka's rack-aware assignment can put in each rack (TP-03).

Two placers decide where a new partition's replicas go: in ZooKeeper mode, and in both modes for
``kafka-reassign-partitions --generate``, the assignment of KIP-36 (AdminUtils, now
``org.apache.kafka.admin.AdminUtils.assignReplicasToBrokersRackAware``); in KRaft mode the
controller's ``StripedReplicaPlacer``. A partition keeps the placement it was given, so a rack's
share is the larger of the two.

The striped placer deals replicas to the racks round-robin, skipping a rack whose brokers all hold
one already: a rack gets at most ``min(brokers in it, L)``, L the smallest level with
``sum over racks of min(brokers, L) >= RF``: ceil(RF / racks) when every rack has that many
brokers. KIP-36 walks a list of the brokers that alternates the racks, skipping a broker whose rack
has a replica until every rack has one; the replicas past that first round follow the list on from
where it stopped, past the brokers it skipped, so a rack can get more than ceil(RF / racks) (3 of 6
replicas in one of 3 racks of 3 brokers; 3 of 4 in the larger of racks of 2 and 3). Its share is
found by walking the list from every start Kafka may pick.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

#: Above this many brokers the n x n walks of KIP-36 take seconds: its guaranteed bound is used
#: instead (one replica in each rack first, so at most 1 + RF - racks in one).
EXACT_WALK_LIMIT = 200


def striped_share(brokers_per_rack: Mapping[str, int], replication_factor: int) -> dict[str, int]:
    """The most replicas of a partition KRaft's striped placer puts in each rack."""
    level = 0
    while sum(min(count, level) for count in brokers_per_rack.values()) < replication_factor:
        if level > replication_factor:  # more replicas than brokers: Kafka creates none
            break
        level += 1
    return {rack: min(count, level) for rack, count in brokers_per_rack.items()}


def rack_alternated(brokers_per_rack: Mapping[str, int]) -> list[str]:
    """The rack of each broker in KIP-36's rack-alternated list: racks sorted by name, one broker
    of each rack that still has one in turn (getRackAlternatedBrokerList)."""
    left = {rack: brokers_per_rack[rack] for rack in sorted(brokers_per_rack)}
    order: list[str] = []
    while any(left.values()):
        for rack, count in left.items():
            if count:
                order.append(rack)
                left[rack] = count - 1
    return order


def _walk(order: list[str], first: int, shift: int, replication_factor: int) -> list[int]:
    """The brokers (positions in ``order``) KIP-36 gives one partition whose first replica is at
    ``first``: the next brokers of the list after it, skipping a broker whose rack already has a
    replica while a rack has none, and a broker that already has one."""
    size, racks = len(order), len(set(order))
    chosen, racks_used = [first], {order[first]}
    step = 0
    while len(chosen) < replication_factor:
        broker = (first + 1 + (shift + step) % (size - 1)) % size
        step += 1
        if order[broker] in racks_used and len(racks_used) < racks:
            continue
        if broker in chosen:
            continue
        chosen.append(broker)
        racks_used.add(order[broker])
    return chosen


def kip36_share(brokers_per_rack: Mapping[str, int], replication_factor: int) -> dict[str, int]:
    """The most replicas of a partition KIP-36's assignment puts in each rack, over every first
    replica and every shift of the second Kafka may pick (the shift moves by the number of racks,
    so only multiples of gcd(racks, brokers - 1) occur)."""
    order = rack_alternated(brokers_per_rack)
    size, racks = len(order), len(brokers_per_rack)
    share = dict.fromkeys(brokers_per_rack, 0)
    if replication_factor > size or size < 2:
        return {rack: min(count, replication_factor) for rack, count in brokers_per_rack.items()}
    if size > EXACT_WALK_LIMIT:
        extra = max(replication_factor - racks, 0)
        return {rack: min(count, 1 + extra) for rack, count in brokers_per_rack.items()}
    for first in range(size):
        for shift in range(0, size - 1, math.gcd(racks, size - 1)):
            placed = [order[b] for b in _walk(order, first, shift, replication_factor)]
            for rack in share:
                share[rack] = max(share[rack], placed.count(rack))
    return share


def rack_share(brokers_per_rack: Mapping[str, int], replication_factor: int) -> dict[str, int]:
    """The most replicas of one partition each rack can hold, whichever placer placed it."""
    kip36 = kip36_share(brokers_per_rack, replication_factor)
    striped = striped_share(brokers_per_rack, replication_factor)
    return {rack: max(kip36[rack], striped[rack]) for rack in brokers_per_rack}
