# Managed by kafkaform (roles/kafka_broker/files/kafkaform_admin.py); local changes are overwritten.
"""Kafka administration through Kafka's admin protocol: topics, their configs, ACLs,
leader elections, a broker's dynamic TLS stores and the cluster's health, asked of the cluster
by one client in one process (kafka-python's KafkaAdminClient, installed beside this file by the
kafka_broker role), never by parsing the text of Kafka's command-line tools.

The client connects as the node's own admin configuration says (admin-client.properties: the
BROKER listener over TLS with the broker's certificate, a super user; in plaintext while a
cluster built open is being secured). ``kafkaform-kafka`` calls it; its JVM tools remain only
where Kafka has no client API for the question (storage format, features, the metadata quorum
of a controller, ZooKeeper's znodes). SCRAM users are kafkaform_scram's, beside this file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

FILE_REFERENCE = re.compile(r"\$\{file:(?P<path>[^:}]+):(?P<key>[^}]+)\}")
PEM_CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.S)
#: Seconds one request may take; a health check repeats rather than waits.
REQUEST_TIMEOUT_MS = 20_000
#: The election error that means the preferred replica already leads: nothing to do.
ELECTION_NOT_NEEDED = 84

Properties = Mapping[str, str]
Binding = list[str]


def properties(path: str) -> dict[str, str]:
    """A Java properties file's ``key=value`` lines (no continuation lines: kafkaform writes
    none)."""
    values = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _equals, value = line.partition("=")
                values[key.strip()] = value.strip()
    return values


def resolved(value: str) -> str:
    """A value with a ${file:<path>:<key>} reference read (SE-06)."""
    reference = FILE_REFERENCE.fullmatch(value)
    return properties(reference["path"])[reference["key"]] if reference else value


def tls_context(client: Properties) -> ssl.SSLContext:
    """The TLS context of ``client`` (admin-client.properties): the cluster CA's PEM bundle and
    the PKCS12 keystore's key and certificate. Python reads no PKCS12, so openssl writes them as
    PEM into a private directory that is gone once the context has read them."""
    context = ssl.create_default_context(cafile=client["ssl.truststore.location"])
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="kafkaform-admin-") as private:
        pem = os.path.join(private, "client.pem")
        subprocess.run(["openssl", "pkcs12", "-in", client["ssl.keystore.location"], "-nodes",
                        "-out", pem, "-passin", "env:KAFKAFORM_KEYSTORE_PASSWORD"],
                       check=True, capture_output=True,
                       env={**os.environ, "KAFKAFORM_KEYSTORE_PASSWORD":
                            resolved(client["ssl.keystore.password"])})
        context.load_cert_chain(pem)
    return context


def connect(client_config: str, bootstrap: str) -> Any:
    """An admin client of the cluster, connected as the ``client_config`` file says
    (admin-client.properties), through ``bootstrap``."""
    client = properties(client_config)
    options: dict[str, Any] = {
        "bootstrap_servers": bootstrap.split(","),
        "client_id": "kafkaform",
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
    }
    if client.get("security.protocol") == "SSL":
        options.update(security_protocol="SSL", ssl_context=tls_context(client))
    return KafkaAdminClient(**options)


# --- topics --------------------------------------------------------------------------------

def topics_state(admin: Any) -> dict[str, dict[str, Any]]:
    """Every topic but Kafka's internal ones: partitions, replication factor and the configs
    set on it or inherited from a broker's non-default value, as TopicCommand --describe shows
    them (kafkaform.topics plans from this)."""
    described = [t for t in admin.describe_topics() if not t.get("is_internal")]
    names = sorted(t["name"] for t in described)
    configs = admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, name) for name in names], config_filter="all"
    ).get("topic", {}) if names else {}
    state = {}
    for topic in described:
        partitions = topic.get("partitions") or []
        state[topic["name"]] = {
            "partitions": len(partitions),
            "replication_factor": len(partitions[0]["replica_nodes"]) if partitions else 0,
            "configs": {key: str(value.get("value"))
                        for key, value in sorted(configs.get(topic["name"], {}).items())
                        if value.get("config_source") != "DEFAULT_CONFIG"},
        }
    return state


def partitions(admin: Any) -> list[dict[str, Any]]:
    """Each partition's topic, number, leader, replicas and in-sync replicas."""
    return [{"topic": topic["name"], "partition": part["partition_index"],
             "leader": part["leader_id"], "replicas": list(part["replica_nodes"]),
             "isr": list(part["isr_nodes"])}
            for topic in admin.describe_topics() for part in topic.get("partitions") or []]


