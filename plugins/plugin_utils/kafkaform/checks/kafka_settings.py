"""The brokers' settings against the rest of the cluster: replication, declared topics,
ZooKeeper sessions, the KRaft migration and the security steps under way."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from .. import catalog, kraft_migration, model, security_steps, topics
from ..defaults import setting
from ..model import InventoryView, as_int
from ..rules import cite
from .finding import Finding
from .variables import host_inputs


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


def quorum_kind(view: InventoryView) -> Iterator[Finding]:
    """kafka_controller_quorum is static or dynamic; a dynamic quorum is a KRaft cluster's own
    from its start: a migration from ZooKeeper runs a static one (KR-15)."""
    kind = str(view.cluster_var("kafka_controller_quorum") or model.STATIC_QUORUM)
    hosts = tuple(view.members(model.KAFKA_CONTROLLER)) or tuple(view.cluster_hosts()[:1])
    if kind not in (model.STATIC_QUORUM, model.DYNAMIC_QUORUM):
        yield Finding(cite("KR-15"), f"kafka_controller_quorum is {kind!r}",
                      f"set it to {model.STATIC_QUORUM} or {model.DYNAMIC_QUORUM}", hosts)
    elif kind == model.DYNAMIC_QUORUM and view.members(model.ZOOKEEPER):
        yield Finding(cite("KR-15"), "kafka_controller_quorum is dynamic on a cluster with a "
                      "ZooKeeper ensemble: a migration from ZooKeeper runs a static quorum",
                      f"set kafka_controller_quorum: {model.STATIC_QUORUM}", hosts)


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
