"""What an inventory's layout can lose (the TP rules): its racks with their hosts and roles, how
many hosts its quorums and its partitions' replicas can lose, and for each rack whether the
cluster outlives losing all of it. Pure: an inventory view in, facts out; no host is touched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import model
from .cli import InputError
from .rack_placement import rack_share
from .rules import cite

#: Every role a host may have, in the order the output lists them, and how an operator names it.
ROLE_NAMES = {model.ZOOKEEPER: "ZooKeeper", model.KAFKA_CONTROLLER: "KRaft controller",
              model.KAFKA_BROKER: "Kafka broker", model.SPARK_MASTER: "Spark master",
              model.SPARK_WORKER: "Spark worker", model.MONITORING: "monitoring"}
#: The column of the hosts whose inventory sets no rack: not a failure domain kafkaform knows.
NO_RACK = "no rack"
#: What losing a rack without quorum members or brokers does to them.
NOTHING_THERE = "no quorum member or broker there"

QUORUM_RULE = cite("TP-01")
HOSTS_RULE = cite("TP-02")
RACK_RULE = cite("TP-03")
#: Rules this module names but does not check (the preflight does).
UNRACKED_RULE, TOO_FEW_BROKERS_RULE = "RA-01", "TR-01"


@dataclass(frozen=True)
class Host:
    name: str
    roles: tuple[str, ...]


@dataclass(frozen=True)
class Rack:
    """A column of the layout: a rack (or :data:`NO_RACK`) and its hosts in inventory order."""

    name: str
    hosts: tuple[Host, ...]

    @property
    def is_rack(self) -> bool:
        return self.name != NO_RACK


@dataclass(frozen=True)
class Quorum:
    """A majority quorum (the ZooKeeper ensemble, the KRaft controllers): n voters, majority
    floor(n/2) + 1, so any floor((n-1)/2) can fail (TP-01)."""

    name: str
    voters: int
    by_rack: Mapping[str, int]

    @property
    def majority(self) -> int:
        return self.voters // 2 + 1

    @property
    def can_fail(self) -> int:
        return (self.voters - 1) // 2

    def keeps(self, rack: str) -> int:
        return self.voters - self.by_rack.get(rack, 0)

    def survives(self, rack: str) -> bool:
        return self.keeps(rack) >= self.majority

    def text(self) -> str:
        return (f"{self.name}: {self.voters} voters, majority {self.majority}: any "
                f"{self.can_fail} can fail  [{QUORUM_RULE}]")


@dataclass(frozen=True)
class Replication:
    """The partitions of the brokers' defaults or of one declared topic: RF replicas, writable at
    acks=all while min.insync.replicas of them are in sync (TP-02), and the most replicas of one
    partition each broker rack can hold (TP-03)."""

    name: str
    replication_factor: int
    min_insync: int
    brokers: int
    rack_share: Mapping[str, int]

    @property
    def creatable(self) -> bool:
        """Kafka refuses a replication factor above the broker count (TR-01)."""
        return self.replication_factor <= self.brokers

    @property
    def can_fail(self) -> int:
        """Brokers that can fail at once with every partition writable: RF - min.insync.replicas
        (negative: no acks=all write ever succeeds)."""
        return self.replication_factor - self.min_insync

    def keeps(self, rack: str) -> int:
        return self.replication_factor - self.rack_share.get(rack, 0)

    def writable_without(self, rack: str) -> bool:
        return self.creatable and self.keeps(rack) >= self.min_insync

    @property
    def settings(self) -> str:
        return (f"replication {self.replication_factor}, min.insync.replicas {self.min_insync}")

    def text(self) -> str:
        head = f"{self.name} ({self.settings})"
        if not self.creatable:
            return (f"{head}: Kafka creates none of its partitions, {self.brokers} broker(s) "
                    f"hold at most {self.brokers} replicas  [{TOO_FEW_BROKERS_RULE}]")
        if self.can_fail < 0:
            return f"{head}: no write with acks=all ever succeeds  [{HOSTS_RULE}]"
        return (f"{head}: any {plural(self.can_fail, 'broker')} can fail with every partition "
                f"writable at acks=all  [{HOSTS_RULE}]")


@dataclass(frozen=True)
class Effect:
    """One consequence of losing a rack, and whether the quorum or the partitions outlive it."""

    text: str
    held: bool


@dataclass(frozen=True)
class Verdict:
    """What losing one whole rack does: whether the cluster outlives it (None for the hosts with
    no rack, which kafkaform cannot group), each effect, and the rules cited."""

    rack: str
    can_be_lost: bool | None
    effects: tuple[Effect, ...]
    rules: tuple[str, ...]
    note: str = ""

    @property
    def summary(self) -> str:
        if self.can_be_lost is None:
            return "rack not set"
        return "can be lost" if self.can_be_lost else "cannot be lost"

    def text(self) -> str:
        cited = f"  [{', '.join(self.rules)}]" if self.rules else ""
        if self.can_be_lost is None:
            return f"{self.rack}: {self.note}{cited}"
        effects = "; ".join(e.text for e in self.effects) or NOTHING_THERE
        return f"losing rack {self.rack}: {effects}{cited}"


@dataclass(frozen=True)
class Topology:
    cluster: str
    racks: tuple[Rack, ...]
    quorums: tuple[Quorum, ...]
    replication: tuple[Replication, ...]

    def verdict(self, rack: Rack) -> Verdict:
        if not rack.is_rack:
            return Verdict(rack.name, None, (), (UNRACKED_RULE,),
                           "hosts whose inventory sets no rack: kafkaform cannot tell what fails "
                           "with them; each counts as one host in the margins")
        effects, rules = [], []
        for quorum in self.quorums:
            if quorum.by_rack.get(rack.name):
                held = quorum.survives(rack.name)
                majority = "majority held" if held else "majority lost"
                effects.append(Effect(f"{quorum.name} keeps {quorum.keeps(rack.name)} of "
                                      f"{quorum.voters} ({majority})", held))
                rules.append(QUORUM_RULE)
        broker_effects = self._broker_effects(rack.name)
        if broker_effects:
            effects += broker_effects
            rules.append(RACK_RULE)
        elif self.replication:
            effects.append(Effect("no broker there: every partition keeps all its replicas",
                                  True))
        return Verdict(rack.name, all(e.held for e in effects), tuple(effects),
                       tuple(dict.fromkeys(rules)))

    def _broker_effects(self, rack: str) -> list[Effect]:
        """One effect per group of partitions that lose alike, e.g. "brokers keep 1 of 3
        replicas of every partition, below min.insync.replicas 2: writes with acks=all stop"."""
        hit = [r for r in self.replication if r.rack_share.get(rack)]
        groups: dict[tuple[int, int, int, bool], list[str]] = {}
        for r in hit:
            key = (r.keeps(rack), r.replication_factor, r.min_insync, r.creatable)
            groups.setdefault(key, []).append(r.name)
        effects = []
        for (keeps, rf, isr, creatable), names in groups.items():
            whose = "every partition" if len(groups) == 1 else f"every partition of {_and(names)}"
            if not creatable:
                effects.append(Effect(f"{_and(names)}: never created (replication {rf} above "
                                      "the brokers)", False))
            elif keeps >= isr:
                effects.append(Effect(f"brokers keep {keeps} of {rf} replicas of {whose} "
                                      f"(min.insync.replicas {isr}: still writable)", True))
            else:
                effects.append(Effect(f"brokers keep {keeps} of {rf} replicas of {whose}, below "
                                      f"min.insync.replicas {isr}: writes with acks=all stop",
                                      False))
        return effects

    @property
    def hosts_can_fail(self) -> int:
        """Hosts of the quorums and brokers that can fail at once, whichever they are."""
        margins = [q.can_fail for q in self.quorums] + [r.can_fail for r in self.replication]
        return max(min(margins), 0) if margins else 0

    @property
    def rack_names(self) -> list[str]:
        return [rack.name for rack in self.racks if rack.is_rack]

    def racks_can_be_lost(self) -> list[str]:
        return [rack.name for rack in self.racks if self.verdict(rack).can_be_lost]

    def margins_text(self) -> str:
        """The cluster's margins in one line: the picture's title and the text's headline."""
        hosts = f"any {plural(self.hosts_can_fail, 'host')} can fail"
        if not self.rack_names:
            return f"{hosts}; no host sets a rack"
        spared = self.racks_can_be_lost()
        lost = [name for name in self.rack_names if name not in spared]
        if not lost:
            return f"{hosts}; any one of its {len(spared)} racks can be lost"
        racks = f"racks that can be lost: {_and(spared)}" if spared else "no rack can be lost"
        return f"{hosts}; {racks}, not {_and(lost, 'or')}" if spared else f"{hosts}; {racks}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "racks": [{"name": rack.name, "is_rack": rack.is_rack,
                       "hosts": [{"name": h.name, "roles": list(h.roles)} for h in rack.hosts],
                       "can_be_lost": (verdict := self.verdict(rack)).can_be_lost,
                       "verdict": verdict.text(), "rules": list(verdict.rules)}
                      for rack in self.racks],
            "quorums": [{"name": q.name, "voters": q.voters, "majority": q.majority,
                         "can_fail": q.can_fail, "by_rack": dict(q.by_rack),
                         "rule": QUORUM_RULE} for q in self.quorums],
            "replication": [{"name": r.name, "replication_factor": r.replication_factor,
                             "min_insync_replicas": r.min_insync, "brokers": r.brokers,
                             "creatable": r.creatable, "brokers_can_fail": r.can_fail,
                             "most_replicas_in_one_rack": dict(r.rack_share),
                             "rules": [HOSTS_RULE, RACK_RULE]} for r in self.replication],
            "margins": {"hosts_can_fail": self.hosts_can_fail,
                        "racks_can_be_lost": self.racks_can_be_lost(),
                        "text": self.margins_text()},
        }


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _and(names: Sequence[str], conjunction: str = "and") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def _count(value: Any, where: str, fix: str) -> int:
    number = model.as_int(value)
    if number is None or number < 1:
        raise InputError(f"{where} is {value!r}, not a positive integer. Fix: {fix}")
    return number


