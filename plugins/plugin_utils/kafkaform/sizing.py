"""The capacity plan of ``kafkaform plan``: the brokers, disks, memory, network and partitions a
workload needs, each figure with its formula, its numbers and its rule (CP-01 to CP-06).

Pure: a :class:`Workload` in, a :class:`Plan` out; :func:`shortfalls` compares a plan with what an
inventory holds (its brokers' racks and its declared topics, as plain data). The formulas are the
ones *Kafka: The Definitive Guide* works through (ch. 2, "Hardware Selection", "How to Choose the
Number of Partitions" and "How Many Brokers?"; ch. 5, "Partition Allocation") and the Apache Kafka
documentation's "Hardware and OS" (the page cache). Units are decimal, as the book's arithmetic
is: 1 TB = 1,000 GB = 1,000,000 MB.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from .checks.finding import Finding, Severity
from .defaults import role_default
from .rules import cite

MB_PER_GB = 1_000
#: The share of a data disk that stays free: a log directory that fills goes offline with every
#: replica on it (OP-07: moves leave it free; MO-16: status and the alert rules say when it is
#: not).
DISK_FREE_MIN = 0.1
MB_PER_TB = 1_000_000
#: 1 Gbit/s carries 125 MB/s.
MB_S_PER_GBIT_S = 125
#: The seconds of writes the page cache should hold: "buffer for 30 seconds and compute your memory
#: need as write_throughput*30" (Apache Kafka documentation, "Hardware and OS").
PAGE_CACHE_SECONDS = 30
MODES = ("zookeeper", "kraft")
#: A broker host's memory when none is given: the kafka_broker role's 5 GB heap is sized for
#: it (JV-03).
DEFAULT_RAM_GB = 64.0


@dataclass(frozen=True)
class PartitionLimits:
    """The most partition replicas a broker, and a cluster, should hold (CP-04)."""

    per_broker: int
    #: None: the mode has no cluster-wide limit.
    per_cluster: int | None


#: ZooKeeper mode: 4,000 replicas a broker, 200,000 a cluster (Confluent's "Apache Kafka Supports
#: 200K Partitions Per Cluster", restated by KIP-578). KRaft lifts the cluster-wide limit, which
#: came from ZooKeeper and the controller's failover (KIP-500); what a replica costs its broker
#: (open files, memory maps, log recovery after a crash) stays, and with it the per-broker limit.
MODE_LIMITS = {"zookeeper": PartitionLimits(4_000, 200_000), "kraft": PartitionLimits(4_000, None)}


def _role_heap_gb() -> float:
    """The heap the kafka_broker role gives a broker (kafka_broker_heap_mb, JV-03), in GB."""
    return float(role_default("kafka_broker_heap_mb")) / 1024


@dataclass(frozen=True)
class Workload:
    """What the cluster must carry, and what one broker has. Rates in MB/s at the peak."""

    ingress_mb_s: float
    record_bytes: int = 1_000
    retention_hours: float = 168.0  # Kafka's log.retention.hours default (KB-10)
    replication_factor: int = 3
    consumer_groups: int = 1
    #: The fraction of each broker's network left free at the peak (CP-02).
    headroom: float = 0.3
    #: The fraction of each broker's disks the retained data may fill (CP-01).
    target_disk_fill: float = 0.7
    #: The book's "at least 10% overhead for other files" (CP-01).
    overhead: float = 1.1
    disk_tb: float = 2.0
    disks_per_broker: int = 1
    nic_gbps: float = 10.0
    ram_gb: float = DEFAULT_RAM_GB
    heap_gb: float = field(default_factory=_role_heap_gb)
    producer_mb_s: float = 10.0
    consumer_mb_s: float = 50.0
    mode: str = "kraft"
    #: None: the mode's limit (MODE_LIMITS).
    broker_partition_limit: int | None = None
    cluster_partition_limit: int | None = None

    @property
    def limits(self) -> PartitionLimits:
        mode = MODE_LIMITS[self.mode]
        return PartitionLimits(self.broker_partition_limit or mode.per_broker,
                               self.cluster_partition_limit or mode.per_cluster)

    @property
    def records_per_second(self) -> float:
        return self.ingress_mb_s * 1_000_000 / self.record_bytes

    def limits_text(self) -> str:
        """The mode's partition limits, as the plan states them (CP-04)."""
        limits = self.limits
        cluster = (f"{fmt(limits.per_cluster)} a cluster" if limits.per_cluster
                   else "no cluster-wide limit")
        return (f"{self.mode} mode: {fmt(limits.per_broker)} partition replicas a broker, "
                f"{cluster}  [{cite('CP-04')}]")


