"""Whether the brokers a decommission empties are cordoned first (OP-08, KIP-1066), decided
once for both engines (plans.broker_moves, for the ``broker_moves`` filter and pyinfra's
``deploys.day_two``).

A cordoned broker (its dynamic ``cordoned.log.dirs`` set to ``*``) gets no replica of a new
topic or of a partition added to one, and it serves on: a topic created during a long drain
cannot land on a broker about to stop. Kafka also refuses any explicit move whose replicas
include it, as a new replica or one it keeps ("all its log directories are cordoned", measured on
4.4.0): so before any replica moves, a decommission or a scale-out lifts the cordon of every
broker its moves name (a cordon an interrupted run left, or one an operator set), and of a
scale-out's brokers that join; the brokers that leave keep theirs. Kafka has the config
from 4.3 on, and its controllers refuse it (INVALID_CONFIG) until the cluster's metadata.version
is 4.3-IV0 or later; ZooKeeper mode has no such thing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..catalog import release_key
from ..rules import cite

#: The first Kafka release with cordoned.log.dirs.
CORDON_RELEASE = (4, 3)
#: metadata.version 4.3-IV0's feature level: the controllers accept a cordon from it on.
CORDON_METADATA_LEVEL = 30


@dataclass(frozen=True)
class Cordon:
    """The brokers to cordon (their ids), or why none is."""

    ids: list[int] = field(default_factory=list)
    reason: str = ""


def cordon_refusal(metadata_mode: str, release: str, metadata_level: int | None) -> str:
    """Why brokers of this cluster cannot be cordoned; empty when they can."""
    if metadata_mode != "kraft":
        return (f"not cordoned: ZooKeeper mode has no cordoned.log.dirs ({cite('OP-08')}); a "
                "topic created during the moves may still get a replica on the leaving brokers")
    if release_key(release)[:2] < CORDON_RELEASE:
        return (f"not cordoned: Kafka {release} has no cordoned.log.dirs, 4.3 and later have "
                f"({cite('OP-08')}); a topic created during the moves may still get a replica on "
                "the leaving brokers")
    if metadata_level is None or metadata_level < CORDON_METADATA_LEVEL:
        return (f"not cordoned: the cluster's metadata.version (level {metadata_level}) is "
                f"older than 4.3-IV0 (level {CORDON_METADATA_LEVEL}), and the controllers "
                f"refuse cordoned.log.dirs until it is raised ({cite('OP-08')}; "
                "playbooks/kafka.yml raises it once every node runs the release)")
    return ""


def cordon(metadata_mode: str, release: str, metadata_level: int | None,
           leaving: Sequence[int], registered: Collection[int]) -> Cordon:
    """The brokers ``leaving`` that are cordoned before any replica moves: those still
    registered (a rerun finds the others already stopped), when the cluster supports it."""
    reason = cordon_refusal(metadata_mode, release, metadata_level)
    if reason:
        return Cordon(reason=reason)
    return Cordon(ids=[i for i in leaving if i in registered])


def uncordon_receiving(taking: Mapping[int, int], joining: Sequence[int],
                       leaving: Collection[int], registered: Collection[int]) -> Cordon:
    """The brokers whose cordon is lifted before the moves (a no-op on one without): every one
    a move names (``taking``: how many new replicas each gets, 0 for one that keeps its
    replica) and the ``joining`` ones still registered, never one ``leaving``; the reason says
    which and why."""
    ids = sorted({*taking, *(i for i in joining if i in registered)} - set(leaving))
    if not ids:
        return Cordon()
    said = ", ".join(f"{i} ({taking[i]} new replica(s))" if taking.get(i) else
                     f"{i} (keeps replicas that move)" if i in taking else f"{i} (joins)"
                     for i in ids)
    return Cordon(ids=ids, reason=(
        f"a cordon on broker(s) {said} is lifted before the moves: Kafka refuses any move "
        "whose replicas include a broker with all its log directories cordoned "
        f"({cite('OP-08')}); the brokers that leave keep theirs"))
