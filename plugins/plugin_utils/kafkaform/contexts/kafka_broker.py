"""The per-host input of the Kafka broker templates, from the model and the role's settings.

The Ansible role (through ``plugins/filter/kafka_broker.py``), pyinfra and the unit tests hand
:func:`kafka_broker_context` the cluster model (``Cluster.to_dict()``), a broker and the role's
variables (``kafka_broker_*`` names, role defaults filling the gaps) and give its result to every
template under the name ``kafka_broker``. Templates hold no logic: server.properties, the JVM
options and the unit's paths are all computed here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..catalog import release_key, release_url
from ..contexts import service_directories
from ..contexts.extras import declared_entries, one_line_settings
from ..contexts.metrics import jmx_agent
from ..contexts.sandbox import sandbox
from ..defaults import setting
from ..kraft_migration import MIGRATION_KEY, node_mode
from ..model import (
    BOOTSTRAP_CONTROLLERS,
    BROKER_LISTENER,
    CLIENT_LISTENER,
    CONTROLLER_LISTENER,
    port_clashes,
)
from ..rules import cite
from ..security_steps import target_step
from ..template_filters import java_properties
from .kafka_broker_properties import (
    BROKER_PRINCIPAL,
    CONTROLLER_PRINCIPAL,
    PLAIN_INPUTS,
    KafkaNode,
    as_text,
    combined_node,
    controller_node,
    node_properties,
    quorum_bootstrap,
)
from .kafka_broker_runtime import (
    REGISTRATION_WAIT_S,
    Layout,
    admin_client_properties,
    health_section,
    java_section,
    jmx_section,
    jvm_options,
    layout,
    restart_files,
)

#: The keys of an entry of kafka_broker_extra_listeners.
LISTENER_KEYS = ("name", "protocol", "port", "address", "advertised_host")

#: The admin helper installed on every Kafka node (roles/kafka_broker/files/kafkaform-kafka).
ADMIN_SCRIPT = "/usr/local/sbin/kafkaform-kafka"

#: Broker configuration keys of Kafka 3.9 (ZooKeeper mode) an extra property is checked against:
#: an unknown key close to one of these is a typo.
KNOWN_KEYS = frozenset({
    "advertised.listeners", "alter.config.policy.class.name", "auto.create.topics.enable",
    "auto.include.jmx.reporter", "auto.leader.rebalance.enable", "background.threads",
    "broker.id", "broker.id.generation.enable", "broker.rack", "compression.type",
    "connection.failed.authentication.delay.ms", "connections.max.idle.ms",
    "connections.max.reauth.ms", "control.plane.listener.name", "controlled.shutdown.enable",
    "controlled.shutdown.max.retries", "controlled.shutdown.retry.backoff.ms",
    "controller.socket.timeout.ms", "create.topic.policy.class.name", "default.replication.factor",
    "delegation.token.expiry.time.ms", "delete.records.purgatory.purge.interval.requests",
    "delete.topic.enable", "fetch.max.bytes", "fetch.purgatory.purge.interval.requests",
    "group.initial.rebalance.delay.ms", "group.max.session.timeout.ms", "group.max.size",
    "group.min.session.timeout.ms", "inter.broker.listener.name", "inter.broker.protocol.version",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage",
    "listener.security.protocol.map", "listeners", "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size", "log.cleaner.delete.retention.ms", "log.cleaner.enable",
    "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second", "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio", "log.cleaner.min.compaction.lag.ms", "log.cleaner.threads",
    "log.cleanup.policy", "log.dir", "log.dirs", "log.flush.interval.messages",
    "log.flush.interval.ms", "log.flush.offset.checkpoint.interval.ms",
    "log.flush.scheduler.interval.ms", "log.flush.start.offset.checkpoint.interval.ms",
    "log.index.interval.bytes", "log.index.size.max.bytes", "log.message.timestamp.type",
    "log.preallocate", "log.retention.bytes", "log.retention.check.interval.ms",
    "log.retention.hours", "log.retention.minutes", "log.retention.ms", "log.roll.hours",
    "log.roll.jitter.hours", "log.roll.jitter.ms", "log.roll.ms", "log.segment.bytes",
    "log.segment.delete.delay.ms", "max.connection.creation.rate", "max.connections",
    "max.connections.per.ip", "max.connections.per.ip.overrides",
    "max.incremental.fetch.session.cache.slots",
    "message.max.bytes", "metric.reporters", "metrics.num.samples", "metrics.recording.level",
    "metrics.sample.window.ms", "min.insync.replicas", "num.io.threads", "num.network.threads",
    "num.partitions", "num.recovery.threads.per.data.dir", "num.replica.alter.log.dirs.threads",
    "num.replica.fetchers", "offset.metadata.max.bytes", "offsets.commit.required.acks",
    "offsets.commit.timeout.ms", "offsets.load.buffer.size", "offsets.retention.check.interval.ms",
    "offsets.retention.minutes", "offsets.topic.compression.codec", "offsets.topic.num.partitions",
    "offsets.topic.replication.factor", "offsets.topic.segment.bytes", "producer.id.expiration.ms",
    "producer.purgatory.purge.interval.requests", "queued.max.request.bytes", "queued.max.requests",
    "replica.fetch.backoff.ms", "replica.fetch.max.bytes", "replica.fetch.min.bytes",
    "replica.fetch.response.max.bytes", "replica.fetch.wait.max.ms",
    "replica.high.watermark.checkpoint.interval.ms", "replica.lag.time.max.ms",
    "replica.selector.class", "replica.socket.receive.buffer.bytes", "replica.socket.timeout.ms",
    "request.timeout.ms", "reserved.broker.max.id", "security.inter.broker.protocol",
    "socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms",
    "socket.listen.backlog.size", "socket.receive.buffer.bytes", "socket.request.max.bytes",
    "socket.send.buffer.bytes", "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    "transaction.max.timeout.ms", "transaction.state.log.load.buffer.size",
    "transaction.state.log.min.isr", "transaction.state.log.num.partitions",
    "transaction.state.log.replication.factor", "transaction.state.log.segment.bytes",
    "transactional.id.expiration.ms", "unclean.leader.election.enable", "zookeeper.connect",
    "zookeeper.connection.timeout.ms", "zookeeper.max.in.flight.requests",
    "zookeeper.session.timeout.ms", "zookeeper.set.acl", "ssl.cipher.suites",
    "ssl.enabled.protocols", "ssl.protocol", "sasl.login.refresh.window.factor",
    "ssl.endpoint.identification.algorithm", "ssl.principal.mapping.rules", "super.users",
    "authorizer.class.name", "allow.everyone.if.no.acl.found", "sasl.enabled.mechanisms",
    "config.providers", "ssl.client.auth",
    # KRaft mode
    "controller.quorum.append.linger.ms", "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms",
    "metadata.log.max.record.bytes.between.snapshots", "metadata.log.max.snapshot.interval.ms",
    "metadata.log.segment.bytes", "metadata.max.retention.bytes", "metadata.max.retention.ms",
    "broker.heartbeat.interval.ms", "broker.session.timeout.ms",
})

#: Keys the cluster model decides: an extra property may repeat the model's value, never differ.
MODEL_KEYS = ("broker.id", "broker.rack", "zookeeper.connect", "log.dirs", "listeners",
              "advertised.listeners", "default.replication.factor", "min.insync.replicas",
              "unclean.leader.election.enable", "auto.create.topics.enable",
              "controlled.shutdown.enable", "listener.security.protocol.map",
              "inter.broker.listener.name", "super.users", "node.id", "process.roles",
              "controller.quorum.voters", BOOTSTRAP_CONTROLLERS, "controller.listener.names",
              "metadata.log.dir", MIGRATION_KEY)

#: Keys the role renders from its own variables: set the variable, not an extra property.
VARIABLE_KEYS = {
    **{key: f"kafka_broker_{plain.name}" for key, plain in PLAIN_INPUTS.items()},
    "message.max.bytes": "kafka_broker_message_max_bytes",
    "num.network.threads": "kafka_broker_num_network_threads",
    "num.io.threads": "kafka_broker_num_io_threads",
    "zookeeper.session.timeout.ms": "kafka_broker_zookeeper_session_timeout_ms",
    "log.cleaner.dedupe.buffer.size": "kafka_broker_log_cleaner_dedupe_buffer_mb",
    "log.dir": "os_tuning_data_disks (one log directory per kafka_log_dir disk)",
}

#: Keys that would turn on application fsync (KB-13), leave ZooKeeper mode or weaken the
#: platform's security (SE-01, SE-03, SE-07).
REFUSED_KEYS = {
    "authorizer.class.name": f"authorization is always on ({cite('SE-03')})",
    "allow.everyone.if.no.acl.found": f"no ACL means no access ({cite('SE-03')})",
    "zookeeper.set.acl": f"Kafka's znodes always carry ACLs ({cite('SE-07')})",
    "security.inter.broker.protocol": "the broker listener is the inter-broker listener "
                                      f"({cite('SE-01')})",
    "ssl.endpoint.identification.algorithm": "brokers always verify each other's names "
                                             f"({cite('SE-02')})",
    "ssl.principal.mapping.rules": "the brokers' principal comes from their certificates "
                                   f"({cite('SE-03')})",
    "config.providers": "the role reads its secrets through its own file provider",
    "log.flush.interval.messages": f"the OS flushes, not the broker ({cite('KB-13')})",
    "log.flush.interval.ms": f"the OS flushes, not the broker ({cite('KB-13')})",
}

_KEY = re.compile(r"^[a-z][a-z0-9._-]*$")

#: Security keys the role renders (security_properties); extras may not override them. SE-01
SECURITY_KEYS = frozenset({
    "config.providers.file.class", "ssl.keystore.type", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.enabled.protocols",
    "ssl.cipher.suites", "ssl.client.auth", "sasl.enabled.mechanisms",
    "zookeeper.clientCnxnSocket",
})
SECURITY_PREFIXES = ("listener.name.", "zookeeper.ssl.")


def listener_problems(listeners: Any, variable: str = "kafka_broker_extra_listeners") -> list[str]:
    """Problems of a host's extra listeners: each a mapping with a new name, a port and a TLS
    protocol (SE-01)."""
    entries, problems = declared_entries(variable, listeners, LISTENER_KEYS)
    for where, entry in entries:
        name = str(entry.get("name", ""))
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            problems.append(f"{where}: name {name!r} must be letters, digits and _")
        elif name.upper() in (BROKER_LISTENER, CLIENT_LISTENER):
            problems.append(f"{where}: {name.upper()} is one of the role's own listeners; "
                            "pick another name")
        elif name.upper() == CONTROLLER_LISTENER:
            problems.append(f"{where}: {CONTROLLER_LISTENER} is the KRaft controllers' listener "
                            f"({cite('KR-06')}); pick another name")
        protocol = str(entry.get("protocol", "SASL_SSL")).upper()
        if protocol not in ("SSL", "SASL_SSL"):
            problems.append(f"{where}: protocol {protocol} is refused, every listener speaks TLS "
                            f"(SSL or SASL_SSL, {cite('SE-01')})")
        port = entry.get("port")
        if isinstance(port, bool) or not str(port).isdigit() or not 0 < int(str(port)) < 65536:
            problems.append(f"{where}: port {port!r} must be a number from 1 to 65535")
    return problems


def extra_properties_problems(extra: Any, model: Mapping[str, str] | None = None) -> list[str]:
    """Problems of ``kafka_broker_extra_properties``: typos of known keys, keys the role sets
    through its own variables, values contradicting the cluster model (when given), multi-line or
    non-scalar values."""
    accepted, problems = one_line_settings("kafka_broker_extra_properties", extra, _KEY,
                                           "server.properties key")
    for key, value in accepted.items():
        where = f"kafka_broker_extra_properties: {key}"
        if key in REFUSED_KEYS:
            problems.append(f"{where} is refused: {REFUSED_KEYS[key]}")
        elif key in SECURITY_KEYS or key.startswith(SECURITY_PREFIXES):
            problems.append(f"{where} is set by the role: listeners, TLS, SCRAM and ACLs come "
                            f"from the cluster model ({cite('SE-01')})")
        elif key in VARIABLE_KEYS:
            problems.append(f"{where} is set by the role: use {VARIABLE_KEYS[key]}")
        elif key in MODEL_KEYS:
            if model is not None and model.get(key) != as_text(value):
                problems.append(f"{where}={as_text(value)} contradicts the cluster model, which "
                                f"gives {key}={model.get(key, '(unset)')}; change the inventory "
                                "instead (kafka_broker_id, rack, data disks, cluster settings)")
        elif key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1, cutoff=0.85)
            if close:
                problems.append(f"{where} is not a Kafka broker setting; did you mean {close[0]}?")
    if model is not None and "replica.fetch.max.bytes" in accepted:
        fetch = int(accepted["replica.fetch.max.bytes"])
        if fetch < int(model.get("message.max.bytes", 0)):
            problems.append("kafka_broker_extra_properties: replica.fetch.max.bytes "
                            f"{fetch} is below message.max.bytes {model['message.max.bytes']}: "
                            f"followers could not replicate the largest message ({cite('KB-12')})")
    return problems


def settings_problems(settings: Mapping[str, Any]) -> list[str]:
    """Every problem of the role's settings alone, as sentences (empty when they are valid)."""
    problems = extra_properties_problems(setting(settings, "kafka_broker_extra_properties"))
    if int(setting(settings, "kafka_broker_heap_mb")) < 128:
        problems.append("kafka_broker_heap_mb below 128 MB cannot run a broker "
                        f"(production: about 5 GB on a 64 GB host, {cite('JV-03')})")
    if int(setting(settings, "kafka_broker_num_recovery_threads_per_data_dir")) < 2:
        problems.append("kafka_broker_num_recovery_threads_per_data_dir must be above 1 "
                        f"({cite('KB-07')})")
    for name in ("kafka_broker_num_partitions", "kafka_broker_log_retention_ms",
                 "kafka_broker_log_segment_bytes", "kafka_broker_message_max_bytes"):
        if int(setting(settings, name)) < 1:
            problems.append(f"{name} must be positive")
    if bool(setting(settings, "kafka_broker_jmx_enabled")) \
            and not str(setting(settings, "kafka_broker_jmx_password") or ""):
        problems.append("kafka_broker_jmx_enabled needs kafka_broker_jmx_password (from Ansible "
                        f"Vault): JMX never runs without a password and TLS ({cite('SE-05')})")
    extra_listeners = setting(settings, "kafka_broker_extra_listeners")
    problems += listener_problems(extra_listeners)
    return problems


