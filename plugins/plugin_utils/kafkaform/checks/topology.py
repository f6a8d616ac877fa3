"""The cluster's shape: ZooKeeper and controller quorums, node ids, racks, combined mode,
dedicated hosts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from .. import model
from ..defaults import as_bool
from ..model import InventoryView, as_int
from ..rules import cite
from .finding import Finding


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
    single = as_bool(view.cluster_var("kafkaform_allow_single_zookeeper"))
    for found in odd_quorum(view, members, ensemble, cite("ZK-06")):
        # An even ensemble is a step of a membership change, one member per run (ZK-16): a
        # warning, unless it is 2 members, fewer than 3 without the single-member switch.
        if size % 2 == 0 and (size > 2 or single):
            found = replace(found, severity="warning",
                            fix=f"{found.fix}: add or remove one more member in the next run "
                                f"({cite('ZK-16')})")
        elif size == 2:
            found = replace(found,
                            message="the ensemble has 2 members: fewer than 3 tolerates no "
                                    "member's failure",
                            fix="keep 3 members (remove one only after adding another), or set "
                                "kafkaform_allow_single_zookeeper: true for a development cluster")
        yield found
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
    """KR-01; on a dynamic quorum an even count is a step of a membership change (a controller
    added before another leaves, KR-15): a warning, not a refusal."""
    controllers = view.members(model.KAFKA_CONTROLLER)
    dynamic = view.cluster_var("kafka_controller_quorum") == model.DYNAMIC_QUORUM
    for found in odd_quorum(view, controllers,
                            Quorum("controller quorum", "quorum", "controller",
                                   "KRaft controller", "kafkaform_allow_single_controller"),
                            cite("KR-01")):
        if dynamic and len(controllers) % 2 == 0:
            found = replace(found, severity="warning",
                            fix=f"{found.fix} once the change is done (remove_controller.yml)")
        yield found


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


def dedicated_hosts(view: InventoryView) -> Iterator[Finding]:
    shared = set(view.members(model.ZOOKEEPER)) & set(view.members(model.KAFKA_BROKER))
    for host in sorted(shared):
        yield Finding(cite("ZK-11"), "runs both ZooKeeper and a Kafka broker", "give ZooKeeper "
                      "dedicated hosts in production", (host,), "warning")