def _racks(view: model.InventoryView) -> tuple[Rack, ...]:
    """The racks in name order, each with its hosts; the hosts with no rack last."""
    cluster = view.cluster_hosts()
    listed = set(cluster)
    hosts = [*cluster, *(h for h in view.members(model.MONITORING) if h not in listed)]
    members = {role: set(view.members(role)) for role in ROLE_NAMES}
    columns: dict[str, list[Host]] = {}
    for host in hosts:
        roles = tuple(role for role in ROLE_NAMES if host in members[role])
        columns.setdefault(model.rack_of(view, host) or NO_RACK, []).append(Host(host, roles))
    order = sorted(columns, key=lambda name: (name == NO_RACK, name))
    return tuple(Rack(name, tuple(columns[name])) for name in order)


def _quorums(view: model.InventoryView) -> tuple[Quorum, ...]:
    found = []
    for group, name in ((model.ZOOKEEPER, "ZooKeeper"),
                        (model.KAFKA_CONTROLLER, "the KRaft quorum")):
        members = view.members(group)
        if members:
            by_rack = Counter(model.rack_of(view, host) or NO_RACK for host in members)
            found.append(Quorum(name, len(members), dict(by_rack)))
    return tuple(found)


def _topics(view: model.InventoryView, brokers: Sequence[str]) -> list[Mapping[str, Any]]:
    declared = view.var(brokers[0], "kafka_topics", [])
    if not isinstance(declared, list):
        raise InputError(f"{brokers[0]}: kafka_topics is not a list. Fix: declare each topic as "
                         "an entry with name, partitions and replication_factor (see "
                         "inventory/lab/group_vars/all.yml)")
    return [topic for topic in declared if isinstance(topic, Mapping) and topic.get("name")]


