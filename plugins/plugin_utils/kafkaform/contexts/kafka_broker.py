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
from collections.abc import Mapping
from typing import Any

from .. import tls_policy
from ..catalog import kafka_major, release_key
from ..contexts import SYSTEMD_UNIT_DIR, service_directories
from ..contexts.extras import declared_entries, one_line_settings
from ..contexts.metrics import jmx_agent
from ..contexts.sandbox import sandbox
from ..defaults import setting
from ..java import UNREAD_HOME
from ..kraft_migration import MIGRATION_KEY, NodeMode, node_mode
from ..model import (
    BROKER_LISTENER,
    CLIENT_LISTENER,
    CONTROLLER_LISTENER,
    PLAINTEXT_LISTENER,
    port_clashes,
)
from ..rules import cite
from ..security_steps import target_step
from ..template_filters import java_properties

#: The keys of an entry of kafka_broker_extra_listeners.
LISTENER_KEYS = ("name", "protocol", "port", "address", "advertised_host")

#: The class every Kafka node runs as: a ZooKeeper-mode broker when ``process.roles`` is unset,
#: a KRaft broker or controller as it says.
MAIN_CLASS = "kafka.Kafka"
#: The admin helper installed on every Kafka node (roles/kafka_broker/files/kafkaform-kafka).
ADMIN_SCRIPT = "/usr/local/sbin/kafkaform-kafka"
#: Seconds one health check may wait for the cluster to become healthy (the admin helper's
#: ``health --wait``): it checks again itself, within a second, while a restarted broker comes
#: back, instead of one task per check (OP-02). A check that finds the broker's own listener
#: closed returns at once, without starting Kafka's tools.
HEALTH_WAIT_S = 30
#: How long a controller's start waits for its registration (KR-11) before the health gates judge.
REGISTRATION_WAIT_S = 60
#: Seconds between two such waiting health checks.
HEALTH_POLL_S = 2

#: The Java home of a context built without reading the host (kafkaform.java).
DEFAULT_JAVA_HOME = UNREAD_HOME

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
              "controller.quorum.voters", "controller.listener.names", "metadata.log.dir",
              MIGRATION_KEY)

