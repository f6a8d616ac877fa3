"""The preflight: every rule the inventory must satisfy before any host is touched.

Each rule returns findings, never raises; :func:`check` runs them all so an operator sees every
problem at once. A finding names the host(s), the rule, what is wrong and how to fix it.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Literal

from . import (
    acls,
    catalog,
    formats,
    inputs,
    kraft_migration,
    model,
    secrets,
    security_steps,
    topics,
)
from .contexts import kafka_broker, spark_node, spark_pipeline, zookeeper
from .defaults import (
    CLUSTER_DEFAULTS,
    INPUT_PREFIXES,
    INVENTORY_ROLES,
    OTHER_INPUTS,
    as_bool,
    known_inputs,
    role_default,
    role_options,
    setting,
)
from .model import InventoryView, as_int
from .rules import ID_PATTERN, cite

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    fix: str
    hosts: tuple[str, ...] = ()
    severity: Severity = "error"

    def __post_init__(self) -> None:
        cite(self.rule)  # a finding outside the catalogue is a bug in the check, not in the input

    def text(self) -> str:
        where = ", ".join(self.hosts) if self.hosts else "inventory"
        return f"{self.severity.upper()} {where} [{self.rule}] {self.message}. Fix: {self.fix}."

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["hosts"] = list(self.hosts)
        data["text"] = self.text()
        return data


Rule = Callable[[InventoryView], Iterable[Finding]]


def ensemble_size(view: InventoryView) -> Iterator[Finding]:
    members = view.members(model.ZOOKEEPER)
    size = len(members)
    if size == 0:
        if view.members(model.KAFKA_BROKER) and not view.members(model.KAFKA_CONTROLLER):
            yield Finding(cite("ZK-06"),
                          "the kafka_broker group needs a ZooKeeper ensemble or KRaft controllers, "
                          "and both the zookeeper and the kafka_controller group are empty",
                          "add 3 or 5 hosts to the zookeeper group, or to the kafka_controller "
                          "group for a cluster in KRaft mode")
        return
    ensemble = Quorum("ensemble", "ensemble", "member", "ZooKeeper member",
                      "kafkaform_allow_single_zookeeper")
    yield from odd_quorum(view, members, ensemble, cite("ZK-06"))
    if size > 7 and size % 2 and not as_bool(view.cluster_var("kafkaform_allow_large_ensemble")):
        yield Finding(cite("ZK-06"),
                      f"the ensemble has {size} members; more than 7 slows every write",
                      "use 5 or 7 members, or set kafkaform_allow_large_ensemble: true",
                      tuple(members))


@dataclass(frozen=True)
class Quorum:
    """How findings name a quorum: "the {whole} has 4 {member}s; an even {short} ..."."""

    whole: str
    short: str
    member: str
    single: str
    single_switch: str


def odd_quorum(view: InventoryView, members: list[str], quorum: Quorum,
               rule: str) -> Iterator[Finding]:
    """A majority quorum of an even size tolerates no more failures than one member fewer, and a
    single member none (unless the inventory's development switch allows it)."""
    size = len(members)
    if size % 2 == 0 and size:
        yield Finding(rule,
                      f"the {quorum.whole} has {size} {quorum.member}s; an even {quorum.short} "
                      f"tolerates no more failures than one {quorum.member} fewer",
                      f"use {size - 1} or {size + 1} {quorum.member}s", tuple(members))
    elif size == 1 and not as_bool(view.cluster_var(quorum.single_switch)):
        yield Finding(rule, f"a single {quorum.single} is not fault tolerant",
                      f"use 3 or 5 {quorum.member}s, or set {quorum.single_switch}: true for a "
                      "development cluster", tuple(members))


def unique_ids(view: InventoryView, group: str, key: str, low: int, high: int | None,
               rule: str) -> Iterator[Finding]:
    """Every member of ``group`` has an integer ``key`` within [low, high], unique in the group."""
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"
    holders: dict[int, list[str]] = defaultdict(list)
    for host in view.members(group):
        raw = view.var(host, key)
        value = as_int(raw)
        if raw is None:
            yield Finding(rule, f"{key} is not set", f"set {key} to an integer {span} in "
                          "host_vars; ids are part of a host's identity and never defaulted",
                          (host,))
        elif value is None or value < low or (high is not None and value > high):
            yield Finding(rule, f"{key} is {raw!r}, not an integer {span}",
                          f"set {key} to an unused integer {span}", (host,))
        else:
            holders[value].append(host)
    for value, hosts in sorted(holders.items()):
        if len(hosts) > 1:
            yield Finding(rule, f"{key} {value} is used by {len(hosts)} hosts",
                          f"give each host its own {key}", tuple(hosts))


def zookeeper_ids(view: InventoryView) -> Iterable[Finding]:
    return unique_ids(view, model.ZOOKEEPER, "zookeeper_id", 1, 255, cite("ZK-03"))


#: Kafka's default reserved.broker.max.id: the ids above it are the ones brokers generate.
RESERVED_BROKER_MAX_ID = 1000
#: The highest node.id Kafka accepts (a 32-bit signed integer).
MAX_NODE_ID = 2**31 - 1


def broker_ids(view: InventoryView) -> Iterable[Finding]:
    brokers = view.members(model.KAFKA_BROKER)
    extra = view.var(brokers[0], "kafka_broker_extra_properties", {}) if brokers else {}
    reserved = extra.get("reserved.broker.max.id") if isinstance(extra, dict) else None
    high = as_int(reserved) if reserved is not None else RESERVED_BROKER_MAX_ID
    return unique_ids(view, model.KAFKA_BROKER, "kafka_broker_id", 0, high, cite("KB-02"))


def racks_all_or_none(view: InventoryView) -> Iterator[Finding]:
    hosts = view.members(model.ZOOKEEPER) + view.members(model.KAFKA_BROKER)
    missing = [h for h in dict.fromkeys(hosts) if model.rack_of(view, h) is None]
    if missing and len(missing) < len(dict.fromkeys(hosts)):
        yield Finding(cite("RA-01"),
                      "rack is set on some ZooKeeper members and brokers but not on these",
                      "set rack on every ZooKeeper member and broker (in a cloud: its "
                      "availability zone), or on none", tuple(missing))


def no_rack_majority(view: InventoryView) -> Iterator[Finding]:
    return rack_majority(view, model.ZOOKEEPER, "ZooKeeper members", cite("ZK-07"))


def rack_majority(view: InventoryView, group: str, what: str, rule: str) -> Iterator[Finding]:
    """A rack holding a majority of a quorum's members takes the quorum with it when it fails."""
    members = view.members(group)
    if len(members) < 2:
        return
    by_rack: dict[str, list[str]] = defaultdict(list)
    for host in members:
        rack = model.rack_of(view, host)
        if rack is not None:
            by_rack[rack].append(host)
    majority = len(members) // 2 + 1
    for rack, hosts in sorted(by_rack.items()):
        if len(hosts) >= majority:
            yield Finding(rule,
                          f"rack {rack} holds {len(hosts)} of {len(members)} {what}, a "
                          f"majority: losing that rack loses the quorum",
                          f"move {len(hosts) - majority + 1} of them to other racks so no rack "
                          f"holds more than {majority - 1}", tuple(hosts))


def controller_quorum_size(view: InventoryView) -> Iterator[Finding]:
    return odd_quorum(view, view.members(model.KAFKA_CONTROLLER),
                      Quorum("controller quorum", "quorum", "controller", "KRaft controller",
                             "kafkaform_allow_single_controller"), cite("KR-01"))


def controller_ids(view: InventoryView) -> Iterator[Finding]:
    """Every controller has its own kafka_node_id, which no other host's broker id takes."""
    # Controllers are not ZooKeeper-mode brokers: reserved.broker.max.id does not bound them.
    yield from unique_ids(view, model.KAFKA_CONTROLLER, "kafka_node_id", 0, MAX_NODE_ID,
                          cite("KR-02"))
    broker_hosts: dict[int, list[str]] = defaultdict(list)
    for host in view.members(model.KAFKA_BROKER):
        if (broker_id := as_int(view.var(host, "kafka_broker_id"))) is not None:
            broker_hosts[broker_id].append(host)
    for controller in model.controllers(view):
        # A combined host is one node: its own broker id is its node id.
        own = as_int(view.var(controller.host, "kafka_broker_id"))
        if controller.combined and own is not None and own != controller.node_id:
            yield Finding(cite("KR-02"),
                          f"kafka_node_id {controller.node_id} differs from kafka_broker_id {own}"
                          " on a host that is both controller and broker (one node, one id)",
                          f"set kafka_node_id to {own} on this host", (controller.host,))
        others = [h for h in broker_hosts.get(controller.node_id, ()) if h != controller.host]
        if others:
            yield Finding(cite("KR-02"),
                          f"kafka_node_id {controller.node_id} is also the kafka_broker_id of "
                          f"{', '.join(others)}",
                          "give the controller a kafka_node_id no broker uses",
                          (controller.host, *others))


def controller_racks(view: InventoryView) -> Iterator[Finding]:
    return rack_majority(view, model.KAFKA_CONTROLLER, "KRaft controllers", cite("KR-03"))


def combined_mode(view: InventoryView) -> Iterator[Finding]:
    both = model.combined_hosts(view)
    if as_bool(view.cluster_var("kafka_controller_combined")):
        # The dedicated controllers start first (playbooks/kafka.yml), and must elect a leader
        # before the brokers' play starts the combined ones.
        dedicated = [h for h in view.members(model.KAFKA_CONTROLLER) if h not in both]
        voters = len(view.members(model.KAFKA_CONTROLLER))
        if both and dedicated and len(dedicated) <= voters // 2:
            yield Finding(cite("KR-04"),
                          f"{len(dedicated)} dedicated controllers of {voters} cannot elect a "
                          "leader before the brokers' play starts the combined ones",
                          "make every controller a broker too, or give the dedicated "
                          f"controllers a majority ({voters // 2 + 1} of {voters})",
                          tuple(dedicated))
        return
    if both:
        yield Finding(cite("KR-04"), "runs both a KRaft controller and a broker (combined mode)",
                      "give the controllers hosts of their own, or set kafka_controller_combined: "
                      "true for a small or development cluster", tuple(both))


def controllers_installed(view: InventoryView) -> Iterator[Finding]:
    controllers = view.members(model.KAFKA_CONTROLLER)
    if controllers and view.members(model.ZOOKEEPER) \
            and not view.cluster_var("kafka_kraft_migration"):
        yield Finding(cite("KR-05"),
                      "the kafka_controller group declares KRaft controllers beside a ZooKeeper "
                      "ensemble: a migration from ZooKeeper to KRaft, which site.yml does not run",
                      "to migrate a running cluster run playbooks/kraft_migration.yml, and once "
                      "it finalized set kafka_kraft_migration: finalized (README, \"Migrating to "
                      "KRaft\"); for a new KRaft cluster remove the zookeeper group; for a "
                      "ZooKeeper-mode cluster remove the kafka_controller group",
                      tuple(controllers))
    combined = model.combined_hosts(view)
    # Without kafka_controller_combined, KR-04 names these hosts already.
    if combined and view.members(model.ZOOKEEPER) \
            and as_bool(view.cluster_var("kafka_controller_combined")):
        yield Finding(cite("KR-05"),
                      "runs both a KRaft controller and a broker (combined mode) beside a "
                      "ZooKeeper ensemble: Kafka migrates a ZooKeeper-mode cluster only to "
                      "dedicated controllers",
                      "give each controller a host of its own for the migration",
                      tuple(combined))


def brokers_span_racks(view: InventoryView) -> Iterator[Finding]:
    brokers = view.members(model.KAFKA_BROKER)
    racks = {model.rack_of(view, h) for h in brokers}
    if None in racks:
        return  # no racks at all is allowed, and racks on some only is racks_all_or_none's
    if len(brokers) > 1 and len(racks) == 1:
        yield Finding(cite("RA-02"), f"every broker is in rack {racks.pop()}, so no partition can "
                      "survive losing it", "spread the brokers over at least 2 racks",
                      tuple(brokers))


def replication(view: InventoryView) -> Iterator[Finding]:
    brokers = view.members(model.KAFKA_BROKER)
    if not brokers:
        return
    rf_raw = view.cluster_var("kafka_default_replication_factor")
    isr_raw = view.cluster_var("kafka_min_insync_replicas")
    rf, isr = as_int(rf_raw), as_int(isr_raw)
    if rf is None or rf < 1:
        yield Finding(cite("TR-01"), f"kafka_default_replication_factor is {rf_raw!r}",
                      "set it to a positive integer (3 is the norm)")
        return
    if rf > len(brokers):
        yield Finding(cite("TR-01"),
                      f"kafka_default_replication_factor {rf} is above the broker count "
                      f"{len(brokers)}", f"add brokers or set it to at most {len(brokers)}",
                      tuple(brokers))
    if isr is None or not 1 <= isr < rf:
        yield Finding(cite("TR-02"),
                      f"kafka_min_insync_replicas is {isr_raw!r} with replication factor "
                      f"{rf}; it must be at least 1 and below the replication factor, or one "
                      "broker down stops acks=all writes and no rolling restart is possible",
                      f"set kafka_min_insync_replicas to {rf - 1}" if rf > 1 else
                      "replicate over at least 2 brokers (kafka_default_replication_factor 2 or "
                      "more) and set kafka_min_insync_replicas below it")


def spark_needs_master(view: InventoryView) -> Iterator[Finding]:
    workers = view.members(model.SPARK_WORKER)
    if workers and not view.members(model.SPARK_MASTER):
        yield Finding(cite("SP-01"), "Spark workers have no master to register with",
                      "add a host to the spark_master group", tuple(workers))


def spark_nodes(view: InventoryView) -> list[str]:
    seen = dict.fromkeys(view.members(model.SPARK_MASTER) + view.members(model.SPARK_WORKER))
    return list(seen)


def spark_single_master(view: InventoryView) -> Iterator[Finding]:
    masters = view.members(model.SPARK_MASTER)
    if len(masters) > 1:
        yield Finding(cite("SP-06"),
                      f"the spark_master group has {len(masters)} hosts; kafkaform runs "
                      "one standalone master, which survives restarts through its recovery "
                      "state (spark_node_master_recovery_mode)",
                      "keep one host in spark_master", tuple(masters))


def spark_shared_dir(view: InventoryView) -> Iterator[Finding]:
    """Driver and executors write one sink: every Spark node names the same shared directory."""
    nodes = spark_nodes(view)
    values: dict[str, list[str]] = defaultdict(list)
    for host in nodes:
        values[str(view.var(host, "spark_node_shared_dir",
                            role_default("spark_node_shared_dir")))].append(host)
    for path, hosts in values.items():
        if not path.startswith("/") or path.rstrip("/") in ("", "/tmp", "/var/tmp"):
            yield Finding(cite("SP-07"),
                          f"spark_node_shared_dir is {path!r}", "set it to the absolute "
                          "path where a shared filesystem is mounted on every Spark node "
                          "(not / or a temporary directory)", tuple(hosts))
    if len(values) > 1:
        shown = "; ".join(f"{p} on {', '.join(h[:3])}" for p, h in values.items())
        yield Finding(cite("SP-07"),
                      f"spark_node_shared_dir differs between Spark nodes ({shown}), so "
                      "the driver and the executors would write to different places",
                      "set spark_node_shared_dir once, in group_vars/all", tuple(nodes))


def pipeline_sources(view: InventoryView) -> Iterator[Finding]:
    masters = view.members(model.SPARK_MASTER)
    if not masters:
        return
    brokers = view.members(model.KAFKA_BROKER)
    if len(brokers) < 2:
        yield Finding(cite("CL-08"), f"the pipeline on {masters[0]} needs at least two bootstrap "
                      f"brokers and the kafka_broker group has {len(brokers)}",
                      "add brokers to the kafka_broker group (3 or more in production)",
                      tuple(masters))
    topic = str(view.var(masters[0], "spark_pipeline_topic",
                         role_default("spark_pipeline_topic")))
    declared = {str(t.get("name")) for host in brokers
                for t in (view.var(host, "kafka_topics", []) or []) if isinstance(t, dict)}
    if brokers and topic not in declared:
        yield Finding(cite("SP-08"),
                      f"the pipeline reads topic {topic}, which kafka_topics does not "
                      "declare", f"declare {topic} in kafka_topics (partitions, replication "
                      "factor), or create it before the pipeline starts", tuple(masters),
                      "warning")


def pipeline_executor_fits(view: InventoryView) -> Iterator[Finding]:
    """SP-11, when every worker's offer is set: one that derives its cores or memory from its
    host (0) may fit, and the run checks that the job got executors."""
    masters, workers = view.members(model.SPARK_MASTER), view.members(model.SPARK_WORKER)
    if not masters or not workers:
        return

    def setting(host: str, name: str) -> int | None:
        return as_int(view.var(host, name, role_default(name)))

    cores = setting(masters[0], "spark_pipeline_executor_cores")
    memory = setting(masters[0], "spark_pipeline_executor_memory_mb")
    if cores is None or memory is None:
        return  # role_inputs reports a malformed value
    offers: dict[str, tuple[int, int]] = {}
    for worker in workers:
        worker_cores = setting(worker, "spark_node_worker_cores")
        worker_memory = setting(worker, "spark_node_worker_memory_mb")
        if not worker_cores or not worker_memory:
            return  # derived from the host (0), or malformed: role_inputs reports that
        offers[worker] = (worker_cores, worker_memory)
    if not any(c >= cores and m >= memory for c, m in offers.values()):
        shown = ", ".join(f"{w}: {c} core{'' if c == 1 else 's'}, {m} MB"
                          for w, (c, m) in offers.items())
        yield Finding(cite("SP-11"),
                      f"an executor of the pipeline on {masters[0]} takes "
                      f"spark_pipeline_executor_cores {cores} and spark_pipeline_executor_"
                      f"memory_mb {memory}, and no worker offers that ({shown})",
                      "lower spark_pipeline_executor_cores or spark_pipeline_executor_memory_mb, "
                      "or raise spark_node_worker_cores or spark_node_worker_memory_mb",
                      (masters[0], *workers))


def cluster_settings_agree(view: InventoryView) -> Iterator[Finding]:
    """Cluster-wide settings must have one value: the model reads them from any host."""
    for key in CLUSTER_DEFAULTS:
        values: dict[str, list[str]] = defaultdict(list)
        for host in view.cluster_hosts():
            value = view.var(host, key)
            if value is not None:
                values[repr(value)].append(host)
        if len(values) > 1:
            shown = "; ".join(f"{v} on {', '.join(h[:3])}" for v, h in values.items())
            yield Finding(cite("KF-01"), f"{key} differs between hosts ({shown})",
                          f"set {key} once, in group_vars/all")


def listener_ports(view: InventoryView) -> Iterator[Finding]:
    """Each listener of a broker binds a port of its own: the broker, client, extra and (while
    securing in place) plaintext listeners, from the model that renders them, and on a broker
    that is also a controller (combined mode) the controller's listener."""
    combined = {c.host: c for c in model.controllers(view) if c.combined}
    for broker in model.brokers(view):
        clashes = broker.port_clashes(*([(model.CONTROLLER_LISTENER, combined[broker.host].port)]
                                        if broker.host in combined else []))
        if clashes:
            yield Finding(cite("KF-02"), "listeners share a port: " + "; ".join(clashes),
                          "give each its own port (kafka_broker_port, kafka_broker_internal_port, "
                          "kafka_broker_extra_listeners, kafka_broker_metrics_port, "
                          "kafka_controller_port, kafka_plaintext_port: while securing in "
                          "place, move kafka_broker_port, e.g. to 9093)", (broker.host,))


def kraft_migration_state(view: InventoryView) -> Iterator[Finding]:
    """kafka_kraft_migration names a state of the migration, on a cluster with both a ZooKeeper
    ensemble and controllers (KR-09)."""
    state = str(view.cluster_var("kafka_kraft_migration") or "")
    if not state:
        return
    hosts = tuple(view.members(model.KAFKA_CONTROLLER)) or tuple(view.cluster_hosts()[:1])
    if state not in kraft_migration.PHASES:
        yield Finding(cite("KR-09"), f"kafka_kraft_migration is {state!r}",
                      "leave it unset while playbooks/kraft_migration.yml runs the migration, "
                      f"and set it to {kraft_migration.FINALIZED} once it has finalized", hosts)
    elif state != kraft_migration.FINALIZED and (
            not view.members(model.KAFKA_CONTROLLER) or not view.members(model.ZOOKEEPER)):
        yield Finding(cite("KR-09"), f"kafka_kraft_migration is {state}, but a migration needs "
                      "both the zookeeper group it leaves and the kafka_controller group it "
                      "moves to", "declare both groups, or remove kafka_kraft_migration", hosts)


def kafka_release_mode(view: InventoryView) -> Iterator[Finding]:
    """Kafka 4 and later run in KRaft mode only: a Kafka node gets such a release only on a
    cluster without ZooKeeper, or once its migration has finalized (KR-10)."""
    if not view.members(model.ZOOKEEPER):
        return
    state = str(view.cluster_var("kafka_kraft_migration") or "")
    if state == kraft_migration.FINALIZED:
        return
    nodes = [*view.members(model.KAFKA_CONTROLLER), *view.members(model.KAFKA_BROKER)]
    newer = {host: str(view.var(host, "kafka_broker_version")) for host in nodes
             if catalog.kafka_major(view.var(host, "kafka_broker_version")) >= 4}
    if newer:
        versions = ", ".join(sorted(set(newer.values())))
        yield Finding(cite("KR-10"), f"kafka_broker_version {versions} has no ZooKeeper mode, and "
                      "this cluster still runs on ZooKeeper (kafka_kraft_migration is "
                      f"{state or 'unset'})", "keep Kafka 3.9 until playbooks/kraft_migration.yml "
                      "has finalized the move to KRaft and kafka_kraft_migration is finalized, "
                      "then raise kafka_broker_version", tuple(newer))


def zookeeper_tls_migration(view: InventoryView) -> Iterator[Finding]:
    """kafka_zookeeper_tls_migration names a step (SE-18); while it is set, say what stays
    open."""
    step = view.cluster_var("kafka_zookeeper_tls_migration") or ""
    members = tuple(view.members(model.ZOOKEEPER)) or tuple(view.cluster_hosts()[:1])
    if step not in security_steps.TLS_MIGRATION_VALUES:
        yield Finding(cite("SE-18"), f"kafka_zookeeper_tls_migration is {step!r}",
                      "set offered, then connecting, then remove it", members)
    elif step:
        yield Finding(cite("SE-18"), f"kafka_zookeeper_tls_migration is {step}: the ensemble's "
                      "plain client port and its quorum ports still accept plaintext until the "
                      "last step", "finish the steps: connecting, then remove the setting",
                      members, "warning")


def security_migration(view: InventoryView) -> Iterator[Finding]:
    """kafka_security_migration names a step and kafka_plaintext_port a port (SE-10); while it
    is set, say what stays open. listener_ports checks that port against the others."""
    step = view.cluster_var("kafka_security_migration") or ""
    brokers = tuple(view.members(model.KAFKA_BROKER))
    if step not in security_steps.MIGRATION_VALUES:
        yield Finding(cite("SE-10"), f"kafka_security_migration is {step!r}",
                      "set plaintext_replication, then tls_replication, then remove it",
                      brokers or tuple(view.cluster_hosts()[:1]))
        return
    if not step:
        return
    port = as_int(view.cluster_var("kafka_plaintext_port"))
    if port is None or not 0 < port < 65536:
        yield Finding(cite("SE-10"), f"kafka_plaintext_port {port!r} is not a port",
                      "set the port the cluster's plaintext clients use today (e.g. 9092)",
                      brokers)
        return
    yield Finding(cite("SE-10"), f"kafka_security_migration is {step}: the plaintext listener "
                  f"(port {port}) stays open to the network, with the access it had, until the "
                  "last step", "move the clients to the CLIENT listener, then finish the steps",
                  brokers, "warning")


def sysctl_settings(view: InventoryView, host: str) -> dict[str, str]:
    """The kernel settings a host gets: the os_tuning defaults with its overrides on top."""
    merged = dict(role_default("os_tuning_sysctl"))
    merged.update(view.var(host, "os_tuning_sysctl_overrides", {}) or {})
    return {str(k): str(v) for k, v in merged.items()}


def _session_bounds(view: InventoryView) -> tuple[int, int, str] | None:
    """The session timeouts every member of the ensemble grants, ms, and where they come from:
    each member's minSessionTimeout and maxSessionTimeout (2 and 20 ticks unless its
    zookeeper_extra_settings set them); None when a value is unreadable (its type check says so).
    """
    lows, highs, sources = [], [], set()
    for member in view.members(model.ZOOKEEPER):
        inputs_ = host_inputs(view, "zookeeper", member)
        tick = as_int(setting(inputs_, "zookeeper_tick_time_ms"))
        extra = setting(inputs_, "zookeeper_extra_settings") or {}
        if tick is None or not isinstance(extra, dict):
            return None
        given_low, given_high = (as_int(extra.get(key))
                                 for key in ("minSessionTimeout", "maxSessionTimeout"))
        lows.append(given_low if given_low is not None else 2 * tick)
        highs.append(given_high if given_high is not None else 20 * tick)
        sources.add("minSessionTimeout or maxSessionTimeout in zookeeper_extra_settings"
                    if given_low is not None or given_high is not None
                    else f"2 and 20 times zookeeper_tick_time_ms {tick}")
    if not lows:
        return None
    return max(lows), min(highs), "; ".join(sorted(sources))


def zookeeper_session_fits(view: InventoryView) -> Iterator[Finding]:
    """What the brokers ask of ZooKeeper fits what the ensemble grants (KB-18): a member
    negotiates each session's timeout into its own bounds, silently, and the broker then lives
    with the timeout it got, not the one it was given."""
    brokers = view.members(model.KAFKA_BROKER)
    if not brokers or view.cluster_var("kafka_kraft_migration") == kraft_migration.FINALIZED:
        return
    bounds = _session_bounds(view)
    if bounds is None:
        return
    low, high, source = bounds
    asked: dict[int, list[str]] = defaultdict(list)
    for broker in brokers:
        timeout = as_int(setting(host_inputs(view, "kafka_broker", broker),
                                 "kafka_broker_zookeeper_session_timeout_ms"))
        if timeout is not None and not low <= timeout <= high:
            asked[timeout].append(broker)
    for timeout, hosts in asked.items():
        granted = min(max(timeout, low), high)
        yield Finding(cite("KB-18"), f"kafka_broker_zookeeper_session_timeout_ms {timeout} is "
                      f"outside the {low} to {high} ms the ensemble grants a session ({source}): "
                      f"ZooKeeper would hold the brokers to {granted} ms",
                      f"set it between {low} and {high}, or change zookeeper_tick_time_ms",
                      tuple(hosts))


def kernel_settings(view: InventoryView) -> Iterator[Finding]:
    for host in view.members(model.ZOOKEEPER) + view.members(model.KAFKA_BROKER):
        yield from kernel_findings(host, sysctl_settings(view, host))


#: A sysctl name as sysctl.d(5) and /proc/sys take it: dotted (or slashed) words.
SYSCTL_KEY = re.compile(r"[a-z0-9_-]+([./][A-Za-z0-9_*:-]+)+")


def kernel_value_findings(host: str, sysctl: dict[str, str]) -> Iterator[Finding]:
    """Each setting in a form sysctl writes: a sysctl name; a one-line value; numbers for the
    settings the role sets by default, which the kernel takes as numbers only."""
    numeric = set(role_default("os_tuning_sysctl"))
    for key, value in sysctl.items():
        if not SYSCTL_KEY.fullmatch(key):
            yield Finding(cite("OS-04"), f"{key!r} is not a kernel setting's name",
                          "name it as sysctl does, e.g. vm.swappiness, in "
                          "os_tuning_sysctl_overrides", (host,))
        elif not value.strip() or "\n" in value:
            shape = "no" if not value.strip() else "a multi-line"
            yield Finding(cite("OS-04"), f"{key} has {shape} value",
                          f"give {key} a one-line value in os_tuning_sysctl_overrides", (host,))
        elif key in numeric and not all(as_int(f) is not None for f in value.split()):
            yield Finding(cite("OS-04"), f"{key} is {value!r}, not a number (or numbers separated "
                          "by spaces): the kernel refuses it", f"give {key} a number in "
                          "os_tuning_sysctl_overrides", (host,))


def kernel_findings(host: str, sysctl: dict[str, str]) -> Iterator[Finding]:
    yield from kernel_value_findings(host, sysctl)

    def number(key: str, position: int = 0) -> int | None:
        fields = sysctl.get(key, "").split()
        return as_int(fields[position]) if len(fields) > position else None

    for proto in ("rmem", "wmem"):
        tcp_max, core_max = number(f"net.ipv4.tcp_{proto}", 2), number(f"net.core.{proto}_max")
        if tcp_max is not None and core_max is not None and tcp_max > core_max:
            yield Finding(cite("OS-01"), f"net.ipv4.tcp_{proto} maximum {tcp_max} is above "
                          f"net.core.{proto}_max {core_max}",
                          f"raise net.core.{proto}_max or lower the tcp_{proto} maximum in "
                          "os_tuning_sysctl_overrides", (host,))
    background, dirty = number("vm.dirty_background_ratio"), number("vm.dirty_ratio")
    if background is not None and dirty is not None and background >= dirty:
        yield Finding(cite("OS-02"), f"vm.dirty_background_ratio {background} is not below "
                      f"vm.dirty_ratio {dirty}", "keep the background ratio below the dirty "
                      "ratio (usually 5 and 60-80)", (host,))
    if number("vm.swappiness") == 0:
        yield Finding(cite("OS-03"), "vm.swappiness 0 lets the kernel's OOM killer fire instead of "
                      "swapping", "use vm.swappiness 1", (host,))


def data_disk_declarations(view: InventoryView) -> Iterator[Finding]:
    for host in view.cluster_hosts():
        found = list(_data_disk_findings(view, host))
        yield from found
        entries = view.var(host, "os_tuning_data_disks", []) or []
        if not found:  # the rest of each entry (owner, mount options) as the role's spec types it
            for problem in inputs.role_input("os_tuning", "os_tuning_data_disks",
                                             entries).problems:
                yield Finding(cite("DF-03"), problem, "correct the entry (roles/os_tuning/"
                              "README.md lists its keys)", (host,))


def _data_disk_findings(view: InventoryView, host: str) -> Iterator[Finding]:
    """The DF-03 findings of one host's data disk declarations."""
    entries = view.var(host, "os_tuning_data_disks", []) or []
    if not isinstance(entries, list):
        yield Finding(cite("DF-03"), "os_tuning_data_disks is not a list",
                      "declare a list of {device, mount, purpose}", (host,))
        return
    devices: Counter[str] = Counter()
    mounts: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        where = f"os_tuning_data_disks[{index}]"
        if not isinstance(entry, dict) and not hasattr(entry, "get"):
            yield Finding(cite("DF-03"), f"{where} is not a mapping",
                          "declare {device, mount, purpose}", (host,))
            continue
        if not entry.get("mount"):
            yield Finding(cite("DF-03"), f"{where} has no mount point",
                          "set mount to an absolute path", (host,))
        elif not str(entry["mount"]).startswith("/"):
            yield Finding(cite("DF-03"),
                          f"{where} mount {entry['mount']!r} is not an absolute path",
                          "use an absolute path", (host,))
        else:
            mounts[str(entry["mount"]).rstrip("/") or "/"] += 1
        if "device" not in entry:
            yield Finding(cite("DF-03"), f"{where} has no device", "set device to the block "
                          "device, or device: null to use a directory on an existing "
                          "filesystem", (host,))
        elif entry["device"] is not None:
            devices[str(entry["device"])] += 1
        if entry.get("purpose") not in model.DISK_PURPOSES:
            yield Finding(cite("DF-03"), f"{where} purpose is {entry.get('purpose')!r}",
                          f"use one of {', '.join(model.DISK_PURPOSES)}", (host,))
    for device, count in sorted(devices.items()):
        if count > 1:
            yield Finding(cite("DF-03"), f"device {device} is declared {count} times",
                          "declare each device once", (host,))
    for mount, count in sorted(mounts.items()):
        if count > 1:
            yield Finding(cite("DF-03"), f"mount point {mount} is used by {count} entries",
                          "give each data disk its own mount point", (host,))


def dedicated_hosts(view: InventoryView) -> Iterator[Finding]:
    shared = set(view.members(model.ZOOKEEPER)) & set(view.members(model.KAFKA_BROKER))
    for host in sorted(shared):
        yield Finding(cite("ZK-11"), "runs both ZooKeeper and a Kafka broker", "give ZooKeeper "
                      "dedicated hosts in production", (host,), "warning")


#: Each role's check of its own inputs, by the group whose hosts run the role. The contexts refuse
#: to render with the same problems; the preflight reports them before any host is touched.
ROLE_INPUT_CHECKS: tuple[tuple[str, str, Callable[[dict[str, Any]], list[str]]], ...] = (
    ("zookeeper", model.ZOOKEEPER, zookeeper.settings_problems),
    ("kafka_broker", model.KAFKA_BROKER, kafka_broker.settings_problems),
    ("spark_node", model.SPARK_MASTER, spark_node.settings_problems),
    ("spark_node", model.SPARK_WORKER, spark_node.settings_problems),
    ("spark_pipeline", model.SPARK_MASTER, spark_pipeline.settings_problems),
)


def host_inputs(view: InventoryView, role: str, host: str) -> dict[str, Any]:
    """The inputs of ``role`` the inventory sets for ``host``; the role's defaults fill the rest."""
    # `in` first: it reads the raw variables, where a lookup would template each one.
    variables = view.variables(host)
    found = {}
    for name in role_options(role):
        if name in variables and (value := variables.get(name)) is not None:
            typed = inputs.role_input(role, name, value)
            if not typed.problems:  # input_types reports the others; the default stands in
                found[name] = typed.value
    return found


def role_inputs(view: InventoryView) -> Iterator[Finding]:
    """Every role's own input checks, on every host of its group, one finding per problem."""
    hosts_by_problem: dict[tuple[str, str], list[str]] = defaultdict(list)
    for role, group, problems_of in ROLE_INPUT_CHECKS:
        for host in view.members(group):
            for problem in problems_of(host_inputs(view, role, host)):
                if host not in hosts_by_problem[role, problem]:
                    hosts_by_problem[role, problem].append(host)
    for broker in view.members(model.KAFKA_BROKER)[:1]:  # kafka_topics is one cluster setting
        declared = [
            *topics.declared_problems(view.var(broker, "kafka_topics", []) or []),
            *acls.user_problems(view.var(broker, "kafka_users", []) or []),
            *acls.acl_problems(view.var(broker, "kafka_acls", []) or []),
            *(f"{problem} ({cite('SE-06')})"
              for problem in secrets.given_problems(view.var(broker, "kafkaform_secrets"))),
        ]
        for problem in declared:
            hosts_by_problem["kafka_broker", problem] = view.members(model.KAFKA_BROKER)
    for (role, problem), hosts in hosts_by_problem.items():
        cited = ID_PATTERN.search(problem)
        yield Finding(cited[0] if cited else cite("KF-02"), problem,
                      f"change it in the inventory (roles/{role}/README.md lists the role's "
                      "inputs)", tuple(hosts))


def topic_replication(view: InventoryView) -> Iterator[Finding]:
    """Each declared topic's replication against the brokers and min.insync.replicas (TR-01,
    TR-02), and no unclean leader election (TR-03); role_inputs reports malformed topics."""
    brokers = view.members(model.KAFKA_BROKER)
    declared = view.var(brokers[0], "kafka_topics", []) if brokers else []
    isr = as_int(view.cluster_var("kafka_min_insync_replicas"))
    rf = as_int(view.cluster_var("kafka_default_replication_factor"))
    if not declared or topics.declared_problems(declared):
        return
    if isr is None or rf is None or not 1 <= isr < rf:
        isr = None  # replication() reports the cluster's setting; topics' own ones still count
    for rule, problem, fix in topics.replication_problems(declared, len(brokers), isr):
        yield Finding(rule, problem, f"{fix} in kafka_topics", tuple(brokers))


def role_hosts(view: InventoryView, role: str) -> list[str]:
    """The hosts that run ``role``, and so read its inputs."""
    groups = ROLE_GROUPS.get(role)
    if groups is None:
        return view.cluster_hosts()
    return list(dict.fromkeys(host for group in groups for host in view.members(group)))


#: Groups whose hosts run each role; a role not listed runs on every cluster host.
ROLE_GROUPS: dict[str, tuple[str, ...]] = {
    "zookeeper": (model.ZOOKEEPER,),
    "kafka_broker": (model.KAFKA_BROKER,),
    "spark_node": (model.SPARK_MASTER, model.SPARK_WORKER),
    "spark_pipeline": (model.SPARK_MASTER,),
}


def _grouped(problems: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """``(host, problem)`` pairs as problem → hosts, so a group_vars mistake is one finding."""
    hosts_by_problem: dict[str, list[str]] = defaultdict(list)
    for host, problem in problems:
        if host not in hosts_by_problem[problem]:
            hosts_by_problem[problem].append(host)
    return hosts_by_problem


#: Inputs whose own rules check their types with the rest of their values.
CHECKED_ELSEWHERE = OTHER_INPUTS | {"os_tuning_data_disks"}


def _type_problems(view: InventoryView) -> Iterator[tuple[str, str, str]]:
    """``(role, host, problem)`` for every input whose value its declared type refuses."""
    for role in INVENTORY_ROLES:
        names = [name for name in role_options(role) if name not in CHECKED_ELSEWHERE]
        for host in role_hosts(view, role):
            variables = view.variables(host)
            for name in names:
                if name in variables and (value := variables.get(name)) is not None:
                    for problem in inputs.role_input(role, name, value).problems:
                        yield role, host, problem
    for host in view.cluster_hosts():
        variables = view.variables(host)
        for name in CLUSTER_DEFAULTS:
            if name in variables and (value := variables.get(name)) is not None:
                for problem in inputs.cluster_setting(name, value):
                    yield "cluster", host, problem


def input_types(view: InventoryView) -> Iterator[Finding]:
    """Every input has the type its role's argument spec declares (the check the role itself
    runs on a host when it starts), cluster settings the type of their default."""
    roles: dict[str, str] = {}
    pairs = []
    for role, host, problem in _type_problems(view):
        roles[problem] = role
        pairs.append((host, problem))
    for problem, hosts in _grouped(pairs).items():
        role = roles[problem]
        where = ("plugins/plugin_utils/kafkaform/defaults.py (cluster settings)"
                 if role == "cluster" else f"roles/{role}/README.md")
        yield Finding(cite("KF-02"), problem, f"give it the type {where} lists", tuple(hosts))


def input_formats(view: InventoryView) -> Iterator[Finding]:
    """Every string input a service or the OS parses is in that reader's syntax: Prometheus's
    durations and sizes, absolute paths, account names, addresses (kafkaform.formats)."""
    pairs = []
    for role in INVENTORY_ROLES:
        names = [name for name, spec in role_options(role).items()
                 if spec.get("type", "str") in ("str", "path") and formats.format_of(name)]
        for host in role_hosts(view, role):
            variables = view.variables(host)
            pairs += [(host, problem) for name in names if name in variables
                      if (problem := formats.problem(name, variables.get(name)))]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("KF-02"), problem, "write it in that syntax (roles/<role>/README.md "
                      "lists each input)", tuple(hosts))


#: Per-host variables the templates render besides the inputs: rack and address.
RENDERED_HOST_VARS = ("rack", "ansible_host")


def line_breaks(view: InventoryView) -> Iterator[Finding]:
    """No rendered value holds a line break of any kind: each lands on one line of a config
    file, a unit or a command line, and a break there would add or cut a setting."""
    known = known_inputs()
    pairs = []
    for host in view.cluster_hosts():
        variables = view.variables(host)
        for name in variables:
            if name in known or name in RENDERED_HOST_VARS:
                value = variables.get(name)
                pairs += [(host, problem) for problem in inputs.line_breaks(name, value)]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("KF-02"), problem, "write the value on one line (in YAML, a quoted "
                      "string or a folded scalar '>-')", tuple(hosts))