def thread_counts(cores: int, disks: int, network: int, io: int) -> tuple[int, int]:
    """``num.network.threads`` and ``num.io.threads``: the configured values, or when 0 sized
    from the host (KB-14): network threads half the cores (at least 3), I/O threads twice the
    cores and at least one per log directory (at least 8)."""
    cores = max(1, cores)
    net = network or max(3, (cores + 1) // 2)
    ios = io or max(8, 2 * cores, disks)
    return net, ios


def kafka_node(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> KafkaNode:
    """The host's node: a broker, a dedicated controller in a broker's shape, or a combined node
    (KR-04). Raises ``ValueError`` on the settings' problems, a host that is no Kafka node, or
    listeners sharing a port."""
    problems = settings_problems(settings)
    # A controller on a host of its own (dedicated), or one that is also a broker (combined).
    controller = cluster.get("controllers_by_host", {}).get(host)
    combined = controller is not None and bool(controller.get("combined"))
    mode = node_mode(controller is not None, str(cluster.get("metadata_mode", "zookeeper")),
                     str(cluster.get("kraft_migration") or ""))
    broker = cluster["brokers_by_host"].get(host)
    if controller is not None and not combined:
        broker = controller_node(controller)
    elif combined and broker is not None:
        broker = combined_node(broker, controller)
    if broker is None:
        problems.append(f"{host} is not a broker of the cluster (no kafka_broker_id?)")
    else:
        problems += [f"listeners share a port: {clash}" for clash in port_clashes(
            (lst["name"], lst["port"]) for lst in broker["listeners"])]
    if problems or broker is None:
        raise ValueError("; ".join(problems))
    return KafkaNode(broker, controller, mode)


def with_extra_properties(managed: dict[str, str],
                          declared: Mapping[Any, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The managed lines after the extra properties, and the extras left to render apart.
    Raises ``ValueError`` on an extra contradicting a managed line."""
    extra = {str(k): as_text(v) for k, v in declared.items()}
    contradictions = extra_properties_problems(extra, managed)
    if contradictions:
        raise ValueError("; ".join(contradictions))
    # Extras may tune a derived value (replica.fetch.max.bytes, offsets.*); the model's own keys
    # passed the contradiction check above, so they equal the managed value.
    managed.update({k: v for k, v in extra.items() if k in managed})
    return managed, {k: v for k, v in extra.items() if k not in managed}


def identity_section(cluster: Mapping[str, Any], host: str, node: KafkaNode,
                     get: Callable[[str], Any], paths: Layout,
                     model: Mapping[str, str]) -> dict[str, Any]:
    """Who the node is, where it lives and what it is (its mode, kind and principal)."""
    broker, mode = node.broker, node.mode
    kraft, dedicated = mode.kraft, node.dedicated
    return {
        "host": host,
        "id": int(broker["id"]),
        "rack": broker.get("rack") or "",
        "address": str(broker["address"]),
        "port": int(broker["port"]),
        "user": str(get("user")),
        "group": str(get("group")),
        "conf_dir": paths.conf_dir,
        "log_dir": paths.log_dir,
        "install_dir": paths.install_dir,
        "release": paths.release,
        # The release's own documentation, as Kafka's site names it (39 for 3.9.x).
        "docs_url": "https://kafka.apache.org/{}/documentation.html".format(
            "".join(map(str, release_key(paths.release)[:2]))),
        "log_config": paths.log_config,
        "log_dirs": list(broker["log_dirs"]),
        "zookeeper_connect": str(cluster["zookeeper_connect"]) if mode.zookeeper_client else "",
        # The node logs in to ZooKeeper (its JAAS file and secret, SE-07).
        "zookeeper_client": mode.zookeeper_client,
        # zookeeper, or kraft: then process_roles says whether this node is a broker or a
        # controller, and its storage is formatted with cluster_id (KR-07).
        "metadata_mode": "kraft" if kraft else "zookeeper",
        "process_roles": model.get("process.roles", ""),
        "cluster_id": str(cluster.get("cluster_id", "")) if kraft else "",
        # The OU of the host's certificate, which maps to its principal (SE-03, KR-06).
        # A combined node serves clients and dials brokers as a broker.
        "principal": CONTROLLER_PRINCIPAL if dedicated else BROKER_PRINCIPAL,
        # What the node is, as its unit and server.properties describe it.
        "kind": "controller" if dedicated
        else "broker and controller" if node.combined else "broker",
        "mode_note": ("KRaft mode" if kraft else "ZooKeeper mode (no process.roles)")
        + (", migrating the cluster from ZooKeeper to KRaft" if mode.migrating else ""),
    }


def admin_section(cluster: Mapping[str, Any], node: KafkaNode, paths: Layout,
                  admin_client: Mapping[str, str]) -> dict[str, Any]:
    """How the node reaches the cluster: its members, listeners and the admin helper."""
    broker, conf_dir = node.broker, paths.conf_dir
    migration = str(cluster.get("security_migration") or "")
    return {
        # Every Kafka node's id by host: the roll's member ids.
        "ids_by_host": {**{b["host"]: int(b["id"]) for b in cluster["brokers"]},
                        **{c["host"]: int(c["node_id"])
                           for c in (cluster.get("controllers", ()) if node.mode.kraft else ())}},
        "bootstrap_servers": str(cluster["bootstrap_servers"]),
        "admin_bootstrap_servers": str(cluster["admin_bootstrap_servers"]),
        "listeners": [dict(lst) for lst in broker["listeners"]],
        # SE-10: the step of securing in place this run builds, and whether it is the one that
        # puts ACLs on the znodes the brokers wrote before they logged in.
        "security_step": target_step(migration),
        "secure_existing_znodes": migration == "tls_replication",
        "admin_script": ADMIN_SCRIPT,
        # The admin helper's command line with this cluster's bootstrap servers.
        "admin_argv": [ADMIN_SCRIPT, "--bootstrap", str(cluster["admin_bootstrap_servers"]),
                       "--conf", conf_dir, "--libs", f"{paths.install_dir}/libs",
                       "--java", f"{paths.java_home}/bin/java"],
        # KR-11: a controller's unit ends its start once its registration with the quorum is in
        # the metadata log, and fails one whose registration Kafka dropped.
        "registration_argv": [ADMIN_SCRIPT, "--conf", conf_dir, "registration",
                              "--wait", str(REGISTRATION_WAIT_S)] if node.dedicated else [],
        "admin_client_config": f"{conf_dir}/admin-client.properties",
        "admin_client_properties": java_properties(admin_client),
        "jaas_file": paths.jaas,
        "tls": paths.tls,
    }


def with_release(cluster: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with the node's Kafka release and archive named: kafka_broker_version, else
    the cluster's (the model's kafka_release, which a run takes from the line its nodes run);
    kafka_broker_archive_url, else that release's archive on kafkaform_apache_mirror_url or the
    Apache distribution site (KF-05)."""
    version = str(settings.get("kafka_broker_version") or cluster.get("kafka_release") or "")
    mirror = str(settings.get("kafkaform_apache_mirror_url") or "")
    url = str(settings.get("kafka_broker_archive_url") or release_url("kafka", version, mirror))
    return {**settings, "kafka_broker_version": version, "kafka_broker_archive_url": url}


def kafka_broker_context(cluster: Mapping[str, Any], host: str,
                         settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``kafka_broker`` dict the templates of ``roles/kafka_broker/templates/`` read, for one
    Kafka node: a broker, or in KRaft mode a controller (a host of the kafka_controller group), or a
    host of both groups in combined mode (KR-04), one node that is both.

    + cluster: ``kafkaform.model.build(view).to_dict()``
    + host: the broker's inventory name
    + settings: the role's variables by full name (plus ``kafka_broker_cores``, the host's CPU
      count, and ``os_tuning_nofile_limit``); a missing one takes the role default

    Raises ``ValueError`` on settings :func:`settings_problems` rejects, extra properties that
    contradict the model, or a host that is neither a broker nor a controller: the role asserts
    them first.
    """
    settings = with_release(cluster, settings)
    node = kafka_node(cluster, host, settings)
    broker = node.broker

    def get(name: str) -> Any:
        return setting(settings, f"kafka_broker_{name}")

    paths = layout(get)
    # A combined node runs the broker's heap: the controller's share of it is small (KR-04).
    heap = int(setting(settings, "kafka_controller_heap_mb") if node.dedicated
               else get("heap_mb"))
    threads = thread_counts(int(settings.get("kafka_broker_cores") or 1), len(broker["log_dirs"]),
                            int(get("num_network_threads")), int(get("num_io_threads")))
    model, security, managed = node_properties(cluster, node, paths.tls, get, threads, heap,
                                               paths.conf_dir)
    managed, extra = with_extra_properties(managed, get("extra_properties"))
    jmx = jmx_section(get, paths.conf_dir)
    jmx_options = [f"-Dcom.sun.management.config.file={jmx['config']}",
                   f"-Djava.rmi.server.hostname={get('jmx_address')}"] if jmx["enabled"] else []
    admin_client = admin_client_properties(cluster, paths.tls, security,
                                           str(cluster.get("security_migration") or ""))
    metrics = jmx_agent(get, settings, str(broker["address"]), paths.conf_dir)
    options = jvm_options(get, paths, heap, node.mode, jmx_options, metrics)
    health = health_section(cluster, int(setting(settings, "kafka_broker_restart_timeout_s")),
                            node.dedicated, node.mode.kraft)
    read_write = [*broker["log_dirs"], paths.log_dir]
    return {
        **identity_section(cluster, host, node, get, paths, model),
        **admin_section(cluster, node, paths, admin_client),
        "jmx": jmx,
        "metrics": metrics,
        # Names for the certificate's subject alternative names: every name a client may dial.
        "tls_names": sorted({host, str(broker["address"]),
                             *(str(lst["advertised_host"]) for lst in broker["listeners"])}),
        "broker_ids": [int(b["id"]) for b in cluster["brokers"]],
        "racks_by_id": {str(b["id"]): b.get("rack") or "" for b in cluster["brokers"]},
        "server_properties": java_properties(managed),
        "extra_properties": java_properties(extra),
        "heap_mb": heap,
        "java": java_section(paths, options),
        "nofile_limit": max(100000, int(setting(settings, "os_tuning_nofile_limit"))),
        "read_write_paths": read_write,
        "directories": service_directories(paths.conf_dir, read_write, str(get("user")),
                                           str(get("group")), metrics),
        "sandbox": sandbox(),
        "restart_files": restart_files(paths, jmx, node.mode),
        # Not among them: only a start reads it, and a controller joins without one (KR-15).
        "quorum_file": quorum_bootstrap(cluster, paths.conf_dir, node.mode),
        **health,
    }