def default(name: str) -> Any:
    """The value a Workload takes for ``name`` when it is not given (None for the ingress, which
    must be given, and for the partition limits, the mode's then)."""
    spec = next(f for f in fields(Workload) if f.name == name)
    if spec.default is not MISSING:
        return spec.default
    return None if spec.default_factory is MISSING else spec.default_factory()


@dataclass(frozen=True)
class Bound:
    """The values a numeric input takes: above or at least ``low``, below or at most ``high``."""

    low: float | None = None
    high: float | None = None
    above: bool = False  # strictly above low
    below: bool = False  # strictly below high
    whole: bool = False

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a whole number" if self.whole else "must be a number"
        if self.whole and not isinstance(value, int):
            return "must be a whole number"
        if not math.isfinite(value):
            return "must be a finite number"
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return f"must be {'above' if self.above else 'at least'} {fmt(self.low)}"
        if self.high is not None and (value >= self.high if self.below else value > self.high):
            return f"must be {'below' if self.below else 'at most'} {fmt(self.high)}"
        return None


@dataclass(frozen=True)
class Input:
    """A numeric workload input: its bound, what it means (for help and fixes) and an example."""

    bound: Bound
    meaning: str
    example: str


POSITIVE = Bound(0, above=True)
COUNT = Bound(1, whole=True)
FRACTION = Bound(0, 1, below=True)

#: Every numeric input of a Workload.
INPUTS: dict[str, Input] = {
    "ingress_mb_s": Input(POSITIVE, "the rate producers write at the peak, in MB/s", "50"),
    "record_bytes": Input(COUNT, "the average record size, in bytes", "1000"),
    "retention_hours": Input(POSITIVE, "how long records are kept, in hours", "168"),
    "replication_factor": Input(COUNT, "the topics' replication factor", "3"),
    "consumer_groups": Input(Bound(0, whole=True), "how many consumer groups read everything",
                             "2"),
    "headroom": Input(FRACTION, "the fraction of each broker's network left free at the peak",
                      "0.3"),
    "target_disk_fill": Input(Bound(0, 1, above=True),
                              "the fraction of the disks the retained data may fill", "0.7"),
    "overhead": Input(Bound(1), "the factor for index and other files on the data disks", "1.1"),
    "disk_tb": Input(POSITIVE, "the size of one data disk, in TB", "4"),
    "disks_per_broker": Input(COUNT, "the data disks one broker holds", "4"),
    "nic_gbps": Input(POSITIVE, "one broker's network bandwidth, in Gbit/s", "10"),
    "ram_gb": Input(POSITIVE, "one broker's memory, in GB", "64"),
    "heap_gb": Input(POSITIVE, "the broker's JVM heap, in GB", "5"),
    "producer_mb_s": Input(POSITIVE, "what one partition takes from a producer, in MB/s", "10"),
    "consumer_mb_s": Input(POSITIVE, "what one consumer reads from one partition, in MB/s", "50"),
    "broker_partition_limit": Input(COUNT, "the most partition replicas one broker holds", "4000"),
    "cluster_partition_limit": Input(COUNT, "the most partition replicas the cluster holds",
                                     "200000"),
}