#: The extra JVM options of each role that runs a JVM: (role, variable).
JVM_OPTION_INPUTS = (("zookeeper", "zookeeper_jvm_extra_opts"),
                     ("kafka_broker", "kafka_broker_jvm_extra_opts"))


def jvm_options(view: InventoryView) -> Iterator[Finding]:
    """No extra JVM option opens a debugger or JMX to the network (JV-04, SE-05)."""
    pairs = []
    for role, name in JVM_OPTION_INPUTS:
        for host in role_hosts(view, role):
            pairs += [(host, p) for p in inputs.exposing_jvm_options(name, view.var(host, name))]
    for host in role_hosts(view, "spark_node"):
        extra = view.var(host, "spark_node_defaults_extra", {})
        for key, value in (extra.items() if isinstance(extra, dict) else ()):
            if str(key).endswith("JavaOptions"):  # extra ones are the role's, default ones not
                pairs += [(host, p) for p in inputs.exposing_jvm_options(
                    f"spark_node_defaults_extra[{key}]", str(value))]
    for problem, hosts in _grouped(pairs).items():
        yield Finding(cite("JV-04"), problem, "remove it; for JMX set kafka_broker_jmx_enabled "
                      "with kafka_broker_jmx_password (TLS and a password), and debug a copy of "
                      "the service, never a cluster member", tuple(hosts))