def placement(admin: Any) -> dict[str, Any]:
    """Where every partition's replicas are and which are in sync, with the min.insync.replicas
    that applies to it (its topic's, else the brokers'), Kafka's internal topics included, and
    each registered broker's rack: which brokers may restart together (OP-04,
    kafkaform.plans.restart_batches) and where replicas move (OP-05, OP-06,
    kafkaform.plans.reassignment) are decided from it."""
    brokers = [{"id": int(b["broker_id"]), "rack": b.get("rack")}
               for b in admin.describe_cluster().get("brokers") or []]
    sizes: dict[tuple[str, int], int] = {}
    for broker in brokers:
        broker.update(disks(admin, broker["id"], sizes))
    described = admin.describe_topics()
    names = sorted(t["name"] for t in described)
    configs = admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, name) for name in names], config_filter="all"
    ).get("topic", {}) if names else {}
    found = []
    for topic in described:
        effective = configs.get(topic["name"], {}).get("min.insync.replicas", {})
        for part in topic.get("partitions") or []:
            found.append({"topic": topic["name"], "partition": part["partition_index"],
                          "leader": part["leader_id"], "replicas": list(part["replica_nodes"]),
                          "isr": list(part["isr_nodes"]),
                          "min_insync": int(effective.get("value") or 1),
                          "size": sizes.get((topic["name"], part["partition_index"]), 0)})
    # The finalized metadata.version (KRaft; None in ZooKeeper mode): whether brokers can be
    # cordoned (kafkaform.plans.cordon).
    level = (admin.describe_features().get("metadata.version", {}).get("finalized") or [0, None])
    return {"partitions": found, "brokers": sorted(brokers, key=lambda b: b["id"]),
            "metadata_level": level[1]}


def disks(admin: Any, broker: int, sizes: dict[tuple[str, int], int]) -> dict[str, Any]:
    """A broker's log directories' bytes, in all and free (None when it does not say: a broker
    older than Kafka 3.3, or one that does not answer), adding each replica's size to ``sizes``
    (the largest copy of each partition, near enough its leader's): whether moved replicas fit
    is decided from them (OP-07)."""
    try:
        answer = admin.describe_log_dirs(brokers=[broker])
    except Exception:  # pylint: disable=broad-exception-caught
        return {"total": None, "usable": None, "log_dirs": {}}
    dirs = [d for reply in answer for d in reply.get("log_dirs", [])
            if not d.get("error_code")]
    # Each log directory's bytes and replicas ("topic-partition": bytes): where a broker's
    # replicas move between its own directories is decided from them (OP-11).
    each: dict[str, Any] = {}
    for found in dirs:
        replicas = each.setdefault(str(found["log_dir"]), {
            "total": _known(found.get("total_bytes")), "usable": _known(found.get("usable_bytes")),
            "replicas": {}})["replicas"]
        for topic in found.get("topics") or []:
            for part in topic.get("partitions") or []:
                key = (topic["name"], int(part["partition_index"]))
                sizes[key] = max(sizes.get(key, 0), int(part["partition_size"]))
                if not part.get("is_future_key"):
                    replicas[f"{key[0]}-{key[1]}"] = int(part["partition_size"])
    known = [d for d in each.values() if d["total"] is not None]
    return {"total": sum(d["total"] for d in known) if known else None,
            "usable": sum(d["usable"] or 0 for d in known) if known else None, "log_dirs": each}


def _known(value: Any) -> int | None:
    """A byte count a broker gave, or None where it does not say (-1, or absent)."""
    return None if value is None or int(value) < 0 else int(value)


def apply_topic(admin: Any, action: Mapping[str, Any], dry_run: bool) -> str:
    """One action of kafkaform.topics.plan; the broker assigns a new topic's replicas across
    racks (RA-02)."""
    topic = str(action["topic"])
    if dry_run:
        return f"(dry run) {action['message']}"
    if action["action"] == "create":
        admin.create_topics({topic: {"num_partitions": int(action["partitions"]),
                                     "replication_factor": int(action["replication_factor"]),
                                     "configs": dict(action.get("configs") or {})}})
    elif action["action"] == "partitions":
        admin.create_partitions({topic: int(action["partitions"])})
    elif action["action"] == "configs":
        changes: dict[str, Any] = dict(action.get("add") or {})
        changes.update({key: ("DELETE", None) for key in action.get("delete") or []})
        _altered(admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs=changes)],
            raise_on_unknown=False, incremental=True))
    else:
        raise SystemExit(f"kafkaform-kafka: unknown action {action['action']!r}")
    return str(action["message"])


