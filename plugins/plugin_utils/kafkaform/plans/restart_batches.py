"""Which brokers may restart together (OP-04).

A batch never holds more of a partition's in-sync replicas than the partition can lose and still
take acks=all writes: with min.insync.replicas 2 and three in-sync replicas, one of them. With
replicas spread across racks, a whole rack's brokers share no partition, so a rack restarts at
once. Computed from the cluster's live partition metadata (replicas move; the inventory does not
know where they are now), the active controller alone and last, as in a serial roll (OP-02).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..rules import cite

#: How many partitions a refusal names before it counts the rest.
NAMED = 5


@dataclass(frozen=True)
class Partition:
    """One partition as the cluster reports it, with the min.insync.replicas of its topic."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    min_insync: int
    #: The broker leading it now; -1 when none does (offline) or the answer does not say.
    leader: int = -1

    def writable_without(self, brokers: Collection[int]) -> bool:
        """Whether acks=all writes still succeed with ``brokers`` down."""
        return len(set(self.isr) - set(brokers)) >= self.min_insync

    def __str__(self) -> str:
        return (f"{self.topic}-{self.partition} (in sync on {', '.join(map(str, self.isr))}, "
                f"min.insync.replicas {self.min_insync})")


def batch_problem(batch: Collection[int], partitions: Iterable[Partition]) -> str:
    """Why the brokers ``batch`` may not restart together; "" when they may."""
    short = [p for p in partitions if not p.writable_without(batch)]
    if not short:
        return ""
    named = "; ".join(str(p) for p in short[:NAMED])
    more = f"; and {len(short) - NAMED} more" if len(short) > NAMED else ""
    brokers = ", ".join(str(b) for b in sorted(batch))
    return (f"restarting broker(s) {brokers} together would take {len(short)} partition(s) below "
            f"min.insync.replicas, refusing acks=all writes: {named}{more} ({cite('OP-04')}). "
            "Restart fewer brokers at a time (a smaller kafka_broker_restart_parallelism), or "
            "wait until those partitions are back in sync.")


class BatchError(ValueError):
    """No safe batch holds a broker: it cannot restart even alone without a partition below
    min.insync.replicas (the cluster is not healthy)."""


def restart_batches(brokers: Sequence[int], partitions: Sequence[Partition], parallelism: int,
                    racks: Mapping[int, str] | None = None,
                    last: Collection[int] = ()) -> list[list[int]]:
    """The brokers in restart batches of at most ``parallelism``: rack by rack where the
    partitions allow it (``racks``: each broker's rack), each batch safe by
    :func:`batch_problem`; the brokers in ``last`` (the active controller) each alone at the end.
    Raises :class:`BatchError` naming the partitions when a broker cannot restart even alone."""
    if parallelism < 1:
        raise ValueError(f"parallelism must be 1 or more, not {parallelism}")
    rack = dict(racks or {})
    position = {b: i for i, b in enumerate(brokers)}
    pending = sorted((b for b in brokers if b not in last),
                     key=lambda b: (rack.get(b, ""), position[b]))
    batches: list[list[int]] = []
    while pending:
        batch: list[int] = []
        for broker in pending:
            if len(batch) == parallelism:
                break
            if not batch_problem([*batch, broker], partitions):
                batch.append(broker)
        if not batch:
            raise BatchError(batch_problem([pending[0]], partitions))
        batches.append(batch)
        pending = [b for b in pending if b not in batch]
    for broker in (b for b in brokers if b in last):
        problem = batch_problem([broker], partitions)
        if problem:
            raise BatchError(problem)
        batches.append([broker])
    return batches


def placement(answer: Mapping[str, object]) -> list[Partition]:
    """The partitions of the admin helper's ``placement`` answer (roles/kafka_broker/files)."""
    found = answer.get("partitions")
    if not isinstance(found, list):
        raise ValueError(f"the placement answer holds no partitions: {answer!r}")
    return [Partition(str(p["topic"]), int(p["partition"]), tuple(int(r) for r in p["replicas"]),
                      tuple(int(r) for r in p["isr"]), int(p["min_insync"]),
                      int(p.get("leader", -1))) for p in found]


def roll_batches(order: Sequence[str], last: Collection[str], member_ids: Mapping[str, object],
                 racks: Mapping[str, str], parallelism: int,
                 answer: Mapping[str, object] | None) -> list[list[str]]:
    """A roll's members (``order``: the members to restart, those in ``last`` at the end) in
    batches, by inventory name: each member alone when ``parallelism`` is 1 or there is no
    placement ``answer``; else :func:`restart_batches` over the members' broker ids
    (``member_ids``) and racks (``racks``, by inventory name)."""
    if parallelism <= 1 or answer is None:
        return [[member] for member in order]
    host_of = {int(str(member_ids[m])): m for m in order}
    ids = [int(str(member_ids[m])) for m in order]
    batches = restart_batches(
        ids, placement(answer), parallelism,
        racks={int(str(member_ids[m])): racks[m] for m in order if m in racks},
        last=[int(str(member_ids[m])) for m in order if m in last])
    return [[host_of[i] for i in batch] for batch in batches]


def roll_batches_vars(order: Sequence[str], last: Collection[str],
                      member_ids: Mapping[str, object], racks: Mapping[str, str],
                      parallelism: int, answer: Mapping[str, object] | None) -> dict[str, object]:
    """:func:`roll_batches` for roles/rolling_restart (the restart_batches filter): the batches,
    or none and the ``problem`` that refuses the roll before any restart."""
    try:
        return {"batches": roll_batches(order, last, member_ids, racks, int(parallelism), answer),
                "problem": ""}
    except BatchError as error:
        return {"batches": [], "problem": str(error)}
