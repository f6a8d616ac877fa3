"""The cluster a run finds on its Kafka nodes where the inventory names nothing (KR-07, KF-05,
KR-12), and the controllers' quorum the nodes run (KR-15): taken from every node's host read
(plans.kafka_broker.host_read) before any node changes, the same for both engines."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..catalog import kafka_release, release_key, release_line
from ..rules import cite
from . import quorum

if TYPE_CHECKING:
    from .kafka_broker import KafkaBrokerHost


@dataclass(frozen=True)
class RunningCluster:
    """What a run takes from the Kafka nodes it reads where the inventory names nothing: the
    cluster id their storage holds (KR-07) and the release line they run (KF-05)."""

    #: The id: kafka_cluster_id; else the one every node whose storage holds an id holds (a
    #: cluster migrated from ZooKeeper keeps the id ZooKeeper gave it); else the derived one.
    id: str
    #: The id comes from the nodes' storage and differs from the model's: the engines take it
    #: for every Kafka node of the run.
    take: bool
    #: The release of a node whose inventory names no kafka_broker_version: the newest the
    #: catalog has of the line such nodes run, else the model's (a new cluster's).
    release: str
    #: Nodes hold different ids, or run different lines, and the inventory names none: which
    #: is the cluster's is the operator's to say.
    problem: str = ""
    #: A quorum leader has written a controller's metadata log (KR-15: a new controller joins
    #: the voters). Controllers formatted, even started, by a run stopped before the quorum had a
    #: leader have not: the rest are formatted with the same first voters, or it could never form.
    quorum_formed: bool = False
    #: The brokers whose Kafka ran when the hosts were read, in the model's order: the declared
    #: topics, users and ACLs are read on one of them (plans.kafka_broker).
    serving_brokers: tuple[str, ...] = ()

    @property
    def taken(self) -> dict[str, Any]:
        """The model's fields the run takes from the nodes."""
        return {"cluster_id": self.id, "kafka_release": self.release,
                "quorum_formed": self.quorum_formed, "serving_brokers": list(self.serving_brokers)}

    def model(self, cluster: Mapping[str, Any]) -> dict[str, Any]:
        """The cluster model the run plans with."""
        return {**cluster, **self.taken}

    def as_vars(self) -> dict[str, Any]:
        return {**asdict(self), "model": self.taken}


def _held_ids(cluster: Mapping[str, Any],
              reads: Mapping[str, KafkaBrokerHost]) -> tuple[str, bool, str]:
    model_id = str(cluster.get("cluster_id", ""))
    held: dict[str, list[str]] = {}
    for host, read in sorted(reads.items()):
        if read.cluster_id:
            held.setdefault(read.cluster_id, []).append(host)
    if cluster.get("cluster_id_declared") or not held:
        return model_id, False, ""
    if len(held) == 1:
        found = next(iter(held))
        return found, found != model_id, ""
    ids = "; ".join(f"{', '.join(hosts)}: {cid}" for cid, hosts in sorted(held.items()))
    return model_id, False, (
        f"the Kafka nodes' storage holds different cluster ids ({ids}) and the inventory names "
        f"none, so kafkaform cannot tell which is the cluster's ({cite('KR-07')}). Set "
        "kafka_cluster_id to the cluster's own in the inventory's group_vars/all and run again; "
        "a node formatted for another cluster must be emptied by hand first.")


def _running_release(cluster: Mapping[str, Any], reads: Mapping[str, KafkaBrokerHost],
                     declared: Mapping[str, str]) -> tuple[str, str]:
    new_cluster = str(cluster.get("kafka_release") or "")
    runs: dict[str, list[str]] = {}
    for host, read in sorted(reads.items()):
        if not declared.get(host) and re.match(r"\d+\.\d", read.release):
            runs.setdefault(read.release, []).append(host)
    lines = {release_line(r) for r in runs}
    if not runs:
        return new_cluster, ""
    if len(lines) == 1:
        return kafka_release(False, max(runs, key=release_key)), ""
    running = "; ".join(f"{', '.join(hosts)}: {r}" for r, hosts in sorted(runs.items()))
    return new_cluster, (
        f"the Kafka nodes run releases of different lines ({running}) and the inventory names no "
        f"kafka_broker_version for them, so kafkaform cannot tell which line the cluster is on "
        f"({cite('KF-05')}). Set kafka_broker_version in the inventory's group_vars/all to the "
        "release the cluster runs, or to the one it upgrades to, and run again.")


def _controllers_first(cluster: Mapping[str, Any], declared: Mapping[str, str],
                       release: str) -> str:
    """KR-12 on the releases the run installs, the taken line included (the preflight sees only
    what the inventory names)."""
    controllers = [str(c["host"]) for c in cluster.get("controllers", ())]
    if not controllers:
        return ""

    def runs(host: str) -> str:
        return declared.get(host) or release

    oldest = min((runs(h) for h in controllers), key=release_key)
    newer = [str(b["host"]) for b in cluster.get("brokers", ())
             if b["host"] not in controllers and release_key(runs(b["host"])) > release_key(oldest)]
    if not newer:
        return ""
    return (f"{', '.join(newer)} would run a newer Kafka than the controllers' {oldest} "
            f"({cite('KR-12')}). Raise kafka_broker_version on every controller first (a run "
            "rolls them), then on the brokers.")


def running_cluster(cluster: Mapping[str, Any], reads: Mapping[str, KafkaBrokerHost],
                    declared: Mapping[str, str]) -> RunningCluster:
    """The cluster whose nodes were read (``reads``, by host; ``declared``: each Kafka node's
    kafka_broker_version, empty or missing where the inventory names none)."""
    cluster_id, take, id_problem = _held_ids(cluster, reads)
    release, release_problem = _running_release(cluster, reads, declared)
    order_problem = "" if release_problem else _controllers_first(cluster, declared, release)
    switch_problem = quorum.switch_problem(cluster, {h: r.running_config
                                                     for h, r in reads.items()})
    controllers = {str(c["host"]) for c in cluster.get("controllers", ())}
    return RunningCluster(cluster_id, take, release, " ".join(
        p for p in (id_problem, release_problem, order_problem, switch_problem) if p),
        quorum_formed=any(r.metadata_log_written for h, r in reads.items() if h in controllers),
        serving_brokers=tuple(str(b["host"]) for b in cluster.get("brokers", ())
                              if b["host"] in reads and reads[b["host"]].service_running))
