"""server.properties of a Kafka node, one function per concern, as the cluster model decides them.

Listeners and security (SE-01, SE-02, SE-03, SE-17, SE-18), what a KRaft node is and how it
finds the quorum (KR-02, KR-06, KR-09), the model's own values and the topics' settings (KB-12):
:func:`kafkaform.contexts.kafka_broker.kafka_broker_context` joins them, checks the extra
properties against them and renders the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import tls_policy
from ..kraft_migration import MIGRATION_KEY, NodeMode, node_mode
from ..model import (
    BOOTSTRAP_CONTROLLERS,
    BROKER_LISTENER,
    CONTROLLER_LISTENER,
    PLAINTEXT_LISTENER,
)


def as_text(value: Any) -> str:
    """A value as server.properties spells it: booleans in lower case."""
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


def quorum_file(conf_dir: str) -> str:
    """Where a node of a dynamic quorum keeps the controllers it bootstraps from (KR-15)."""
    return f"{conf_dir}/quorum.properties"


def quorum_bootstrap(cluster: Mapping[str, Any], conf_dir: str, mode: NodeMode) -> dict[str, str]:
    """A dynamic quorum's node's quorum file (its path and content), or {} for any other node."""
    if not mode.kraft or not cluster["dynamic_quorum"]:
        return {}
    return {"dest": quorum_file(conf_dir),
            "content": f"{BOOTSTRAP_CONTROLLERS}={cluster['bootstrap_controllers']}\n"}


def kraft_properties(cluster: Mapping[str, Any], roles: str, node_id: int,
                     conf_dir: str) -> dict[str, str]:
    """What a node of a cluster in KRaft mode is, and how it finds the quorum (KR-02, KR-06):
    a static quorum's voters, or the controllers a dynamic quorum's node asks for them, read
    from a file of their own, which only a start reads: a controller added or removed needs no
    restart of every node (KR-15)."""
    finds = ({BOOTSTRAP_CONTROLLERS: f"${{file:{quorum_file(conf_dir)}:{BOOTSTRAP_CONTROLLERS}}}"}
             if cluster["dynamic_quorum"]
             else {"controller.quorum.voters": str(cluster["controller_quorum_voters"])})
    return {
        "process.roles": roles,
        "node.id": str(node_id),
        **finds,
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
                          mode: NodeMode, conf_dir: str) -> dict[str, str]:
    """server.properties values the cluster model decides for one KRaft controller."""
    return {
        **kraft_properties(cluster, "controller", int(controller["node_id"]), conf_dir),
        "listeners": f"{CONTROLLER_LISTENER}://{controller['address']}:{controller['port']}",
        "log.dirs": str(controller["metadata_dir"]),
        # With eligible leader replicas (on by default on a cluster formatted by Kafka 4.x), the
        # active controller writes its own min.insync.replicas as the cluster-wide default, which
        # then overrides every broker's (KIP-966): without it, Kafka's default of 1.
        "min.insync.replicas": str(cluster["min_insync_replicas"]),
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
                     mode: NodeMode, roles: str = "broker", conf_dir: str = "") -> dict[str, str]:
    """server.properties values the cluster model decides for one broker (in KRaft mode with
    ``roles``: broker, or broker,controller for a combined node)."""
    props = {
        **(kraft_properties(cluster, roles, int(broker["id"]), conf_dir) if mode.kraft
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


@dataclass(frozen=True)
class KafkaNode:
    """One Kafka node as its context reads it: a broker, or a controller in a broker's shape
    (``broker``), its entry among the controllers if it is one, and its mode (KR-04)."""

    broker: Mapping[str, Any]
    controller: Mapping[str, Any] | None
    mode: NodeMode

    @property
    def combined(self) -> bool:
        """A broker that is a controller too."""
        return self.controller is not None and bool(self.controller.get("combined"))

    @property
    def dedicated(self) -> bool:
        """A controller on a host of its own: it serves no topic."""
        return self.controller is not None and not self.combined


@dataclass(frozen=True)
class PlainInput:
    """A server.properties key that is one role input, rendered as given: the input (after
    ``kafka_broker_``), its type, and the value at which the key is left out (Kafka's own
    default), so that a new input changes no running broker's file until it is set."""

    name: str
    kind: type[int] | type[bool] = int
    unset: int | None = None


