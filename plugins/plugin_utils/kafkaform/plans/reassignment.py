"""Where replicas go when brokers leave (OP-05) or join: the new replica list of each
partition that moves, as Kafka's reassignment takes it.

Both directions keep what a rack-aware assignment gave: a partition's replicas stay in as many
racks as before, and a replica that moves goes, where it can, to a broker of the rack it leaves.
Each move goes to the broker holding the fewest replicas then, so the load evens out; a replica
keeps its place in the list, so a moved preferred leader's successor is the partition's preferred
leader. Partitions that need no move are not in the answer: a reassignment of nothing is never
started.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from .restart_batches import Partition

#: A partition's topic and number.
Key = tuple[str, int]


def _load(partitions: Sequence[Partition]) -> Counter[int]:
    return Counter(r for p in partitions for r in p.replicas)


def _choose(candidates: Collection[int], replicas: Sequence[int], leaving_rack: str | None,
            racks: Mapping[int, str | None], load: Counter[int]) -> int | None:
    """The broker a replica moves to: not already a replica of the partition; of the rack it
    leaves, else of a rack the partition has no replica in, else any; the least loaded, then the
    lowest id."""
    free = [b for b in candidates if b not in replicas]
    used = {racks.get(r) for r in replicas}
    for tier in ([b for b in free if leaving_rack is not None and racks.get(b) == leaving_rack],
                 [b for b in free if racks.get(b) not in used],
                 free):
        if tier:
            return min(tier, key=lambda b: (load[b], b))
    return None


def moves_off(partitions: Sequence[Partition], leaving: Collection[int],
              brokers: Collection[int], racks: Mapping[int, str | None]) -> dict[Key, list[int]]:
    """Every partition with a replica on a ``leaving`` broker, with its new replicas on the
    ``brokers`` that stay. Raises ValueError when a partition has nowhere to go (fewer brokers
    stay than its replication factor: plans.decommission refuses that first)."""
    staying = [b for b in brokers if b not in leaving]
    load = _load(partitions)
    moved: dict[Key, list[int]] = {}
    for p in sorted(partitions, key=lambda p: (p.topic, p.partition)):
        if not set(p.replicas) & set(leaving):
            continue
        replicas = list(p.replicas)
        for i, broker in enumerate(replicas):
            if broker not in leaving:
                continue
            target = _choose(staying, replicas, racks.get(broker), racks, load)
            if target is None:
                raise ValueError(f"{p.topic}-{p.partition}: no broker that stays can take its "
                                 f"replica on broker {broker}")
            replicas[i] = target
            load[target] += 1
            load[broker] -= 1
        moved[(p.topic, p.partition)] = replicas
    return moved


def moves_onto(partitions: Sequence[Partition], joining: Collection[int],
               brokers: Collection[int], racks: Mapping[int, str | None]) -> dict[Key, list[int]]:
    """The partitions whose replicas move to the ``joining`` brokers so that each ends near the
    cluster's mean replica count (the floor of it), taken only from the brokers that were there
    and each from the most loaded one first, never costing a partition a rack it has."""
    load = _load(partitions)
    everyone = sorted(set(brokers) | set(joining))
    fair = sum(load.values()) // max(len(everyone), 1)
    current = {(p.topic, p.partition): list(p.replicas) for p in partitions}
    moved: dict[Key, list[int]] = {}
    for newcomer in sorted(joining):
        while load[newcomer] < fair:
            move = _take_one(current, newcomer, load, racks, joining)
            if move is None:
                break  # nothing more can move here without costing a rack
            key, index, giver = move
            current[key][index] = newcomer
            load[newcomer] += 1
            load[giver] -= 1
            moved[key] = current[key]
    return moved


def _take_one(current: Mapping[Key, list[int]], newcomer: int, load: Counter[int],
              racks: Mapping[int, str | None],
              joining: Collection[int]) -> tuple[Key, int, int] | None:
    """One replica the ``newcomer`` may take: from the most loaded broker that was there, of a
    partition it holds no replica of, where the move keeps the partition's racks (the giver is
    of the newcomer's rack, or the newcomer's rack has no replica of it)."""
    givers = sorted((b for b in load if b not in joining and b != newcomer),
                    key=lambda b: (-load[b], b))
    for giver in givers:
        if load[giver] <= load[newcomer] + 1:
            return None  # moving would not even the load
        for key in sorted(current):
            replicas = current[key]
            if giver not in replicas or newcomer in replicas:
                continue
            others = {racks.get(r) for r in replicas if r != giver}
            if racks.get(giver) == racks.get(newcomer) or racks.get(newcomer) not in others:
                return key, replicas.index(giver), giver
    return None