#: Keys the role renders from its own variables: set the variable, not an extra property.
VARIABLE_KEYS = {
    "num.partitions": "kafka_broker_num_partitions",
    "log.retention.ms": "kafka_broker_log_retention_ms",
    "log.segment.bytes": "kafka_broker_log_segment_bytes",
    "message.max.bytes": "kafka_broker_message_max_bytes",
    "num.recovery.threads.per.data.dir": "kafka_broker_num_recovery_threads_per_data_dir",
    "num.network.threads": "kafka_broker_num_network_threads",
    "num.io.threads": "kafka_broker_num_io_threads",
    "auto.leader.rebalance.enable": "kafka_broker_auto_leader_rebalance_enable",
    "delete.topic.enable": "kafka_broker_delete_topic_enable",
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


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: A broker of a cluster in ZooKeeper mode, not migrating.
ZOOKEEPER_BROKER = node_mode(controller=False, metadata_mode="zookeeper", migration="")

#: The principal every broker's certificate maps to (its subject's OU, see kafkaform.pki): one
#: super user for the whole cluster, so adding a broker changes no other broker's configuration.
BROKER_PRINCIPAL = "kafka-broker"

#: The principal every controller's certificate maps to (KRaft mode): a super user of the cluster,
#: apart from the brokers'. KR-06
CONTROLLER_PRINCIPAL = "kafka-controller"

#: The authorizer of each mode: ACLs in ZooKeeper, or in the metadata log. SE-03
AUTHORIZERS = {"zookeeper": "kafka.security.authorizer.AclAuthorizer",
               "kraft": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}

#: The only SASL mechanism the client listener offers. SE-01
SASL_MECHANISM = "SCRAM-SHA-512"


def super_users(users: Any, controllers: bool = False) -> list[str]:
    """``User:`` principals of super.users: the brokers (and on a node that talks to the KRaft
    quorum the controllers), then every declared superuser."""
    names = [BROKER_PRINCIPAL, *([CONTROLLER_PRINCIPAL] if controllers else [])]
    for user in users if isinstance(users, list) else []:
        if isinstance(user, Mapping) and user.get("superuser") is True \
                and user.get("state", "present") == "present":
            names.append(str(user.get("name")))
    return [f"User:{name}" for name in dict.fromkeys(names)]


def principal_rule(principal: str) -> str:
    """The ssl.principal.mapping.rules entry that maps a certificate whose subject says
    OU=<principal> to that principal."""
    return f"RULE:^.*OU={principal}(,.*)?$/{principal}/"


#: The node's TLS settings its ZooKeeper client takes as they are (zookeeper.ssl.<key> from
#: ssl.<key>): the same keystore, trust store, protocols and suites as every other connection.
_ZOOKEEPER_TLS_FROM = ("keystore.type", "keystore.location", "keystore.password",
                       "truststore.type", "truststore.location", "enabled.protocols",
                       "cipher.suites")


def zookeeper_tls_properties(ssl: Mapping[str, str]) -> dict[str, str]:
    """server.properties lines of SE-18, from the node's own ``ssl.*`` lines: the node connects
    to ZooKeeper's secure client port with its own keystore (mutual TLS, beside its SASL login)
    and checks the member's name."""
    return {
        "zookeeper.ssl.client.enable": "true",
        "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
        **{f"zookeeper.ssl.{key}": ssl[f"ssl.{key}"] for key in _ZOOKEEPER_TLS_FROM},
        "zookeeper.ssl.endpoint.identification.algorithm": "HTTPS",
        "zookeeper.ssl.protocol": tls_policy.PROTOCOLS[0],
    }


def security_properties(broker: Mapping[str, Any], tls: Mapping[str, str],
                        users: Any, migration: str = "",
                        mode: NodeMode = ZOOKEEPER_BROKER,
                        zookeeper_tls: bool = False) -> dict[str, str]:
    """server.properties lines of SE-01, SE-02, SE-03: TLS on every listener, SCRAM on the
    SASL ones, mutual TLS between brokers, the ACL authorizer. The keystore password is read
    from ``tls.secrets`` through Kafka's file config provider, so this file holds no secret.

    While a cluster built open is secured in place (``migration``, SE-10) its plaintext listener
    stays, its anonymous clients keep the access they had (User:ANONYMOUS is a super user), and
    at the plaintext_replication step brokers still replicate over it and write znodes without
    ACLs, as the brokers not yet restarted do.

    A node that talks to the KRaft quorum (``mode``, KR-06) trusts the controllers' principal as a
    super user, and the CONTROLLER listener takes client certificates too; a KRaft node keeps its
    ACLs in the metadata log. A controller has no other listener, but while it migrates a cluster
    from ZooKeeper (KR-09) it dials the brokers' BROKER listener as their controller."""
    kraft, knows_quorum = mode.kraft, mode.knows_quorum
    secret = f"${{file:{tls['secrets']}:keystore.password}}"
    plaintext_replication = migration == "plaintext_replication"
    listeners = list(broker["listeners"])
    names = {lst["name"] for lst in listeners}
    if knows_quorum and CONTROLLER_LISTENER not in names:
        # A broker dials the controllers' listener: it needs that listener's protocol.
        listeners.append({"name": CONTROLLER_LISTENER, "protocol": "SSL"})
    dials_brokers = kraft and mode.migrating and BROKER_LISTENER not in names
    if dials_brokers:
        listeners.append({"name": BROKER_LISTENER, "protocol": "SSL"})
    props = {
        "listener.security.protocol.map": ",".join(f"{lst['name']}:{lst['protocol']}"
                                                   for lst in listeners),
        "config.providers": "file",
        "config.providers.file.class":
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": tls["keystore"],
        "ssl.keystore.password": secret,
        "ssl.key.password": secret,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": tls["trust"],
        "ssl.endpoint.identification.algorithm": "https",
        # TLS 1.2+ with AEAD suites only, on every listener and every connection the node
        # makes (SE-17, kafkaform.tls_policy).
        "ssl.enabled.protocols": ",".join(tls_policy.PROTOCOLS),
        "ssl.cipher.suites": ",".join(tls_policy.JAVA_SUITES),
        **{f"listener.name.{name.lower()}.ssl.client.auth": "required"
           for name in (BROKER_LISTENER, CONTROLLER_LISTENER) if name in names},
        # Any certificate of the cluster CA whose subject says OU=kafka-broker is a broker (and
        # in KRaft mode OU=kafka-controller a controller).
        "ssl.principal.mapping.rules": ",".join([
            principal_rule(BROKER_PRINCIPAL),
            *([principal_rule(CONTROLLER_PRINCIPAL)] if knows_quorum else []), "DEFAULT"]),
        "sasl.enabled.mechanisms": SASL_MECHANISM,
        "authorizer.class.name": AUTHORIZERS["kraft" if kraft else "zookeeper"],
        "allow.everyone.if.no.acl.found": "false",
        "super.users": ";".join(super_users(users, knows_quorum)
                                + (["User:ANONYMOUS"] if migration else [])),
    }
    if BROKER_LISTENER in names or dials_brokers:
        props["inter.broker.listener.name"] = \
            PLAINTEXT_LISTENER if plaintext_replication else BROKER_LISTENER
    if mode.zookeeper_client:
        props["zookeeper.set.acl"] = "false" if plaintext_replication else "true"
        if zookeeper_tls:
            props.update(zookeeper_tls_properties(props))
    for lst in broker["listeners"]:
        if lst["protocol"] == "SASL_SSL":
            prefix = f"listener.name.{lst['name'].lower()}"
            props[f"{prefix}.sasl.enabled.mechanisms"] = SASL_MECHANISM
            props[f"{prefix}.{SASL_MECHANISM.lower()}.sasl.jaas.config"] = \
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    return props


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


def kraft_properties(cluster: Mapping[str, Any], roles: str, node_id: int) -> dict[str, str]:
    """What a node of a cluster in KRaft mode is, and how it finds the quorum (KR-02, KR-06)."""
    return {
        "process.roles": roles,
        "node.id": str(node_id),
        "controller.quorum.voters": str(cluster["controller_quorum_voters"]),
        "controller.listener.names": CONTROLLER_LISTENER,
    }


def migration_properties(cluster: Mapping[str, Any], mode: NodeMode) -> dict[str, str]:
    """What a node migrating the cluster from ZooKeeper (KR-09) adds: the migration switch, and
    for a controller the ensemble it copies and then writes."""
    if not mode.migrating:
        return {}
    return {MIGRATION_KEY: "true",
            **({"zookeeper.connect": str(cluster["zookeeper_connect"])} if mode.kraft else {})}


def controller_properties(cluster: Mapping[str, Any], controller: Mapping[str, Any],
                          mode: NodeMode) -> dict[str, str]:
    """server.properties values the cluster model decides for one KRaft controller."""
    return {
        **kraft_properties(cluster, "controller", int(controller["node_id"])),
        "listeners": f"{CONTROLLER_LISTENER}://{controller['address']}:{controller['port']}",
        "log.dirs": str(controller["metadata_dir"]),
        **migration_properties(cluster, mode),
    }


def controller_listener(controller: Mapping[str, Any]) -> dict[str, Any]:
    """A controller's CONTROLLER listener, in the shape of a broker's listener of the model."""
    return {"name": CONTROLLER_LISTENER, "protocol": "SSL", "address": controller["address"],
            "advertised_host": controller["address"], "port": controller["port"]}


def controller_node(controller: Mapping[str, Any]) -> dict[str, Any]:
    """A controller in the shape of a broker of the model: what the rest of the context reads."""
    return {"id": controller["node_id"], "rack": controller.get("rack"),
            "address": controller["address"], "port": controller["port"],
            "log_dirs": [controller["metadata_dir"]],
            "listeners": [controller_listener(controller)]}


def combined_node(broker: Mapping[str, Any], controller: Mapping[str, Any]) -> dict[str, Any]:
    """A broker that is also a controller (combined mode, KR-04): its listeners and the
    CONTROLLER one. Its metadata log lives in its first log directory, as Kafka's default is."""
    return {**broker, "listeners": [*broker["listeners"], controller_listener(controller)]}


def model_properties(cluster: Mapping[str, Any], broker: Mapping[str, Any],
                     mode: NodeMode, roles: str = "broker") -> dict[str, str]:
    """server.properties values the cluster model decides for one broker (in KRaft mode with
    ``roles``: broker, or broker,controller for a combined node)."""
    props = {
        **(kraft_properties(cluster, roles, int(broker["id"])) if mode.kraft
           else {"broker.id": str(broker["id"]),
                 "zookeeper.connect": str(cluster["zookeeper_connect"]),
                 **migration_properties(cluster, mode),
                 **({"controller.quorum.voters": str(cluster["controller_quorum_voters"]),
                     "controller.listener.names": CONTROLLER_LISTENER}
                    if mode.knows_quorum else {})}),
        "listeners": ",".join(f"{lst['name']}://{lst['address']}:{lst['port']}"
                              for lst in broker["listeners"]),
        # Clients never dial a combined node's CONTROLLER listener: the brokers and controllers
        # find it in controller.quorum.voters.
        "advertised.listeners": ",".join(f"{lst['name']}://{lst['advertised_host']}:{lst['port']}"
                                         for lst in broker["listeners"]
                                         if lst["name"] != CONTROLLER_LISTENER),
        "log.dirs": ",".join(broker["log_dirs"]),
        "default.replication.factor": str(cluster["replication_factor"]),
        "min.insync.replicas": str(cluster["min_insync_replicas"]),
        "unclean.leader.election.enable": "false",
        "auto.create.topics.enable": "false",
        "controlled.shutdown.enable": "true",
    }
    if broker.get("rack"):
        props["broker.rack"] = str(broker["rack"])
    return props


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
            if model is not None and model.get(key) != _as_text(value):
                problems.append(f"{where}={_as_text(value)} contradicts the cluster model, which "
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


def log_configuration(release: str, conf_dir: str) -> dict[str, str]:
    """The broker's logging configuration: log4j 1.x properties read by reload4j on Kafka 3,
    log4j2 YAML on Kafka 4 (which dropped reload4j). KB-22"""
    if kafka_major(release) < 4:
        return {"template": "log4j.properties.j2", "dest": f"{conf_dir}/log4j.properties",
                "option": f"-Dlog4j.configuration=file:{conf_dir}/log4j.properties"}
    return {"template": "log4j2.yaml.j2", "dest": f"{conf_dir}/log4j2.yaml",
            "option": f"-Dlog4j2.configurationFile={conf_dir}/log4j2.yaml"}


def kafka_broker_context(cluster: Mapping[str, Any], host: str,
                         settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``kafka_broker`` dict the templates of ``templates/kafka_broker/`` read, for one Kafka
    node: a broker, or in KRaft mode a controller (a host of the kafka_controller group), or a
    host of both groups in combined mode (KR-04), one node that is both.

    + cluster: ``kafkaform.model.build(view).to_dict()``
    + host: the broker's inventory name
    + settings: the role's variables by full name (plus ``kafka_broker_cores``, the host's CPU
      count, and ``os_tuning_nofile_limit``); a missing one takes the role default

    Raises ``ValueError`` on settings :func:`settings_problems` rejects, extra properties that
    contradict the model, or a host that is neither a broker nor a controller: the role asserts
    them first.
    """
    problems = settings_problems(settings)
    # A controller on a host of its own (dedicated), or one that is also a broker (combined).
    controller = cluster.get("controllers_by_host", {}).get(host)
    combined = controller is not None and bool(controller.get("combined"))
    dedicated = controller is not None and not combined
    mode = node_mode(controller is not None, str(cluster.get("metadata_mode", "zookeeper")),
                     str(cluster.get("kraft_migration") or ""))
    kraft = mode.kraft
    broker = cluster["brokers_by_host"].get(host)
    if dedicated:
        broker = controller_node(controller)
    elif combined and broker is not None:
        broker = combined_node(broker, controller)
    if broker is None:
        problems.append(f"{host} is not a broker of the cluster (no kafka_broker_id?)")
    else:
        problems += [f"listeners share a port: {clash}" for clash in port_clashes(
            (lst["name"], lst["port"]) for lst in broker["listeners"])]
    if problems:
        raise ValueError("; ".join(problems))

    def get(name: str) -> Any:
        return setting(settings, f"kafka_broker_{name}")

    conf_dir = str(get("conf_dir")).rstrip("/")
    log_dir = str(get("log_dir")).rstrip("/")
    install_dir = str(get("install_dir")).rstrip("/")
    release = str(get("version"))
    log_config = log_configuration(release, conf_dir)
    java_home = str(get("java_home") or DEFAULT_JAVA_HOME).rstrip("/")
    # A combined node runs the broker's heap: the controller's share of it is small (KR-04).
    heap = int(setting(settings, "kafka_controller_heap_mb") if dedicated else get("heap_mb"))
    message_max = int(get("message_max_bytes"))
    network, io = thread_counts(int(settings.get("kafka_broker_cores") or 1),
                                len(broker["log_dirs"]), int(get("num_network_threads")),
                                int(get("num_io_threads")))
    brokers = len(cluster["brokers"])
    dedupe_mb = min(int(get("log_cleaner_dedupe_buffer_mb")), max(1, heap // 4))
    tls_dir = str(get("tls_dir")).rstrip("/")
    tls = {
        "dir": tls_dir,
        "trust": f"{tls_dir}/trust.pem",
        "keystore": f"{tls_dir}/keystore.p12",
        "secrets": f"{tls_dir}/secrets.properties",
    }
    migration = str(cluster.get("security_migration") or "")
    security = security_properties(broker, tls, get("users"), migration, mode,
                                   bool(cluster.get("zookeeper_over_tls")))
    model = controller_properties(cluster, controller, mode) if dedicated \
        else model_properties(cluster, broker, mode,
                              "broker,controller" if combined else "broker")
    # A dedicated controller serves no topic: the brokers' settings below are not its.
    broker_only = {} if dedicated else {
        "num.partitions": str(int(get("num_partitions"))),
        "num.recovery.threads.per.data.dir": str(int(get("num_recovery_threads_per_data_dir"))),
        "auto.leader.rebalance.enable": _as_text(bool(get("auto_leader_rebalance_enable"))),
        "delete.topic.enable": _as_text(bool(get("delete_topic_enable"))),
        "log.retention.ms": str(int(get("log_retention_ms"))),
        "log.segment.bytes": str(int(get("log_segment_bytes"))),
        "message.max.bytes": str(message_max),
        "replica.fetch.max.bytes": str(max(message_max, 1048576)),
        "log.cleaner.enable": "true",
        "log.cleaner.dedupe.buffer.size": str(dedupe_mb * 1024 * 1024),
        "offsets.topic.replication.factor": str(min(3, brokers)),
        "transaction.state.log.replication.factor": str(min(3, brokers)),
        "transaction.state.log.min.isr": str(min(2, brokers)),
    }
    managed = {
        **model,
        **security,
        **broker_only,
        "num.network.threads": str(network),
        "num.io.threads": str(io),
        **({} if not mode.zookeeper_client else {
            "zookeeper.session.timeout.ms": str(int(get("zookeeper_session_timeout_ms")))}),
    }
    extra = {str(k): _as_text(v) for k, v in get("extra_properties").items()}
    contradictions = extra_properties_problems(extra, managed)
    if contradictions:
        raise ValueError("; ".join(contradictions))
    # Extras may tune a derived value (replica.fetch.max.bytes, offsets.*); the model's own keys
    # passed the contradiction check above, so they equal the managed value.
    managed.update({k: v for k, v in extra.items() if k in managed})
    extra = {k: v for k, v in extra.items() if k not in managed}

    jaas = f"{conf_dir}/kafka-jaas.conf"
    # SE-05: JMX only with a password file and TLS, configured in files, never on the command
    # line (which any local user can read).
    jmx_enabled = bool(get("jmx_enabled"))
    jmx = {
        "enabled": jmx_enabled,
        "config": f"{conf_dir}/jmx.properties",
        "password_file": f"{conf_dir}/jmx.password",
        "access_file": f"{conf_dir}/jmx.access",
        "ssl_config": f"{conf_dir}/jmx-ssl.properties",
        "properties": java_properties({
            "com.sun.management.jmxremote.port": int(get("jmx_port")),
            "com.sun.management.jmxremote.rmi.port": int(get("jmx_port")),
            "com.sun.management.jmxremote.host": str(get("jmx_address")),
            "com.sun.management.jmxremote.authenticate": "true",
            "com.sun.management.jmxremote.password.file": f"{conf_dir}/jmx.password",
            "com.sun.management.jmxremote.access.file": f"{conf_dir}/jmx.access",
            "com.sun.management.jmxremote.ssl": "true",
            "com.sun.management.jmxremote.registry.ssl": "true",
            "com.sun.management.jmxremote.ssl.config.file": f"{conf_dir}/jmx-ssl.properties",
        }),
        "user": "monitor",
    }
    jmx_options = [f"-Dcom.sun.management.config.file={jmx['config']}",
                   f"-Djava.rmi.server.hostname={get('jmx_address')}"] if jmx_enabled else []
    admin_client = {
        "bootstrap.servers": str(cluster["admin_bootstrap_servers"]),
    } if migration else {
        "bootstrap.servers": str(cluster["admin_bootstrap_servers"]),
        "security.protocol": "SSL",
        "config.providers": "file",
        "config.providers.file.class":
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": tls["keystore"],
        "ssl.keystore.password": security["ssl.keystore.password"],
        "ssl.key.password": security["ssl.key.password"],
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": tls["trust"],
    }
    metrics = jmx_agent(get, settings, str(broker["address"]), conf_dir)
    jvm_options = [
        f"-Xms{heap}m", f"-Xmx{heap}m",
        "-XX:+UseG1GC",
        f"-XX:MaxGCPauseMillis={int(get('gc_max_pause_ms'))}",
        f"-XX:InitiatingHeapOccupancyPercent={int(get('gc_initiating_heap_occupancy_percent'))}",
        "-XX:+DisableExplicitGC",
        "-XX:+ExitOnOutOfMemoryError",
        f"-Xlog:gc*:file={log_dir}/gc.log:time,uptime,level,tags"
        f":filecount={int(get('gc_log_file_count'))},filesize={int(get('gc_log_file_size_mb'))}M",
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={log_dir}",
        log_config["option"],
        # SE-07: the brokers' ZooKeeper login (the Client section).
        *([f"-Djava.security.auth.login.config={jaas}"] if mode.zookeeper_client else []),
        *jmx_options,
        *([metrics["option"]] if metrics["enabled"] else []),
        *[str(o) for o in get("jvm_extra_opts")],
    ]
    # One check never waits longer than the whole gate may.
    health_wait_s = min(HEALTH_WAIT_S, int(setting(settings, "kafka_broker_restart_timeout_s")))
    broker_ids = [int(b["id"]) for b in cluster["brokers"]]
    controller_ids = [int(c["node_id"]) for c in cluster.get("controllers", ())] if kraft else []
    # The health gate of the roll: in KRaft mode every member of this node's kind caught up with
    # the metadata log (KR-08), and for brokers every partition fully replicated (OP-02). Where
    # brokers are controllers too (combined), the brokers' roll restarts voters: every voter
    # caught up as well.
    any_combined = any(c.get("combined") for c in cluster.get("controllers", ()))
    members = controller_ids if dedicated else list(dict.fromkeys(
        broker_ids + (controller_ids if any_combined else [])))

    def health_argv(ids: list[int]) -> list[str]:
        return ["health", "--ids", ",".join(map(str, ids)),
                *(["--max-lag", str(int(cluster["metadata_max_lag"]))] if kraft else []),
                "--wait", str(health_wait_s)]

    # After the converge, the nodes of this node's play: a combined voter starts in the brokers'
    # play, after the dedicated controllers'.
    play_members = [int(c["node_id"]) for c in cluster.get("controllers", ())
                    if not c.get("combined")] if dedicated else members
    read_write = [*broker["log_dirs"], log_dir]
    return {
        "host": host,
        "id": int(broker["id"]),
        "rack": broker.get("rack") or "",
        "address": str(broker["address"]),
        "port": int(broker["port"]),
        "user": str(get("user")),
        "group": str(get("group")),
        "conf_dir": conf_dir,
        "log_dir": log_dir,
        "install_dir": install_dir,
        "release": release,
        # The release's own documentation, as Kafka's site names it (39 for 3.9.x).
        "docs_url": "https://kafka.apache.org/{}/documentation.html".format(
            "".join(map(str, release_key(release)[:2]))),
        "log_config": log_config,
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
        "kind": "controller" if dedicated else "broker and controller" if combined else "broker",
        "mode_note": ("KRaft mode" if kraft else "ZooKeeper mode (no process.roles)")
        + (", migrating the cluster from ZooKeeper to KRaft" if mode.migrating else ""),
        # Every Kafka node's id by host: the roll's member ids.
        "ids_by_host": {**{b["host"]: int(b["id"]) for b in cluster["brokers"]},
                        **{c["host"]: int(c["node_id"])
                           for c in (cluster.get("controllers", ()) if kraft else ())}},
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
                       "--conf", conf_dir, "--libs", f"{install_dir}/libs",
                       "--java", f"{java_home}/bin/java"],
        # KR-11: a controller's unit ends its start once its registration with the quorum is in
        # the metadata log, and fails one whose registration Kafka dropped.
        "registration_argv": [ADMIN_SCRIPT, "--conf", conf_dir, "registration",
                              "--wait", str(REGISTRATION_WAIT_S)] if dedicated else [],
        "admin_client_config": f"{conf_dir}/admin-client.properties",
        "admin_client_properties": java_properties(admin_client),
        "jaas_file": jaas,
        "tls": tls,
        "jmx": jmx,
        "metrics": metrics,
        # Names for the certificate's subject alternative names: every name a client may dial.
        "tls_names": sorted({host, str(broker["address"]),
                             *(str(lst["advertised_host"]) for lst in broker["listeners"])}),
        "broker_ids": broker_ids,
        "racks_by_id": {str(b["id"]): b.get("rack") or "" for b in cluster["brokers"]},
        "server_properties": java_properties(managed),
        "extra_properties": java_properties(extra),
        "heap_mb": heap,
        "java": {
            "binary": f"{java_home}/bin/java",
            # The versioned directory, not the install_dir symlink: a broker still running the
            # old release while the roll reaches the others keeps loading its own jars.
            "classpath": f"{install_dir}-{release}/libs/*",
            "options": jvm_options,
            "main_class": MAIN_CLASS,
            "config": f"{conf_dir}/server.properties",
        },
        "nofile_limit": max(100000, int(setting(settings, "os_tuning_nofile_limit"))),
        "read_write_paths": read_write,
        "directories": service_directories(conf_dir, read_write, str(get("user")),
                                           str(get("group")), metrics),
        "sandbox": sandbox(),
        # OP-03: the files the broker reads only at start; it restarts when one changed after it
        # started. The TLS stores are not among them for a ZooKeeper-mode broker: the running
        # broker reloads them (SE-02). A node that talks to the KRaft quorum restarts for them:
        # its connection to the controllers keeps the certificate and trust it started with.
        "restart_files": [f"{conf_dir}/server.properties", log_config["dest"],
                          f"{conf_dir}/release", f"{SYSTEMD_UNIT_DIR}/kafka.service",
                          tls["secrets"], *([jaas] if mode.zookeeper_client else []), jmx["config"],
                          jmx["password_file"], jmx["access_file"], jmx["ssl_config"],
                          *([tls["keystore"], tls["trust"]] if mode.knows_quorum else [])],
        # The admin helper's arguments for the health gate of the roll, and for the check that
        # ends the converge of this node's play.
        "health_args": health_argv(members),
        "verify_args": health_argv(play_members),
        "health_wait_s": health_wait_s,
        "health_poll_s": HEALTH_POLL_S,
    }