#: The keys that are each one plain role input. A new such input is its default, its spec and one
#: line here; an extra property may not set these keys (contexts.kafka_broker.VARIABLE_KEYS).
PLAIN_INPUTS: dict[str, PlainInput] = {
    "num.partitions": PlainInput("num_partitions"),  # KB-09
    "num.recovery.threads.per.data.dir": PlainInput("num_recovery_threads_per_data_dir"),  # KB-07
    "auto.leader.rebalance.enable": PlainInput("auto_leader_rebalance_enable", bool),  # KB-16
    "delete.topic.enable": PlainInput("delete_topic_enable", bool),  # KB-17
    "log.retention.ms": PlainInput("log_retention_ms"),  # KB-10
    "log.retention.bytes": PlainInput("log_retention_bytes", unset=-1),  # KB-10, per partition
    "log.segment.bytes": PlainInput("log_segment_bytes"),  # KB-11
}


def plain_properties(get: Callable[[str], Any]) -> dict[str, str]:
    """:data:`PLAIN_INPUTS` as server.properties lines, those at their unset value left out."""
    found = {}
    for key, plain in PLAIN_INPUTS.items():
        value = get(plain.name)
        if plain.kind is bool:
            found[key] = as_text(bool(value))
        elif plain.unset is None or int(value) != plain.unset:
            found[key] = str(int(value))
    return found


def topic_properties(cluster: Mapping[str, Any], get: Callable[[str], Any],
                     heap: int) -> dict[str, str]:
    """The settings of a broker's topics and logs: the role's variables, the replication of the
    internal topics sized from the cluster, the cleaner's buffer within the heap (KB-12)."""
    message_max = int(get("message_max_bytes"))
    brokers = len(cluster["brokers"])
    dedupe_mb = min(int(get("log_cleaner_dedupe_buffer_mb")), max(1, heap // 4))
    return {
        **plain_properties(get),
        "message.max.bytes": str(message_max),
        "replica.fetch.max.bytes": str(max(message_max, 1048576)),
        "log.cleaner.enable": "true",
        "log.cleaner.dedupe.buffer.size": str(dedupe_mb * 1024 * 1024),
        "offsets.topic.replication.factor": str(min(3, brokers)),
        "transaction.state.log.replication.factor": str(min(3, brokers)),
        "transaction.state.log.min.isr": str(min(2, brokers)),
    }


def node_properties(cluster: Mapping[str, Any], node: KafkaNode, tls: Mapping[str, str],
                    get: Callable[[str], Any], threads: tuple[int, int],
                    heap: int, conf_dir: str) -> tuple[dict[str, str], dict[str, str],
                                                       dict[str, str]]:
    """The model's, the security and every managed server.properties line of the node, before the
    extra properties: ``(model, security, managed)``; ``threads`` the network and I/O threads."""
    broker, mode = node.broker, node.mode
    network, io = threads
    topics = topic_properties(cluster, get, heap)
    security = security_properties(broker, tls, get("users"),
                                   str(cluster.get("security_migration") or ""), mode,
                                   bool(cluster.get("zookeeper_over_tls")))
    if node.dedicated and node.controller is not None:
        model = controller_properties(cluster, node.controller, mode, conf_dir)
    else:
        model = model_properties(cluster, broker, mode,
                                 "broker,controller" if node.combined else "broker", conf_dir)
    managed = {
        **model,
        **security,
        # A dedicated controller serves no topic: the brokers' settings are not its.
        **({} if node.dedicated else topics),
        "num.network.threads": str(network),
        "num.io.threads": str(io),
        **({} if not mode.zookeeper_client else {
            "zookeeper.session.timeout.ms": str(int(get("zookeeper_session_timeout_ms")))}),
    }
    return model, security, managed
