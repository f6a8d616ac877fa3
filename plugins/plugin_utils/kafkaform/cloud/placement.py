"""Placement: which zone each host of a spec lives in, and its ids. Pure, no AWS call.

ZooKeeper members, KRaft controllers and brokers go round-robin over the spec's zones in the order
listed: with at least 3 zones, round-robin puts at most ceil(N/3) of N voters in one zone, below
the majority N//2+1, so losing a zone never loses the quorum (ZK-07, KR-03). Brokers round-robin
so every zone holds a share of every partition's replicas (rack-aware placement, RA-02). Every
host's rack is its zone.

A larger count keeps every host where it was and adds the next ones zone by zone, from where the
round stopped: host N always lives in zone (N - 1) mod zones, so growing a group never moves a
host, and the new brokers spread over the zones as evenly as the count allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import model
from ..cloud.spec import SPEC_GROUPS, Spec

#: Short host-name stems per group: zk1, ctl1, kafka1, spark-master1, spark-worker1, monitor1.
STEMS = {
    model.ZOOKEEPER: "zk",
    model.KAFKA_CONTROLLER: "ctl",
    model.KAFKA_BROKER: "kafka",
    model.SPARK_MASTER: "spark-master",
    model.SPARK_WORKER: "spark-worker",
    model.MONITORING: "monitor",
}

#: A KRaft controller's node id is this plus its number (ctl1: 3001), apart from the brokers'
#: ids 1..N (a spec holds at most 100 hosts a group), as the KRaft lab numbers them (KR-02).
CONTROLLER_ID_BASE = 3000


@dataclass(frozen=True)
class Host:
    """One planned host: its inventory name (the ``kafkaform:id`` tag), group, zone and ids."""

    name: str
    group: str
    zone: str
    instance_type: str
    zookeeper_id: int | None = None
    kafka_broker_id: int | None = None
    kafka_node_id: int | None = None


def round_robin(count: int, zones: Sequence[str]) -> list[str]:
    """The zone of each of ``count`` hosts, cycling through ``zones`` in order."""
    return [zones[index % len(zones)] for index in range(count)]


def place(spec: Spec) -> tuple[Host, ...]:
    """Every host of the spec, in group order, with zone and ids (ids 1..N per group).

    + spec: the cluster spec; its zones' order decides which zone gets the first host

    Example:
        [(h.name, h.zone) for h in place(spec)][:2]  # [("zk1", "eu-west-1a"), ("zk2", ...)]
    """
    zones = [zone.name for zone in spec.zones]
    hosts: list[Host] = []
    for group_name in SPEC_GROUPS:
        group = spec.group(group_name)
        if group is None:
            continue
        for index, zone in enumerate(round_robin(group.count, zones)):
            number = index + 1
            hosts.append(Host(
                name=f"{STEMS[group_name]}{number}",
                group=group_name,
                zone=zone,
                instance_type=group.instance_type,
                zookeeper_id=number if group_name == model.ZOOKEEPER else None,
                kafka_broker_id=number if group_name == model.KAFKA_BROKER else None,
                kafka_node_id=(CONTROLLER_ID_BASE + number
                               if group_name == model.KAFKA_CONTROLLER else None),
            ))
    return tuple(hosts)