def _bound_ports(view: InventoryView, host: str,
                 broker: model.Broker | None) -> Iterator[tuple[str, str, Any]]:
    """``(service, setting, port)`` for each port the roles make ``host``'s services bind."""
    def get(role: str, name: str) -> Any:
        return setting(host_inputs(view, role, host), name)

    if host in view.members(model.ZOOKEEPER):
        for name in ("zookeeper_client_port", "zookeeper_secure_client_port",
                     "zookeeper_quorum_port", "zookeeper_election_port"):
            yield "ZooKeeper", name, get("zookeeper", name)
        if get("zookeeper", "zookeeper_admin_server_enabled"):
            yield "ZooKeeper", "zookeeper_admin_server_port", get(
                "zookeeper", "zookeeper_admin_server_port")
    if broker is not None:
        for listener in broker.listeners:
            yield "Kafka", f"the {listener.name} listener", listener.port
        if get("kafka_broker", "kafka_broker_jmx_enabled"):
            yield "Kafka", "kafka_broker_jmx_port", get("kafka_broker", "kafka_broker_jmx_port")
    daemons = []
    if host in view.members(model.SPARK_MASTER):
        daemons += [("Spark master", "spark_node_master_port", False),
                    ("Spark master", "spark_node_master_webui_port", True)]
        if get("spark_node", "spark_node_history_server_enabled"):
            daemons.append(("Spark history server", "spark_node_history_server_port", True))
    if host in view.members(model.SPARK_WORKER):
        daemons += [("Spark worker", "spark_node_worker_port", False),
                    ("Spark worker", "spark_node_worker_webui_port", True)]
    for service, name, web in daemons:
        port = get("spark_node", name)
        if name == "spark_node_worker_port" and as_int(port) == 0:
            continue  # 0: the worker takes a free port when it starts
        yield service, name, port
        if web and as_int(port) is not None:  # the UI's TLS port beside its plain redirect
            yield service, f"{name} + {spark_node.TLS_UI_PORT_OFFSET} (TLS)", (
                int(port) + spark_node.TLS_UI_PORT_OFFSET)


