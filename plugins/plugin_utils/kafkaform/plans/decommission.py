"""Whether brokers may leave the cluster (OP-05): before a replica moves, the brokers that stay
must hold every partition at its replication factor (so min.insync.replicas in sync, never above
it), spread over as many racks as it is now, or the move would cost availability or data."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..rules import cite


@dataclass(frozen=True)
class Topic:
    """A topic as the cluster reports it: its replication factor (the largest of its
    partitions') and the most racks one of its partitions' replicas are spread over now."""

    name: str
    replication_factor: int
    racks_now: int = 0


def decommission_problems(removed: Collection[int], brokers: Mapping[int, str | None],
                          topics: Sequence[Topic]) -> list[str]:
    """Why the brokers ``removed`` may not leave (``brokers``: every broker's rack, None where
    undeclared); empty when they may."""
    unknown = sorted(set(removed) - set(brokers))
    if unknown:
        return [f"broker(s) {', '.join(map(str, unknown))} are not in the cluster "
                f"({cite('OP-05')}): name brokers by their kafka_broker_id"]
    staying = {b: rack for b, rack in brokers.items() if b not in removed}
    racks = {rack for rack in staying.values() if rack is not None}
    problems = []
    for topic in topics:
        if len(staying) < topic.replication_factor:
            problems.append(
                f"{topic.name}: replication factor {topic.replication_factor}, but only "
                f"{len(staying)} broker(s) would stay ({cite('OP-05')}). Add brokers first, or "
                "lower the topic's replication factor yourself")
        wanted = min(topic.racks_now, topic.replication_factor)
        if racks and len(racks) < wanted:
            problems.append(
                f"{topic.name}: its replicas are spread over {topic.racks_now} racks now, and "
                f"the brokers that stay are in {len(racks)} ({', '.join(sorted(racks))}), so a "
                f"rack's loss could take a partition ({cite('OP-05')}). Keep a broker in every "
                "rack, or add one to the rack you empty first")
    return problems