def _replication(view: model.InventoryView) -> tuple[Replication, ...]:
    brokers = view.members(model.KAFKA_BROKER)
    if not brokers:
        return ()
    racks = [model.rack_of(view, host) for host in brokers]
    # Without a rack on every broker Kafka places replicas ignoring racks (RA-01): any partition
    # may then have all its replicas in one rack.
    rack_aware = None not in racks
    per_rack = Counter(rack or NO_RACK for rack in racks)
    fix = "set it to a whole number of replicas, e.g. 3"
    default_rf = _count(view.cluster_var("kafka_default_replication_factor"),
                        "kafka_default_replication_factor", fix)
    default_isr = _count(view.cluster_var("kafka_min_insync_replicas"),
                         "kafka_min_insync_replicas", "set it to a whole number, e.g. 2")

    def replication(name: str, rf: int, isr: int) -> Replication:
        share = (rack_share(per_rack, rf) if rack_aware
                 else {rack: min(count, rf) for rack, count in per_rack.items()})
        return Replication(name, rf, isr, len(brokers), share)

    found = [replication("the brokers' defaults", default_rf, default_isr)]
    for topic in _topics(view, brokers):
        name = str(topic["name"])
        configs = topic.get("configs") or {}
        rf = _count(topic.get("replication_factor", default_rf),
                    f"topic {name}: replication_factor", fix)
        isr = _count(configs.get("min.insync.replicas", default_isr) if isinstance(
            configs, Mapping) else default_isr, f"topic {name}: min.insync.replicas",
            "set it to a whole number below the replication factor, e.g. 2")
        found.append(replication(f"topic {name}", rf, isr))
    return tuple(found)


def topology(view: model.InventoryView) -> Topology:
    """The layout of an inventory and what it can lose; raises :class:`InputError` naming a
    replication setting that is not a positive integer."""
    return Topology(str(view.cluster_var("kafka_cluster_name")), _racks(view), _quorums(view),
                    _replication(view))