def host_ports(view: InventoryView) -> Iterator[Finding]:
    """Every port a host's services bind is a port, and no two services bind the same one.
    Clashes among one broker's own listeners are listener_ports'."""
    brokers = {broker.host: broker for broker in model.brokers(view)}
    for host in view.cluster_hosts():
        holders: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for service, name, raw in _bound_ports(view, host, brokers.get(host)):
            port = as_int(raw)
            if port is None or not 0 < port < 65536:
                yield Finding(cite("KF-04"), f"{service}'s {name} is {raw!r}, not a port",
                              f"set {name} to a number from 1 to 65535", (host,))
            else:
                holders[port].append((service, name))
        for port, named in sorted(holders.items()):
            if len(named) > 1 and {service for service, _setting in named} != {"Kafka"}:
                users = ", ".join(f"{service} ({name})" for service, name in named)
                yield Finding(cite("KF-04"), f"port {port} is bound by {users}",
                              "give each its own port", (host,))


def unknown_variables(view: InventoryView) -> Iterator[Finding]:
    """A variable with one of kafkaform's prefixes that nothing reads is a misspelling until the
    inventory says otherwise (kafkaform_other_variables): the role would silently fall back to
    the default the operator meant to change."""
    hosts_by_name: dict[str, list[str]] = defaultdict(list)
    known = known_inputs()
    others = view.cluster_var("kafkaform_other_variables")
    allowed = known | set(others if isinstance(others, list) else ())
    for host in view.cluster_hosts():
        for name in view.variables(host):
            if name.startswith(INPUT_PREFIXES) and name not in allowed:
                hosts_by_name[name].append(host)
    for name, hosts in sorted(hosts_by_name.items()):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        rename = f"rename it to {close[0]}, the closest input" if close else "rename it"
        yield Finding(cite("KF-03"), f"{name} is not a variable kafkaform reads",
                      f"{rename}, remove it, or list it in kafkaform_other_variables if other "
                      f"tooling reads it", tuple(hosts))