def _altered(result: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise on any resource an alter_configs call did not change."""
    failed = {f"{kind} {name}": str(answer) for kind, named in result.items()
              for name, answer in named.items() if answer not in (None, "OK")}
    if failed:
        raise SystemExit(f"kafkaform-kafka: configs not changed: {failed}")


# --- ACLs ----------------------------------------------------------------------------------

def acl_bindings(admin: Any) -> list[Binding]:
    """Every ACL binding, in Kafka's upper-case spelling: resource type, resource name, pattern
    type, principal, host, operation, permission (kafkaform.acls plans from these)."""
    found, error = admin.describe_acls(ACLFilter(
        principal=None, host=None, operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY,
        resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                               ACLResourcePatternType.ANY)))
    if error is not None and error.errno:
        raise SystemExit(f"kafkaform-kafka: cannot list ACLs: {error}")
    return sorted([acl.resource_pattern.resource_type.name, acl.resource_pattern.resource_name,
                   acl.resource_pattern.pattern_type.name, acl.principal, acl.host,
                   acl.operation.name, acl.permission_type.name] for acl in found)


def _acls(action: Mapping[str, Any]) -> Iterator[Any]:
    """The concrete ACLs of one planned action, one per operation."""
    resource = ResourcePattern(ResourceType[str(action["resource_type"]).upper()],
                               str(action["resource_name"]),
                               ACLResourcePatternType[str(action["pattern_type"]).upper()])
    for operation in action["operations"]:
        yield ACL(principal=str(action["principal"]), host=str(action["host"]),
                  operation=ACLOperation[_upper(str(operation))],
                  permission_type=ACLPermissionType[str(action["permission"]).upper()],
                  resource_pattern=resource)


def _upper(name: str) -> str:
    """``DescribeConfigs`` -> ``DESCRIBE_CONFIGS``."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()


def apply_acl(admin: Any, action: Mapping[str, Any], dry_run: bool) -> str:
    """Add or remove the bindings of one action of kafkaform.acls.plan."""
    if dry_run:
        return f"(dry run) {action['message']}"
    acls = list(_acls(action))
    if action["action"] == "add":
        result = admin.create_acls(acls)
        if result.get("failed"):
            raise SystemExit(f"kafkaform-kafka: ACLs not created: {result['failed']}")
    else:
        for _filter, _removed, error in admin.delete_acls(acls):
            if error is not None and error.errno:
                raise SystemExit(f"kafkaform-kafka: ACLs not removed: {error}")
    return str(action["message"])


# --- a plan's actions, in one run --------------------------------------------------------------

#: How one action of a plan is applied: apply_topic or apply_acl.
Apply = Callable[[Any, Mapping[str, Any], bool], str]


def planned_actions(text: str) -> list[Mapping[str, Any]]:
    """The actions of ``text``: one action of a plan (a JSON object) or a list of them."""
    given = json.loads(text)
    actions = given if isinstance(given, list) else [given]
    if not all(isinstance(action, dict) for action in actions):
        raise SystemExit("kafkaform-kafka: expected one action (a JSON object) or a JSON list "
                         "of them")
    return actions


def apply_each(admin: Any, actions: Sequence[Mapping[str, Any]], apply: Apply, dry_run: bool,
               say: Callable[[str], None]) -> None:
    """Apply ``actions`` in order with one client, handing each one's message to ``say`` once it
    is applied. The first that fails stops the run with a message that names it: the actions
    before it are applied, none after it is tried."""
    for number, action in enumerate(actions, 1):
        try:
            said = apply(admin, action, dry_run)
        except (Exception, SystemExit) as error:  # pylint: disable=broad-exception-caught
            detail = str(error).removeprefix("kafkaform-kafka: ") \
                if isinstance(error, SystemExit) else repr(error)
            raise SystemExit(
                f"kafkaform-kafka: action {number} of {len(actions)} failed, "
                f"{action.get('message', json.dumps(action))!r}: {detail} (the {number - 1} "
                f"before it were applied, the {len(actions) - number} after it were not "
                "tried)") from error
        say(said)


# --- what the declarations are compared with ------------------------------------------------

def declared_state(admin: Any, wanted: Mapping[str, Any],
                   users_changed: Callable[[Mapping[str, Any]], list[str]]) -> dict[str, Any]:
    """What the declared topics, ACLs and users are compared with, asked by one client: with
    ``topics``, every topic as ``describe`` gives it; with ``acls``, every binding as ``acl-list``
    gives it; with ``users`` (the ``users`` command's input), the names a converge would change,
    as ``users_changed`` finds them (kafkaform_scram.converge_users, a dry run). One answer for
    the three, so that a run with nothing to change runs the helper once."""
    found: dict[str, Any] = {}
    if wanted.get("topics"):
        found["topics"] = topics_state(admin)
    if wanted.get("acls"):
        found["bindings"] = acl_bindings(admin)
    if wanted.get("users"):
        found["users_changed"] = users_changed(wanted["users"])
    return found


# --- elections and dynamic configs ------------------------------------------------------------

def elect_preferred(admin: Any) -> tuple[list[str], list[str]]:
    """A preferred-replica election on every partition: the partitions whose leadership moved
    back to their preferred replica, and those it could not move, with why (a partition whose
    preferred replica already leads is in neither)."""
    response = admin.elect_leaders(0, None, raise_errors=False)
    elected, failed = [], []
    for result in response.replica_election_results:
        for part in result.partition_result:
            name = f"{result.topic}-{part.partition_id}"
            if part.error_code == 0:
                elected.append(name)
            elif part.error_code != ELECTION_NOT_NEEDED:
                failed.append(f"{name}: {part.error_message or part.error_code}")
    return sorted(elected), sorted(failed)


def alter_broker_configs(admin: Any, node_id: str, changes: Mapping[str, Any]) -> None:
    """Set (a value) or delete (None) dynamic configs of one broker (KIP-226)."""
    alter_configs(admin, ConfigResourceType.BROKER, node_id, changes)


def alter_configs(admin: Any, kind: Any, name: str, changes: Mapping[str, Any]) -> None:
    """Set (a value) or delete (None) configs of one resource (a topic, a running broker), one
    incremental alter."""
    configs = {key: ("DELETE", None) if value is None else value
               for key, value in changes.items()}
    _altered(admin.alter_configs([ConfigResource(kind, name, configs=configs)],
                                 raise_on_unknown=False, incremental=True))


# --- health ----------------------------------------------------------------------------------

def accepts_connections(address: str, timeout: float = 2.0) -> bool:
    """Whether host:port accepts a TCP connection."""
    host, _colon, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def health_answer(problems: list[str], controller: Any = None, registered: Sequence[str] = (),
                  under: int = 0, offline: int = 0) -> dict[str, Any]:
    """The health check's findings, the JSON line `health` prints."""
    return {"controller": controller, "registered": sorted(registered),
            "under_replicated": under, "offline": offline, "problems": problems}


def partition_problems(parts: Sequence[Mapping[str, Any]], catching_up: Sequence[str] = ()
                       ) -> tuple[list[str], list[str], list[str]]:
    """The under-replicated and offline partitions, and the problems they make. A partition
    whose only replicas out of sync are on brokers ``catching_up`` (a replaced broker copying
    its replicas back, OP-09) is not under-replicated for this check."""
    under, offline = [], []
    excused = {int(i) for i in catching_up}
    for part in parts:
        name = f"{part['topic']}-{part['partition']}"
        if int(part["leader"]) < 0:
            offline.append(name)
        elif set(map(int, part["replicas"])) - set(map(int, part["isr"])) - excused:
            under.append(name)
    problems = []
    if under:
        problems.append(f"{len(under)} under-replicated partitions: {', '.join(under[:10])}")
    if offline:
        problems.append(f"{len(offline)} offline partitions: {', '.join(offline[:10])}")
    return under, offline, problems


def registered_brokers(cluster: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """The active controller's id (None without one) and the ids of the brokers registered and
    not fenced, from a DescribeCluster answer."""
    controller = cluster.get("controller_id")
    brokers = [str(b["broker_id"]) for b in cluster.get("brokers") or []
               if not b.get("is_fenced")]
    return (controller if controller is not None and int(controller) >= 0 else None), brokers


def cluster_health(admin: Any, ids: Sequence[str],
                   also_registered: Callable[[list[str]], list[str]] | None = None,
                   catching_up: Sequence[str] = ()) -> dict[str, Any]:
    """One check of a broker's cluster (ZooKeeper mode, or the partitions of a KRaft broker):
    every broker of ``ids`` registered, one active controller, no partition under-replicated or
    offline. ``also_registered`` names, of the missing ones, those registered elsewhere (the
    KRaft quorum, while brokers migrate from ZooKeeper)."""
    controller, brokers = registered_brokers(admin.describe_cluster())
    missing = [i for i in ids if i not in brokers]
    if missing and also_registered is not None:
        found = also_registered(missing)
        missing = [i for i in missing if i not in found]
    problems = []
    if missing:
        problems.append(f"brokers not registered: {', '.join(missing)}")
    if controller is None:
        problems.append("no active controller")
    under: list[str] = []
    offline: list[str] = []
    if not missing:
        under, offline, found_problems = partition_problems(partitions(admin), catching_up)
        problems += found_problems
    return health_answer(problems, controller, [i for i in ids if i not in missing],
                         len(under), len(offline))


# --- status --------------------------------------------------------------------------------

def keystore_certificate(server: Properties) -> str:
    """The certificate of the node's keystore (server.properties' ssl.keystore.location, opened
    with the password server.properties names, SE-06) in PEM; "" for a node without TLS."""
    if not server.get("ssl.keystore.location"):
        return ""
    keystore = subprocess.run(
        ["openssl", "pkcs12", "-in", server["ssl.keystore.location"], "-nokeys", "-clcerts",
         "-passin", "env:KAFKAFORM_KEYSTORE_PASSWORD"], capture_output=True, text=True,
        check=True, env={**os.environ, "KAFKAFORM_KEYSTORE_PASSWORD":
                         resolved(server["ssl.keystore.password"])}).stdout
    found = PEM_CERTIFICATE.search(keystore)
    return found.group(0) + "\n" if found else ""


def node_certificate(server: Properties) -> dict[str, str]:
    """``certificate``: the node's keystore certificate (:func:`keystore_certificate`), or
    ``certificate_error``: why it could not be read."""
    try:
        return {"certificate": keystore_certificate(server)}
    except (OSError, KeyError, subprocess.CalledProcessError) as error:
        return {"certificate_error": f"cannot read the keystore: {error}"}


def own_node(listener: str, server: Properties) -> dict[str, Any]:
    """The node alone, asking no other: whether its own ``listener`` accepts connections, and
    :func:`node_certificate` (what ``kafkaform status`` asks a dedicated KRaft controller)."""
    return {"listener": listener, "listening": accepts_connections(listener),
            **node_certificate(server)}


def cluster_status(admin: Any) -> dict[str, Any]:
    """The cluster as its controller has it: the active controller, the brokers registered and
    not fenced, and :func:`placement`'s partitions (leader, replicas, ISR, min.insync.replicas)
    and brokers (rack, log directories' bytes)."""
    controller, registered = registered_brokers(admin.describe_cluster())
    found = placement(admin)
    # The disks in all: each directory's replicas are for moves, not for the status.
    found["brokers"] = [{k: v for k, v in b.items() if k != "log_dirs"} for b in found["brokers"]]
    return {"controller": controller, "registered": sorted(int(i) for i in registered), **found}


def node_status(session: Session, listener: str, server: Properties,
                quorum: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """What ``kafkaform status`` asks of each node (kafkaform.status_collect): whether its own
    listener accepts connections, its keystore's certificate, the cluster asked through that
    listener (:func:`cluster_status`) and, in KRaft mode, the metadata quorum. A part it cannot
    read is an ``*_error`` text beside the others. The session is closed once asked."""
    found = own_node(listener, server)
    if found["listening"]:
        with session:
            try:
                found["cluster"] = cluster_status(session.admin)
            except Exception as error:  # pylint: disable=broad-exception-caught
                found["cluster_error"] = f"cannot ask the cluster: {error!r}"
    if quorum:
        try:
            found["quorum"] = quorum()
        except SystemExit as error:  # no controller answered
            found["quorum_error"] = f"cannot read the metadata quorum: {error}"
    return found


class Session:
    """One admin client for a run, opened at first use and opened again after a failure (a
    health check waiting on a restarting broker)."""

    def __init__(self, client_config: str, bootstrap: str,
                 opener: Callable[[str, str], Any] = connect) -> None:
        self.client_config = client_config
        self.bootstrap = bootstrap
        self.opener = opener
        self._admin: Any = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def admin(self) -> Any:
        if self._admin is None:
            self._admin = self.opener(self.client_config, self.bootstrap)
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(Exception):
                self._admin.close()
            self._admin = None