def input_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(input, problem)`` for every value a Workload cannot take; the caller names the input as
    its user gave it (an option, a file's key)."""
    problems = [(name, problem) for name, spec in INPUTS.items()
                if values.get(name) is not None and (problem := spec.bound.problem(values[name]))]
    if values.get("mode", MODES[-1]) not in MODES:
        problems.append(("mode", f"must be {' or '.join(MODES)}"))
    if not {"ram_gb", "heap_gb"} & {name for name, _problem in problems}:
        problems += _memory_problems(values)
    return problems


def _memory_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A heap that leaves the page cache nothing of the broker's memory (CP-05)."""
    ram = values.get("ram_gb") or DEFAULT_RAM_GB
    heap = values.get("heap_gb") or _role_heap_gb()
    if ram > heap:
        return []
    if values.get("ram_gb") is None:
        return [("heap_gb", f"must be below the memory ({fmt(ram)} GB) to leave some for the "
                            "page cache")]
    return [("ram_gb", f"must be above the heap ({fmt(heap)} GB) to leave some for the page "
                       "cache")]


def fmt(value: float) -> str:
    """A number as the plan prints it: thousands separated, at most two decimals."""
    text = f"{value:,.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def ceil_ratio(numerator: float, denominator: float) -> int:
    """``ceil(numerator / denominator)``, blind to the float noise of a ratio that is whole
    (10 TB over 2 TB must be 5 brokers, not 6)."""
    return math.ceil(round(numerator / denominator, 9))


@dataclass(frozen=True)
class Figure:
    """One figure of the plan: ``name = formula = numbers = value unit``, and the rule it meets."""

    key: str
    name: str
    formula: str
    numbers: str
    value: float
    unit: str
    rule: str

    def text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        result = "" if self.numbers == fmt(self.value) else f" = {fmt(self.value)}{unit}"
        return (f"{self.name} = {self.formula}\n{' ' * len(self.name)} = {self.numbers}{result}"
                f"  [{self.rule}]")


@dataclass(frozen=True)
class Plan:
    workload: Workload
    brokers: int
    #: The bounds on the broker count; brokers is the largest.
    bounds: tuple[Figure, ...]
    #: The figures by section (brokers, storage, network, memory, partitions), in print order.
    sections: Mapping[str, tuple[Figure, ...]]

    @property
    def bound_by(self) -> tuple[Figure, ...]:
        return tuple(f for f in self.bounds if f.value == self.brokers)

    def value(self, key: str) -> float:
        return next(f.value for figures in self.sections.values() for f in figures
                    if f.key == key)

    def to_dict(self) -> dict[str, Any]:
        limits = self.workload.limits
        return {"mode": self.workload.mode, "workload": asdict(self.workload),
                "limits": {"per_broker": limits.per_broker, "per_cluster": limits.per_cluster},
                "brokers": self.brokers,
                "bound_by": [f.key.removesuffix("_bound") for f in self.bound_by],
                "sections": {name: [asdict(f) for f in figures]
                             for name, figures in self.sections.items()}}


def _mb_s(value: float) -> str:
    return f"{fmt(value)} MB/s"


def disk_figures(w: Workload) -> tuple[Figure, Figure, Figure]:
    """What the cluster keeps, what its disks must hold, and the brokers that takes (CP-01)."""
    retained = w.ingress_mb_s * w.retention_hours * 3600 / MB_PER_TB
    disk = retained * w.replication_factor * w.overhead / w.target_disk_fill
    storage = w.disk_tb * w.disks_per_broker
    rule = cite("CP-01")
    return (
        Figure("retained_tb", "retained", "ingress x retention",
               f"{_mb_s(w.ingress_mb_s)} x {fmt(w.retention_hours)} h", retained, "TB", rule),
        Figure("disk_tb", "disk", "ingress x retention x replication x overhead / target fill",
               f"{_mb_s(w.ingress_mb_s)} x {fmt(w.retention_hours)} h x {w.replication_factor} x "
               f"{fmt(w.overhead)} / {fmt(w.target_disk_fill)}", disk, "TB", rule),
        Figure("disk_bound", "disk-bound brokers",
               "ceil(disk / (disk size x disks per broker))",
               f"ceil({fmt(disk)} TB / ({fmt(w.disk_tb)} TB x {w.disks_per_broker}))",
               ceil_ratio(disk, storage), "", rule),
    )


def nic_mb_s(w: Workload) -> float:
    """What one broker's network carries in each direction at the peak, the headroom kept free."""
    return w.nic_gbps * MB_S_PER_GBIT_S * (1 - w.headroom)


def network_figures(w: Workload) -> tuple[Figure, Figure, Figure]:
    """The writes into the brokers, the reads out of them, and the brokers that takes (CP-02).

    Every replica's broker receives the writes; the leader sends them to each of its followers
    and to each consumer group. A NIC is full duplex: in and out are bounded apart.
    """
    ingress, rf, groups = w.ingress_mb_s, w.replication_factor, w.consumer_groups
    writes = ingress * rf
    egress = ingress * (groups + rf - 1)
    nic = nic_mb_s(w)
    rule = cite("CP-02")
    return (
        Figure("writes_mb_s", "writes", "ingress x replication",
               f"{_mb_s(ingress)} x {rf}", writes, "MB/s", rule),
        Figure("egress_mb_s", "egress", "ingress x (consumer groups + replication - 1)",
               f"{_mb_s(ingress)} x ({groups} + {rf} - 1)", egress, "MB/s", rule),
        Figure("network_bound", "network-bound brokers",
               "ceil(max(writes, egress) / (NIC x (1 - headroom)))",
               f"ceil(max({_mb_s(writes)}, {_mb_s(egress)}) / ({fmt(w.nic_gbps)} Gbit/s x "
               f"(1 - {fmt(w.headroom)})))", ceil_ratio(max(writes, egress), nic), "", rule),
    )


def memory_bound(w: Workload) -> Figure:
    """The brokers whose memory beside the heap holds 30 seconds of the writes (CP-05)."""
    cache_gb = w.ingress_mb_s * w.replication_factor * PAGE_CACHE_SECONDS / MB_PER_GB
    free_gb = w.ram_gb - w.heap_gb
    return Figure("memory_bound", "memory-bound brokers",
                  f"ceil(writes x {PAGE_CACHE_SECONDS} s / (RAM - heap))",
                  f"ceil({_mb_s(w.ingress_mb_s * w.replication_factor)} x "
                  f"{PAGE_CACHE_SECONDS} s / ({fmt(w.ram_gb)} GB - {fmt(w.heap_gb)} GB))",
                  ceil_ratio(cache_gb, free_gb), "", cite("CP-05"))


def partitions_needed(w: Workload) -> Figure:
    """Enough partitions for the peak at the slower of the producer's and the consumer's rate per
    partition (CP-03)."""
    ingress = w.ingress_mb_s
    return Figure("partitions_needed", "partitions",
                  "ceil(max(target / producer rate, target / consumer rate))",
                  f"ceil(max({_mb_s(ingress)} / {_mb_s(w.producer_mb_s)}, {_mb_s(ingress)} / "
                  f"{_mb_s(w.consumer_mb_s)}))",
                  max(1, ceil_ratio(max(ingress / w.producer_mb_s, ingress / w.consumer_mb_s),
                                    1)), "", cite("CP-03"))


def partition_bound(w: Workload, partitions: int) -> Figure:
    """The brokers that hold the partitions' replicas within the per-broker limit (CP-04)."""
    limit = w.limits.per_broker
    return Figure("partition_bound", "partition-bound brokers",
                  "ceil(partitions x replication / replicas per broker limit)",
                  f"ceil({partitions} x {w.replication_factor} / {fmt(limit)})",
                  ceil_ratio(partitions * w.replication_factor, limit), "", cite("CP-04"))


def replication_bound(w: Workload) -> Figure:
    """One broker for each replica of a partition (CP-06)."""
    return Figure("replication_bound", "replication-bound brokers", "replication factor",
                  str(w.replication_factor), w.replication_factor, "", cite("CP-06"))


def replicas_per_broker(partitions: int, replication_factor: int, brokers: int) -> float:
    """The replicas each broker holds when Kafka spreads them evenly (the book's ch. 5,
    "Partition Allocation")."""
    return partitions * replication_factor / brokers


def per_broker_figures(w: Workload, brokers: int, disk_tb: float) -> dict[str, tuple[Figure, ...]]:
    """What each of ``brokers`` holds and carries, by section."""
    rf, per_broker = w.replication_factor, disk_tb / brokers
    writes, egress = w.ingress_mb_s * rf, w.ingress_mb_s * (w.consumer_groups + rf - 1)
    cache = writes / brokers * PAGE_CACHE_SECONDS / MB_PER_GB
    storage = (
        Figure("storage_per_broker_tb", "storage per broker", "disk / brokers",
               f"{fmt(disk_tb)} TB / {brokers}", per_broker, "TB", cite("CP-01")),
        Figure("disks_per_broker", "disks per broker", "ceil(storage per broker / disk size)",
               f"ceil({fmt(per_broker)} TB / {fmt(w.disk_tb)} TB)",
               max(1, ceil_ratio(per_broker, w.disk_tb)), f"of {w.disks_per_broker}",
               cite("CP-01")))
    network = (
        Figure("in_per_broker_mb_s", "in per broker", "writes / brokers",
               f"{_mb_s(writes)} / {brokers}", writes / brokers, "MB/s", cite("CP-02")),
        Figure("out_per_broker_mb_s", "out per broker", "egress / brokers",
               f"{_mb_s(egress)} / {brokers}", egress / brokers, "MB/s", cite("CP-02")))
    memory = (
        Figure("page_cache_gb", "page cache per broker",
               f"writes / brokers x {PAGE_CACHE_SECONDS} s",
               f"{_mb_s(writes)} / {brokers} x {PAGE_CACHE_SECONDS} s", cache, "GB",
               cite("CP-05")),
        Figure("memory_per_broker_gb", "memory per broker", "heap + page cache",
               f"{fmt(w.heap_gb)} GB + {fmt(cache)} GB", w.heap_gb + cache,
               f"GB of {fmt(w.ram_gb)} GB", cite("CP-05")))
    return {"storage": storage, "network": network, "memory": memory}


def partition_figures(w: Workload, brokers: int, needed: int) -> tuple[Figure, Figure]:
    """Partitions per topic, a multiple of the broker count so every broker leads as many (the
    book's ch. 2 and KB-09), and the replicas each broker then holds (CP-04)."""
    per_topic = ceil_ratio(needed, brokers) * brokers
    return (
        Figure("partitions_per_topic", "partitions per topic",
               "ceil(partitions / brokers) x brokers", f"ceil({needed} / {brokers}) x {brokers}",
               per_topic, "", cite("CP-03")),
        Figure("replicas_per_broker", "replicas per broker",
               "partitions per topic x replication / brokers",
               f"{per_topic} x {w.replication_factor} / {brokers}",
               replicas_per_broker(per_topic, w.replication_factor, brokers),
               f"of {fmt(w.limits.per_broker)}", cite("CP-04")),
    )


def plan(w: Workload) -> Plan:
    """The plan for ``w``: the broker count is the largest of its bounds."""
    retained, disk, disk_bound = disk_figures(w)
    writes, egress, network_bound = network_figures(w)
    needed = partitions_needed(w)
    bounds = (disk_bound, network_bound, memory_bound(w),
              partition_bound(w, int(needed.value)), replication_bound(w))
    brokers = int(max(f.value for f in bounds))
    each = per_broker_figures(w, brokers, disk.value)
    binding = next(f for f in bounds if f.value == brokers)
    names = ", ".join(f.name.removesuffix(" brokers") for f in bounds)
    total = Figure("brokers", "brokers", f"max({names})",
                   f"max({', '.join(fmt(f.value) for f in bounds)})", brokers, "", binding.rule)
    sections = {"brokers": (*bounds, total),
                "storage": (retained, disk, *each["storage"]),
                "network": (writes, egress, *each["network"]),
                "memory": each["memory"],
                "partitions": (needed, *partition_figures(w, brokers, int(needed.value)))}
    return Plan(w, brokers, bounds, sections)


@dataclass(frozen=True)
class Deployed:
    """What an inventory holds, as a plan is compared with it: each kafka_broker host's rack (None
    when unset) and the declared topics (kafka_topics)."""

    brokers: Mapping[str, str | None]
    topics: Sequence[Mapping[str, Any]] = ()


def declared_replicas(deployed: Deployed, replication_factor: int) -> int:
    """The partition replicas the declared topics hold; a topic without its own replication
    factor has the plan's. Malformed entries are the preflight's to report (TR-06)."""
    total = 0
    for topic in deployed.topics:
        partitions = topic.get("partitions")
        rf = topic.get("replication_factor", replication_factor)
        if isinstance(partitions, int) and isinstance(rf, int) and partitions > 0 and rf > 0:
            total += partitions * rf
    return total


def _broker_count(p: Plan, deployed: Deployed, severity: Severity) -> Iterator[Finding]:
    have = len(deployed.brokers)
    if have < p.brokers:
        bound = p.bound_by[0]
        yield Finding(bound.rule, f"the kafka_broker group has {have} broker(s), the plan needs "
                      f"{p.brokers} ({bound.name}: {bound.numbers})",
                      f"add {p.brokers - have} broker(s) to the kafka_broker group, or plan with "
                      "the brokers' real disks, network and memory",
                      tuple(deployed.brokers), severity)


def _racks(p: Plan, deployed: Deployed, severity: Severity) -> Iterator[Finding]:
    racks = sorted({rack for rack in deployed.brokers.values() if rack})
    rf = p.workload.replication_factor
    if deployed.brokers and len(racks) < rf:
        named = f" ({', '.join(racks)})" if racks else ""
        yield Finding(cite("CP-06"), f"the brokers span {len(racks)} rack(s){named}, fewer than "
                      f"the replication factor {rf}: some partitions keep two replicas in one "
                      "rack",
                      f"spread the brokers over at least {rf} racks (set rack on each broker)",
                      tuple(deployed.brokers), severity)


def _topic(p: Plan, deployed: Deployed, topic: str, severity: Severity) -> Iterator[Finding]:
    needed, per_topic = int(p.value("partitions_needed")), int(p.value("partitions_per_topic"))
    found = [t for t in deployed.topics if t.get("name") == topic]
    partitions = found[0].get("partitions") if found else None
    if not found:
        yield Finding(cite("CP-03"), f"topic {topic} is not declared in kafka_topics",
                      f"declare it with partitions: {per_topic}", (), severity)
    elif isinstance(partitions, int) and partitions < needed:
        yield Finding(cite("CP-03"), f"topic {topic} has {partitions} partitions, the workload "
                      f"needs at least {needed}", f"set its partitions to {per_topic} in "
                      "kafka_topics (a multiple of the brokers; partitions only grow, TR-05)",
                      (), severity)


def _replica_limits(p: Plan, deployed: Deployed, severity: Severity) -> Iterator[Finding]:
    limits, brokers = p.workload.limits, len(deployed.brokers)
    total = declared_replicas(deployed, p.workload.replication_factor)
    mode = f"{p.workload.mode} mode"
    if brokers and total / brokers > limits.per_broker:
        yield Finding(cite("CP-04"), f"the declared topics hold {fmt(total)} partition replicas, "
                      f"{fmt(total / brokers)} on each of {brokers} brokers, above the "
                      f"{fmt(limits.per_broker)} a broker holds in {mode}",
                      f"add brokers (at least {ceil_ratio(total, limits.per_broker)}), or declare "
                      "fewer partitions", tuple(deployed.brokers), severity)
    if limits.per_cluster is not None and total > limits.per_cluster:
        yield Finding(cite("CP-04"), f"the declared topics hold {fmt(total)} partition replicas, "
                      f"above the {fmt(limits.per_cluster)} a cluster holds in {mode}",
                      "declare fewer partitions or split the topics over clusters (in KRaft "
                      "mode the cluster-wide limit is lifted)", (), severity)


def shortfalls(p: Plan, deployed: Deployed, topic: str | None = None,
               severity: Severity = "warning") -> list[Finding]:
    """Where ``deployed`` falls short of ``p``: too few brokers or racks, the workload's topic with
    too few partitions, more replicas than the mode's limits."""
    found = [*_broker_count(p, deployed, severity), *_racks(p, deployed, severity)]
    if topic is not None:
        found += _topic(p, deployed, topic, severity)
    return found + list(_replica_limits(p, deployed, severity))