RULES: tuple[Rule, ...] = (
    ensemble_size,
    zookeeper_ids,
    broker_ids,
    racks_all_or_none,
    no_rack_majority,
    controller_quorum_size,
    controller_ids,
    controller_racks,
    combined_mode,
    controllers_installed,
    kraft_migration_state,
    kafka_release_mode,
    brokers_span_racks,
    replication,
    spark_needs_master,
    spark_single_master,
    spark_shared_dir,
    pipeline_sources,
    pipeline_executor_fits,
    cluster_settings_agree,
    listener_ports,
    security_migration,
    zookeeper_tls_migration,
    kernel_settings,
    zookeeper_session_fits,
    data_disk_declarations,
    dedicated_hosts,
    role_inputs,
    input_formats,
    unknown_variables,
    line_breaks,
    jvm_options,
    host_ports,
    topic_replication,
)


def check(view: InventoryView) -> list[Finding]:
    """Every finding of every rule, errors first, in a stable order.

    The types come first: a rule that reads a value of the wrong type may fail on it, and then
    adds nothing to the finding that already names that value.
    """
    typed = list(input_types(view))
    findings = list(typed)
    for rule in RULES:
        try:
            findings += rule(view)
        except (TypeError, ValueError):
            if not typed:
                raise  # with every input well typed, a failing rule is a bug to report
    return sorted(findings, key=lambda f: f.severity != "error")


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]
