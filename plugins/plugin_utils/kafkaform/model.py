"""The cluster model: ids, racks, the ensemble, broker log directories and connect strings.

Computed once from an inventory view (groups and per-host variables) and used by every engine: the
preflight, the Ansible roles (through the filter plugin), pyinfra, the cloud provisioner and the
verifiers. The model never raises on bad input: :mod:`kafkaform.checks` reports every problem, and
:func:`build` only runs on an inventory the checks accepted.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from . import catalog, security_steps
from .defaults import as_bool, role_default

#: Inventory groups the model understands.
ZOOKEEPER = "zookeeper"
KAFKA_BROKER = "kafka_broker"
#: The KRaft controllers: the metadata quorum that replaces ZooKeeper (the KR rules). A cluster
#: with controllers and no ZooKeeper ensemble runs in KRaft mode.
KAFKA_CONTROLLER = "kafka_controller"
SPARK_MASTER = "spark_master"
SPARK_WORKER = "spark_worker"
GROUPS = (ZOOKEEPER, KAFKA_CONTROLLER, KAFKA_BROKER, SPARK_MASTER, SPARK_WORKER)
#: The hosts that run Prometheus and Alertmanager for the platform (not members of its clusters).
MONITORING = "monitoring"
#: The listener a KRaft controller serves the quorum and the brokers on (mutual TLS, SE-01).
CONTROLLER_LISTENER = "CONTROLLER"
#: kafka_controller_quorum: voters fixed in every node's controller.quorum.voters, or kept in the
#: metadata log and changed by adding and removing controllers (KIP-853, KR-15).
STATIC_QUORUM, DYNAMIC_QUORUM = "static", "dynamic"
#: Where a dynamic quorum's nodes find the controllers to ask for the voters.
BOOTSTRAP_CONTROLLERS = "controller.quorum.bootstrap.servers"

#: Purposes a declared data disk may serve (os_tuning_data_disks[].purpose).
KAFKA_LOG_DIR = "kafka_log_dir"
ZOOKEEPER_TXN_LOG = "zookeeper_txn_log"
DISK_PURPOSES = (KAFKA_LOG_DIR, ZOOKEEPER_TXN_LOG)


@dataclass(frozen=True)
class InventoryView:
    """What the model reads of an inventory: group members and each host's variables.

    ``hostvars`` values may be lazy mappings (Ansible's ``hostvars``): only ``.get`` is used.
    """

    groups: Mapping[str, Sequence[str]]
    hostvars: Mapping[str, Mapping[str, Any]]
    #: cluster_var's answers: a setting unset everywhere costs a pass over every host, and the
    #: model asks for some once per broker.
    _cluster_values: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Each host's variables, looked up once: Ansible's ``hostvars[host]`` merges every variable
    #: source of the host again on each lookup, and the model reads dozens per host.
    _host_vars: dict[str, Mapping[str, Any]] = field(default_factory=dict, compare=False,
                                                     repr=False)
    #: Cluster settings the running playbook sets where the inventory sets none (e.g.
    #: kafka_kraft_migration while playbooks/kraft_migration.yml runs).
    run_settings: Mapping[str, Any] = field(default_factory=dict)

    def members(self, group: str) -> list[str]:
        return list(self.groups.get(group, ()))

    def variables(self, host: str) -> Mapping[str, Any]:
        """The host's variables (empty for a host the inventory does not have)."""
        if host not in self._host_vars:
            self._host_vars[host] = self.hostvars.get(host, {})
        return self._host_vars[host]

    def var(self, host: str, key: str, default: Any = None) -> Any:
        value = self.variables(host).get(key, default)
        return default if value is None else value

    def cluster_hosts(self) -> list[str]:
        """Every host in one of the model's groups, each once, in inventory order."""
        seen: dict[str, None] = {}
        for group in GROUPS:
            for host in self.members(group):
                seen.setdefault(host, None)
        return list(seen)

    def cluster_var(self, key: str, default: Any = None) -> Any:
        """A cluster-wide setting: the first value found on a cluster host (checks ensure one)."""
        if key not in self._cluster_values:
            self._cluster_values[key] = next(
                (value for host in self.cluster_hosts()
                 if (value := self.var(host, key)) is not None), None)
        value = self._cluster_values[key]
        if value is not None:
            return value
        if self.run_settings.get(key) is not None:
            return self.run_settings[key]
        return role_default(key) if default is None else default


@dataclass(frozen=True)
class DataDisk:
    device: str | None
    mount: str
    purpose: str
    owner: str


@dataclass(frozen=True)
class ZooKeeperMember:
    host: str
    address: str
    id: int
    rack: str | None
    client_port: int
    quorum_port: int
    election_port: int
    #: Where the JVM's metrics agent listens on ``address``; None when it runs none (MO-07).
    metrics_port: int | None = None
    #: The client port that speaks TLS (secureClientPort, SE-18).
    secure_client_port: int = 2182

    @property
    def server_line(self) -> str:
        """The zoo.cfg ``server.X`` entry, identical on every member (ZK-02, ZK-04)."""
        return f"server.{self.id}={self.address}:{self.quorum_port}:{self.election_port}"


#: The listener brokers replicate on and the roles' admin tools use: TLS, both sides
#: authenticated by their certificates (SE-01). Its port is kafka_broker_internal_port.
BROKER_LISTENER = "BROKER"
#: The listener clients use: TLS and SCRAM-SHA-512 (SE-01). Its port is kafka_broker_port.
CLIENT_LISTENER = "CLIENT"
#: Protocols a listener may speak: plaintext ones are refused (SE-01).
LISTENER_PROTOCOLS = ("SSL", "SASL_SSL")
#: The plaintext listener of a cluster built open, kept while kafka_security_migration is set
#: (SE-10); the name such a cluster's brokers replicate on.
PLAINTEXT_LISTENER = "PLAINTEXT"


@dataclass(frozen=True)
class Listener:
    """One Kafka listener of a broker: bound on ``address``, advertised as ``advertised_host``."""

    name: str
    protocol: str
    address: str
    advertised_host: str
    port: int

    @property
    def bind(self) -> str:
        return f"{self.name}://{self.address}:{self.port}"

    @property
    def advertised(self) -> str:
        return f"{self.name}://{self.advertised_host}:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"{self.advertised_host}:{self.port}"


@dataclass(frozen=True)
class Broker:
    host: str
    address: str
    id: int
    rack: str | None
    port: int
    log_dirs: tuple[str, ...]
    listeners: tuple[Listener, ...] = ()
    #: Where the JVM's metrics agent listens on ``address``; None when it runs none (MO-07).
    metrics_port: int | None = None

    def listener(self, name: str) -> Listener | None:
        return next((lst for lst in self.listeners if lst.name == name), None)

    def port_clashes(self, *more: tuple[str, int]) -> list[str]:
        """Ports two of the broker's listeners, or a listener and its metrics agent, share;
        ``more`` adds the host's other ports (a combined node's controller listener)."""
        agent = [("metrics agent", self.metrics_port)] if self.metrics_port else []
        return port_clashes([*((lst.name, lst.port) for lst in self.listeners), *agent, *more])


def port_clashes(named_ports: Iterable[tuple[str, int]]) -> list[str]:
    """Ports that two or more listeners would bind, e.g. ``9092 (CLIENT, PLAINTEXT)``."""
    names: dict[int, list[str]] = {}
    for name, port in named_ports:
        names.setdefault(port, []).append(name)
    return [f"{port} ({', '.join(listed)})" for port, listed in sorted(names.items())
            if len(listed) > 1]


@dataclass(frozen=True)
class Controller:
    """A KRaft controller: a member of the metadata quorum, named by its node id (KR-02)."""

    host: str
    address: str
    node_id: int
    rack: str | None
    #: Also a broker of the cluster (KRaft's combined mode, an explicit opt-in: KR-04).
    combined: bool = False
    #: The port of its CONTROLLER listener (kafka_controller_port).
    port: int = 0
    #: Where it keeps the metadata log (kafka_controller_metadata_dir).
    metadata_dir: str = ""

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"


@dataclass(frozen=True)
class SparkNode:
    host: str
    address: str
    role: str
    master_port: int  # the port a master listens on (the host's spark_node_master_port)
    #: The plain port of the web UI of the node's role (spark_node_master_webui_port or
    #: spark_node_worker_webui_port); the UI and its metrics answer over TLS on a port above it.
    webui_port: int = 0


@dataclass(frozen=True)
class Cluster:
    name: str
    zookeeper_chroot: str
    ensemble: tuple[ZooKeeperMember, ...]
    brokers: tuple[Broker, ...]
    spark_masters: tuple[SparkNode, ...]
    spark_workers: tuple[SparkNode, ...]
    replication_factor: int
    min_insync_replicas: int
    spark_shared_dir: str = ""
    data_disks: Mapping[str, tuple[DataDisk, ...]] = field(default_factory=dict)
    security_migration: str = ""  # kafka_security_migration (SE-10)
    zookeeper_tls_migration: str = ""  # kafka_zookeeper_tls_migration (SE-18)
    controllers: tuple[Controller, ...] = ()
    #: The id every node's storage is formatted with (KRaft mode): kafka_cluster_id, or one
    #: derived from the cluster's name, so every run computes the same without keeping state.
    #: Without kafka_cluster_id, a cluster whose nodes' storage holds an id runs with that one
    #: (plans.kafka_broker.running_cluster: a cluster migrated from ZooKeeper keeps its own).
    cluster_id: str = ""
    #: The inventory names kafka_cluster_id.
    cluster_id_declared: bool = False
    #: The Kafka release of a node whose inventory names no kafka_broker_version: a new
    #: cluster's (:func:`kafka_release`); a run takes the line its nodes run instead
    #: (plans.kafka_broker.running_cluster).
    kafka_release: str = ""
    #: Where a migration from ZooKeeper to KRaft stands (kafka_kraft_migration, KR-09): empty,
    #: or a state of kafkaform.kraft_migration.STATES.
    kraft_migration: str = ""
    #: The most records a node may lag the metadata log's leader and count as caught up
    #: (kafka_controller_max_lag), for the controllers' and the brokers' gates alike (KR-08).
    metadata_max_lag: int = 0
    #: How the controllers' voters are kept (kafka_controller_quorum): STATIC_QUORUM or
    #: DYNAMIC_QUORUM (KR-15).
    controller_quorum: str = STATIC_QUORUM
    #: A quorum leader has written a controller's metadata log: a dynamic quorum's first voters
    #: are chosen, and a new controller joins them (plans.running_cluster).
    quorum_formed: bool = False
    #: The brokers whose Kafka was running when the run read the hosts, in the inventory's order
    #: (plans.running_cluster): they can answer before the run starts any broker.
    serving_brokers: tuple[str, ...] = ()
    #: kafkaform_allow_single_controller: fewer than 3 controllers are allowed (KR-01).
    allow_single_controller: bool = False

    @property
    def metadata_mode(self) -> str:
        """The brokers' mode: ``kraft`` when the cluster has controllers and no ZooKeeper
        ensemble, or a migration brought its brokers to KRaft; else ``zookeeper``."""
        migrated = self.kraft_migration in ("kraft_brokers", "finalized")
        return "kraft" if self.controllers and (not self.ensemble or migrated) else "zookeeper"

    @property
    def dynamic_quorum(self) -> bool:
        """Whether the controllers' voters are kept in the metadata log (KR-15): what every
        plan and context reads, decided here once."""
        return self.controller_quorum == DYNAMIC_QUORUM

    @property
    def controller_quorum_voters(self) -> str:
        """``id@host:port,...`` of every controller: controller.quorum.voters (static quorum)."""
        return ",".join(f"{c.node_id}@{c.endpoint}" for c in self.controllers)

    @property
    def bootstrap_controllers(self) -> str:
        """``host:port,...`` of every controller: what the quorum tools connect to."""
        return ",".join(c.endpoint for c in self.controllers)

    @property
    def zookeeper_tls_step(self) -> str:
        """The TLS step of the ensemble this run builds (SE-18, kafkaform.security_steps)."""
        return security_steps.tls_target_step(self.zookeeper_tls_migration,
                                              self.security_migration)

    @property
    def zookeeper_over_tls(self) -> bool:
        """Whether brokers and probes reach the members on their secure client port."""
        return security_steps.clients_use_tls(self.zookeeper_tls_step)

    @property
    def zookeeper_endpoints(self) -> dict[str, str]:
        """``host:port`` where clients (brokers, the probes) reach each member, by inventory
        name: its secure client port once clients use TLS, else its plain one."""
        return {m.host: f"{m.address}:"
                        f"{m.secure_client_port if self.zookeeper_over_tls else m.client_port}"
                for m in self.ensemble}

    @property
    def zookeeper_connect(self) -> str:
        """``host:port,...`` of every member plus the cluster's chroot (KB-05: commas)."""
        return f"{','.join(self.zookeeper_endpoints.values())}{self.zookeeper_chroot}"

    @property
    def bootstrap_servers(self) -> str:
        """The client listener (SASL_SSL) of every broker: what applications connect to."""
        return ",".join(f"{b.address}:{b.port}" for b in self.brokers)

    @property
    def admin_listener(self) -> str:
        """The listener the roles' admin tools use: the broker listener (mutual TLS), or while a
        cluster built open is being secured the plaintext one, which every broker serves at
        every step (SE-10)."""
        return PLAINTEXT_LISTENER if self.security_migration else BROKER_LISTENER

    @property
    def admin_bootstrap_servers(self) -> str:
        """The admin listener of every broker: what the roles' admin tools connect to."""
        return ",".join(lst.endpoint for b in self.brokers
                        if (lst := b.listener(self.admin_listener)) is not None)

    @property
    def spark_master_url(self) -> str | None:
        if not self.spark_masters:
            return None
        return "spark://" + ",".join(f"{m.address}:{m.master_port}" for m in self.spark_masters)

    @property
    def racks(self) -> tuple[str, ...]:
        return tuple(sorted({b.rack for b in self.brokers if b.rack is not None}))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for templates and Ansible: every computed value under a stable key."""
        data = asdict(self)
        data["zookeeper_connect"] = self.zookeeper_connect
        data["zookeeper_tls_step"] = self.zookeeper_tls_step
        data["zookeeper_over_tls"] = self.zookeeper_over_tls
        data["zookeeper_endpoints"] = self.zookeeper_endpoints
        data["zookeeper_servers"] = [m.server_line for m in self.ensemble]
        data["bootstrap_servers"] = self.bootstrap_servers
        data["admin_bootstrap_servers"] = self.admin_bootstrap_servers
        data["admin_listener"] = self.admin_listener
        data["spark_master_url"] = self.spark_master_url
        data["racks"] = list(self.racks)
        data["brokers_by_host"] = {b.host: asdict(b) for b in self.brokers}
        data["ensemble_by_host"] = {m.host: asdict(m) for m in self.ensemble}
        data["metadata_mode"] = self.metadata_mode
        data["dynamic_quorum"] = self.dynamic_quorum
        data["controller_quorum_voters"] = self.controller_quorum_voters
        data["bootstrap_controllers"] = self.bootstrap_controllers
        data["controllers_by_host"] = {c.host: asdict(c) for c in self.controllers}
        return data


def as_int(value: Any) -> int | None:
    """An integer from inventory data (``3`` or ``"3"``), or None; booleans are not integers."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def address(view: InventoryView, host: str) -> str:
    """How other hosts reach ``host``: ``ansible_host`` when set, else its inventory name."""
    return str(view.var(host, "ansible_host", host))


def rack_of(view: InventoryView, host: str) -> str | None:
    rack = view.var(host, "rack")
    return None if rack in (None, "") else str(rack)


def data_disks(view: InventoryView, host: str) -> tuple[DataDisk, ...]:
    """The host's declared data disks; entries the checks reject are left out here."""
    disks = []
    for entry in view.var(host, "os_tuning_data_disks", []) or []:
        if not isinstance(entry, Mapping) or not entry.get("mount"):
            continue
        purpose = str(entry.get("purpose", ""))
        owner = entry.get("owner") or ("zookeeper" if purpose == ZOOKEEPER_TXN_LOG else "kafka")
        device = entry.get("device")
        disks.append(DataDisk(None if device is None else str(device), str(entry["mount"]),
                              purpose, str(owner)))
    return tuple(disks)


def broker_log_dirs(view: InventoryView, host: str) -> tuple[str, ...]:
    """One Kafka log directory per data mount (KB-06, DF-03), else the role's default."""
    mounts = [d.mount for d in data_disks(view, host) if d.purpose == KAFKA_LOG_DIR]
    if mounts:
        return tuple(f"{m.rstrip('/')}/kafka-logs" for m in mounts)
    return (str(role_default("kafka_broker_default_log_dir")),)


def ensemble(view: InventoryView) -> tuple[ZooKeeperMember, ...]:
    members = []
    for host in view.members(ZOOKEEPER):
        member_id = as_int(view.var(host, "zookeeper_id"))
        if member_id is None:
            continue
        members.append(ZooKeeperMember(
            host=host,
            address=address(view, host),
            id=member_id,
            rack=rack_of(view, host),
            client_port=int(view.var(host, "zookeeper_client_port",
                                     role_default("zookeeper_client_port"))),
            quorum_port=int(view.var(host, "zookeeper_quorum_port",
                                     role_default("zookeeper_quorum_port"))),
            election_port=int(view.var(host, "zookeeper_election_port",
                                       role_default("zookeeper_election_port"))),
            metrics_port=metrics_port(view, host, "zookeeper"),
            secure_client_port=int(view.var(host, "zookeeper_secure_client_port",
                                            role_default("zookeeper_secure_client_port"))),
        ))
    return tuple(sorted(members, key=lambda m: m.id))


def combined_hosts(view: InventoryView) -> tuple[str, ...]:
    """The KRaft controllers' hosts that are brokers too (combined mode), in inventory order,
    whatever their ids."""
    brokers = set(view.members(KAFKA_BROKER))
    return tuple(host for host in view.members(KAFKA_CONTROLLER) if host in brokers)


def controllers(view: InventoryView) -> tuple[Controller, ...]:
    """The KRaft controllers, by node id; hosts without a valid kafka_node_id are left out here."""
    combined = set(combined_hosts(view))

    def setting(host: str, key: str) -> Any:
        return view.var(host, key, role_default(key))

    found = [Controller(host, address(view, host), node_id, rack_of(view, host), host in combined,
                        as_int(setting(host, "kafka_controller_port")) or 0,
                        str(setting(host, "kafka_controller_metadata_dir")).rstrip("/"))
             for host in view.members(KAFKA_CONTROLLER)
             if (node_id := as_int(view.var(host, "kafka_node_id"))) is not None]
    return tuple(sorted(found, key=lambda c: c.node_id))


def cluster_id(view: InventoryView) -> str:
    """kafka_cluster_id, or a Kafka cluster id (16 bytes, base64url) derived from the cluster's
    name: the same on every run and every control node."""
    explicit = view.cluster_var("kafka_cluster_id")
    if explicit:
        return str(explicit)
    name = str(view.cluster_var("kafka_cluster_name"))
    digest = uuid.uuid5(uuid.NAMESPACE_URL, f"kafkaform:kafka-cluster:{name}").bytes
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def kafka_release(view: InventoryView) -> str:
    """The Kafka release of a new cluster's nodes when the inventory names none
    (catalog.kafka_release): its mode's newest, Kafka 4 for a cluster in KRaft mode from the start
    (controllers, no ZooKeeper ensemble, no migration). A migrated cluster's nodes run the 3.9 line
    the migration ran on, and keep it until the inventory names a Kafka 4 release (KR-10)."""
    kraft = (bool(view.members(KAFKA_CONTROLLER)) and not view.members(ZOOKEEPER)
             and not view.cluster_var("kafka_kraft_migration"))
    return catalog.kafka_release(kraft)


def metrics_port(view: InventoryView, host: str, role: str) -> int | None:
    """The port of the JMX exporter agent the role runs in the host's JVM, or None (MO-07)."""
    enabled = view.var(host, f"{role}_metrics_enabled", role_default(f"{role}_metrics_enabled"))
    if not as_bool(enabled):
        return None
    return as_int(view.var(host, f"{role}_metrics_port", role_default(f"{role}_metrics_port")))


def broker_listeners(view: InventoryView, host: str) -> tuple[Listener, ...]:
    """The broker listener, the client listener and the host's extra listeners, in that order;
    entries the checks reject are left out here."""
    own = address(view, host)

    def port(key: str) -> int:
        return as_int(view.var(host, key, role_default(key))) or 0

    found = [Listener(BROKER_LISTENER, "SSL", own, own, port("kafka_broker_internal_port")),
             Listener(CLIENT_LISTENER, "SASL_SSL", own, own, port("kafka_broker_port"))]
    if view.cluster_var("kafka_security_migration"):
        plaintext = as_int(view.cluster_var("kafka_plaintext_port")) or 0
        found.append(Listener(PLAINTEXT_LISTENER, "PLAINTEXT", own, own, plaintext))
    for entry in view.var(host, "kafka_broker_extra_listeners", []) or []:
        if not isinstance(entry, Mapping) or as_int(entry.get("port")) is None:
            continue
        found.append(Listener(
            name=str(entry.get("name", "")).upper(),
            protocol=str(entry.get("protocol", "SASL_SSL")).upper(),
            address=str(entry.get("address") or own),
            advertised_host=str(entry.get("advertised_host") or entry.get("address") or own),
            port=as_int(entry.get("port")) or 0,
        ))
    return tuple(found)


def brokers(view: InventoryView) -> tuple[Broker, ...]:
    found = []
    for host in view.members(KAFKA_BROKER):
        broker_id = as_int(view.var(host, "kafka_broker_id"))
        if broker_id is None:
            continue
        found.append(Broker(
            host=host,
            address=address(view, host),
            id=broker_id,
            rack=rack_of(view, host),
            port=int(view.var(host, "kafka_broker_port", role_default("kafka_broker_port"))),
            log_dirs=broker_log_dirs(view, host),
            listeners=broker_listeners(view, host),
            metrics_port=metrics_port(view, host, "kafka_broker"),
        ))
    return tuple(sorted(found, key=lambda b: b.id))


def zookeeper_chroot(view: InventoryView) -> str:
    """The cluster's chroot: explicit ``kafka_zookeeper_chroot`` or ``/kafka/<cluster name>``."""
    chroot = view.cluster_var("kafka_zookeeper_chroot", "") or ""
    if not chroot:
        chroot = f"/kafka/{view.cluster_var('kafka_cluster_name')}"
    return "/" + str(chroot).strip("/")


def spark_master_port(view: InventoryView, host: str) -> int:
    """The one computation of a master's port: the URL every node and driver uses comes from it."""
    value = view.var(host, "spark_node_master_port")
    return as_int(value if value is not None else role_default("spark_node_master_port")) or 0


def spark_webui_port(view: InventoryView, host: str, role: str) -> int:
    """The plain web UI port of ``host`` as a member of the Spark group ``role``."""
    name = f"spark_node_{'master' if role == SPARK_MASTER else 'worker'}_webui_port"
    return as_int(view.var(host, name, role_default(name))) or 0


def build(view: InventoryView) -> Cluster:
    """The cluster model of an inventory (run :func:`kafkaform.checks.check` first)."""
    spark = {
        role: tuple(SparkNode(h, address(view, h), role, spark_master_port(view, h),
                              spark_webui_port(view, h, role))
                    for h in view.members(role))
        for role in (SPARK_MASTER, SPARK_WORKER)
    }
    return Cluster(
        name=str(view.cluster_var("kafka_cluster_name")),
        zookeeper_chroot=zookeeper_chroot(view),
        ensemble=ensemble(view),
        brokers=brokers(view),
        spark_masters=spark[SPARK_MASTER],
        spark_workers=spark[SPARK_WORKER],
        replication_factor=as_int(view.cluster_var("kafka_default_replication_factor")) or 0,
        min_insync_replicas=as_int(view.cluster_var("kafka_min_insync_replicas")) or 0,
        spark_shared_dir=str(view.cluster_var("spark_node_shared_dir")),
        data_disks={h: data_disks(view, h) for h in view.cluster_hosts()},
        security_migration=str(view.cluster_var("kafka_security_migration") or ""),
        zookeeper_tls_migration=str(view.cluster_var("kafka_zookeeper_tls_migration") or ""),
        controllers=controllers(view),
        cluster_id=cluster_id(view),
        cluster_id_declared=bool(view.cluster_var("kafka_cluster_id")),
        kafka_release=kafka_release(view),
        kraft_migration=str(view.cluster_var("kafka_kraft_migration") or ""),
        metadata_max_lag=as_int(view.cluster_var("kafka_controller_max_lag")) or 0,
        controller_quorum=str(view.cluster_var("kafka_controller_quorum") or STATIC_QUORUM),
        allow_single_controller=bool(view.cluster_var("kafkaform_allow_single_controller")),
    )
