"""The kafka_broker role's plan for one Kafka node (roles/kafka_broker, deploys/kafka_broker.py):
one read of the node, then every decision of the run from it, the cluster model and the role's
settings: what to refuse, install and write, whether to format storage, converge the declared
topics, users and ACLs, put ACLs on old znodes or raise metadata.version, and how to roll a restart
through the nodes. Both engines only carry it out.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import java, security_steps
from ..catalog import APACHE_DIST_ROOT, CATALOG, release_key
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.kafka_broker import ADMIN_SCRIPT, kafka_broker_context, with_release
from ..contexts.metrics import AGENT_DIR
from ..defaults import setting
from ..paths import role_dir
from . import hostread, log_dirs
from .artifact import Release, read_marker, release
from .broker_moves import DayTwoArgv, day_two_argv
from .files import Account, PlannedFile, WritesFiles, planned_paths, template
from .quorum import QuorumPlan, format_options, quorum_plan
from .replace import verify_argv
from .running_cluster import running_cluster

ROLE = "kafka_broker"
#: The agent jar (and the admin client's wheel) as the download leaves it: then it is neither
#: fetched nor hashed again.
AGENT_JAR_STATE = "root:root:644"
#: Where the admin helper's client lives: its module and the kafka-python wheel it imports (the
#: helper, files/kafkaform-kafka, looks there).
ADMIN_LIB = "/opt/kafkaform/kafka-admin"
ADMIN_CLIENT_WHEEL = f"{ADMIN_LIB}/{CATALOG.admin_client.file_name}"
#: Where the service account's home is (it has none of its own: the data lives on the disks).
ACCOUNT_HOME = "/var/lib/kafka"
#: Marks that Kafka's ZkSecurityMigrator ran at the tls_replication step of securing in place.
ZNODES_SECURED_MARKER = "/var/lib/kafkaform/kafka-znodes-secured"
#: The unit the role enables and starts (roles/kafka_broker/tasks/service.yml).
SERVICE_UNIT = "kafka.service"
#: The metadata log's partition directory, in a node's first log directory.
METADATA_LOG = "__cluster_metadata-0"
#: What the admin helper's `elect` prints when it moved a leader: the roll's change after it.
ELECTED_PATTERN = r'"elected": \["'


def _setting(settings: Mapping[str, Any], name: str) -> Any:
    return setting(settings, f"{ROLE}_{name}")


def _packages(settings: Mapping[str, Any]) -> list[str]:
    """Java, and openssl, with which the admin helper checks the certificate each listener
    presents."""
    return [str(_setting(settings, "java_package")), "openssl"]


@dataclass(frozen=True)
class KafkaBrokerHost:
    """What the role needs to know of a Kafka node before it changes anything."""

    architecture: str = ""
    cores: int = 1
    installed: frozenset[str] = frozenset()
    #: The release the node runs, from the release file this role writes ("" on a new node).
    release: str = ""
    passwd: str = ""
    group: str = ""
    agent_jar: str = ""
    admin_client: str = ""
    #: The server.properties the node runs with today, None on a new node.
    running_config: str | None = None
    #: Whether the znodes written before the brokers logged in carry ACLs (the marker is there).
    znodes_secured: bool = False
    #: cluster.id in the meta.properties of the node's first log directory ("" without one).
    cluster_id: str = ""
    #: Whether the node's metadata log holds records: a quorum leader has written it. A format
    #: writes only the bootstrap checkpoint, and a controller that started but never saw a leader
    #: (its fellow first voters not formatted yet) has an empty segment.
    metadata_log_written: bool = False
    #: Whether the node's unit (SERVICE_UNIT) is enabled and active now.
    service_running: bool = False
    #: The marker of the release behind the install directory (plans.artifact.Release).
    release_marker: str | None = None
    #: The state of each planned file and directory that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)
    #: Each log directory of running_config and the replicas it holds (plans.log_dirs).
    log_dir_replicas: Mapping[str, int] = field(default_factory=dict)
    #: Each log directory of running_config and its state: formatted, blank or failed (an I/O
    #: error: a failed disk, OP-13; plans.log_dirs).
    log_dir_states: Mapping[str, str] = field(default_factory=dict)


def _release(settings: Mapping[str, Any]) -> Release:
    return release("kafka", _setting(settings, "version"), _setting(settings, "archive_url"),
                   _setting(settings, "install_dir"))


def host_read(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a Kafka node (its answers: :func:`parse_host`)."""
    q = shlex.quote
    conf_dir = str(_setting(settings, "conf_dir")).rstrip("/")
    meta = f"{log_dirs.first(cluster, host)}/meta.properties"
    return hostread.command([
        hostread.ask("architecture", "dpkg --print-architecture"),
        hostread.ask("cores", "nproc"),
        *(hostread.ask(f"package:{package}",
                       f"dpkg-query --show --showformat='${{db:Status-Abbrev}}' {q(package)} "
                       "2>/dev/null") for package in _packages(settings)),
        hostread.ask("release", f"cat {q(conf_dir + '/release')} 2>/dev/null"),
        hostread.ask("passwd", f"getent passwd {q(str(_setting(settings, 'user')))}"),
        hostread.ask("group", f"getent group {q(str(_setting(settings, 'group')))}"),
        hostread.ask("agent_jar", f"stat -c '%U:%G:%a' "
                                  f"{q(f'{AGENT_DIR}/{CATALOG.jmx_exporter.file_name}')} "
                                  "2>/dev/null"),
        hostread.ask("admin_client", f"stat -c '%U:%G:%a' {q(ADMIN_CLIENT_WHEEL)} 2>/dev/null"),
        hostread.file_lines("server.properties", f"{conf_dir}/server.properties"),
        log_dirs.question(f"{conf_dir}/server.properties"),
        hostread.ask("znodes_secured", "echo yes", present=ZNODES_SECURED_MARKER),
        hostread.ask("cluster_id", f"sed -n 's/^cluster[.]id=//p' {q(meta)} 2>/dev/null"),
        hostread.ask("metadata_log_written",
                     f"find {q(log_dirs.first(cluster, host) + '/' + METADATA_LOG)} "
                     "-maxdepth 1 -name '*.log' -size +0c 2>/dev/null | grep -q . && echo yes"),
        _release(settings).question(),
        *hostread.unit_states([SERVICE_UNIT]),
        *hostread.path_states(_planned_paths(cluster, host, settings)),
    ])


def _planned_paths(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The files and directories the node's plan writes without secrets, as a new node's plan
    has them (their paths do not depend on the read)."""
    p = kafka_broker_plan(cluster, host, settings, KafkaBrokerHost())
    return [*planned_paths(p.files, p.context["directories"]),
            *planned_paths(p.install.admin_files, p.install.admin_directories)]


def parse_host(stdout: str) -> KafkaBrokerHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    return KafkaBrokerHost(
        architecture=found.get("architecture", ""),
        cores=int(found.get("cores") or 1),
        installed=frozenset(label.removeprefix("package:") for label, answer in found.items()
                            if label.startswith("package:") and answer.startswith("ii")),
        release=found.get("release", "").rsplit(" ", 1)[-1],
        passwd=found.get("passwd", ""),
        group=found.get("group", ""),
        agent_jar=found.get("agent_jar", ""),
        admin_client=found.get("admin_client", ""),
        running_config=hostread.decoded(found.get("server.properties")),
        znodes_secured=found.get("znodes_secured") == "yes",
        cluster_id=found.get("cluster_id", ""),
        metadata_log_written=found.get("metadata_log_written") == "yes",
        service_running=SERVICE_UNIT in hostread.running_units(found),
        release_marker=read_marker(found),
        paths=hostread.found_paths(found),
        log_dir_replicas=log_dirs.parse(found.get(log_dirs.LABEL, "")),
        log_dir_states=log_dirs.parse_states(found.get(log_dirs.LABEL, "")),
    )


@dataclass(frozen=True)
class KafkaBrokerInstall:
    """What the role installs on a node, and what its context needs of the host."""

    packages: list[str]
    install_packages: bool
    account: Account
    create_account: bool
    #: The artifact role's inputs for the release, included only when it is not in place.
    release: dict[str, str]
    install_release: bool
    #: Whether to fetch the metrics agent jar: the node runs the agent and has no jar yet.
    fetch_agent: bool
    #: The admin helper, its client module and the admin client's wheel (from the mirror, its
    #: sha512 checked), fetched only while the node has no such wheel.
    admin_files: list[PlannedFile]
    #: The directory they live in, made as install_files makes a context's ``directories``.
    admin_directories: list[dict[str, str]]
    admin_client: dict[str, str]
    fetch_admin_client: bool
    java_home: str
    cores: int
    release_before: str

    def as_vars(self) -> dict[str, Any]:
        found = asdict(self)
        found["admin_files"] = [f.as_task_item() for f in self.admin_files]
        return found


def admin_files() -> list[PlannedFile]:
    """The admin helper and the modules it imports: its admin client and Kafka's JVM tools."""
    files = role_dir(ROLE) / "files"
    modules = ("kafkaform_admin.py", "kafkaform_tools.py", "kafkaform_reassign.py",
               "kafkaform_catchup.py", "kafkaform_quorum.py", "kafkaform_scram.py")
    return [PlannedFile(src=str(files / "kafkaform-kafka"), dest=ADMIN_SCRIPT, mode="0755"),
            *(PlannedFile(src=str(files / name), dest=f"{ADMIN_LIB}/{name}", mode="0644")
              for name in modules)]


def install_plan(settings: Mapping[str, Any], read: KafkaBrokerHost) -> KafkaBrokerInstall:
    """The node's install decisions, from the role's settings and the host read."""
    packages = _packages(settings)
    account = Account(user=str(_setting(settings, "user")), group=str(_setting(settings, "group")),
                      home=ACCOUNT_HOME, comment=None)
    the_release = _release(settings)
    return KafkaBrokerInstall(
        packages=packages,
        install_packages=not set(packages) <= read.installed,
        account=account,
        create_account=not account.in_place(read.passwd, read.group),
        release=the_release.as_vars(),
        install_release=not the_release.found_in_place(read.release_marker),
        fetch_agent=(bool(_setting(settings, "metrics_enabled"))
                     and read.agent_jar != AGENT_JAR_STATE),
        admin_files=admin_files(),
        admin_directories=[{"path": ADMIN_LIB, "owner": "root", "group": "root",
                            "mode": "0755"}],
        admin_client={
            "url": CATALOG.admin_client.url_on(
                str(settings.get("kafkaform_apache_mirror_url") or APACHE_DIST_ROOT)),
            "dest": ADMIN_CLIENT_WHEEL},
        fetch_admin_client=read.admin_client != AGENT_JAR_STATE,
        java_home=java.java_home(packages[0], read.architecture or "amd64",
                                 "kafka_broker_java_home",
                                 str(_setting(settings, "java_home") or "")),
        cores=read.cores,
        release_before=read.release,
    )


@dataclass(frozen=True)
class KafkaBrokerFiles(WritesFiles):
    """The files of a Kafka node (configure.yml's and security.yml's), with their owners, modes
    and whether the node restarts for them."""

    files: list[PlannedFile]
    #: Written with no_log and no diff: they hold secrets, or the admin tools' configuration.
    secret_files: list[PlannedFile]
    #: The secrets the secret files read: the templates' name for each, to the cluster secret.
    secrets: dict[str, str]
    #: And to the role input that holds it (JMX's password is the inventory's, not generated).
    secret_inputs: dict[str, str]


def files_plan(kb: Mapping[str, Any]) -> KafkaBrokerFiles:
    """The node's files, from its context (kafkaform.contexts.kafka_broker)."""
    group, restart_files = kb["group"], set(kb["restart_files"])

    def planned(name: str, dest: str, **given: Any) -> PlannedFile:
        source = {"template": template(ROLE, name)} if name else {}
        return PlannedFile(dest=dest, **{"group": group, "restarts": dest in restart_files,
                                         **source, **given})

    files = [
        # The cluster model's settings. KB-02, KB-04, KB-05, KB-06, RA-01, TR-01
        planned("etc/kafka/server.properties.j2", kb["java"]["config"]),
        # Controller and state-change logs apart. KB-22
        planned(kb["log_config"]["template"], kb["log_config"]["dest"]),
        # The Kafka release the service runs.
        planned("", f"{kb['conf_dir']}/release", content=f"kafka {kb['release']}\n"),
        # Heap, G1 and GC log rotation. JV-02, JV-03, FD-02
        planned("etc/systemd/system/kafka.service.j2", f"{SYSTEMD_UNIT_DIR}/kafka.service",
                group="root", mode="0644"),
    ]
    if kb["quorum_file"]:  # a dynamic quorum's controllers to bootstrap from. KR-15
        files.append(planned("", kb["quorum_file"]["dest"], content=kb["quorum_file"]["content"]))
    if kb["metrics"]["enabled"]:  # the agent rereads its rules: no restart. MO-07
        files.append(planned("etc/kafka/jmx-exporter.yml.j2", kb["metrics"]["config"]))
    # The configuration Kafka's tools accept (SE-01, SE-03), the keystore password, and in
    # ZooKeeper mode (and on a controller migrating from it) the ZooKeeper login. SE-06, SE-07
    secret_files = [planned("etc/kafka/admin-client.properties.j2", kb["admin_client_config"]),
                    planned("etc/kafka/tls/secrets.properties.j2", kb["tls"]["secrets"])]
    if kb["zookeeper_client"]:
        secret_files.append(planned("etc/kafka/kafka-jaas.conf.j2", kb["jaas_file"]))
    jmx = kb["jmx"]
    if jmx["enabled"]:  # SE-05
        secret_files += [
            planned("etc/kafka/jmx.properties.j2", jmx["config"]),
            planned("etc/kafka/jmx.access.j2", jmx["access_file"]),
            # The JVM refuses a password file anyone but its owner can read.
            planned("etc/kafka/jmx.password.j2", jmx["password_file"], owner=kb["user"],
                    mode="0600"),
            planned("etc/kafka/jmx-ssl.properties.j2", jmx["ssl_config"]),
        ]
    secrets = {"keystore": "keystore"}
    if kb["zookeeper_client"]:
        secrets["zookeeper"] = "zookeeper-kafka"
    inputs = {"jmx": f"{ROLE}_jmx_password"} if jmx["enabled"] else {}
    return KafkaBrokerFiles(files=files, secret_files=secret_files, secrets=secrets,
                            secret_inputs=inputs)


@dataclass(frozen=True)
class KafkaBrokerRoll:
    """Kafka's terms for the one rolling restart (roles/rolling_restart, deploys.base.Roll): one
    node at a time, the active controller (the health answer's ``controller`` id) last, each
    gated on the cluster's health; then, among brokers, a preferred-replica election. OP-02; the
    controllers of a KRaft quorum roll the same way in a play of their own, gated on a quorum
    leader and every voter's lag. KR-08"""

    rule: str
    #: The same answer gates the first restart and each next one; each check waits on its own
    #: until the cluster is healthy, up to ``try_s``.
    health_argv: list[str]
    #: Controllers lead no partition: nothing to elect after their roll.
    after_argv: list[str]
    after_changed_pattern: str
    last_key: str
    member_ids: dict[str, int]
    timeout_s: float
    try_s: float
    delay_s: float
    #: How many brokers may restart at once; above 1, in the batches kafkaform.plans.
    #: restart_batches makes of ``batch_argv``'s answer on the live cluster. Controllers: 1. OP-04
    parallelism: int = 1
    #: Where every partition's replicas are now, in sync or not (the admin helper's placement).
    batch_argv: list[str] = field(default_factory=list)
    #: Each broker's rack by host: a rack's brokers go together where the partitions allow.
    racks: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KafkaBrokerPlan(WritesFiles):
    """Everything the role does on one Kafka node, decided."""

    #: The templates' input (kafkaform.contexts.kafka_broker).
    context: dict[str, Any]
    install: KafkaBrokerInstall
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    secrets: dict[str, str]
    secret_inputs: dict[str, str]
    #: Why the run must stop before it changes any node: a skipped step of securing in place
    #: (SE-01, SE-10), read from the server.properties the node runs with. "" when none.
    refusal: str
    #: Why a migration to KRaft must not start: the node's log directory belongs to another
    #: cluster than the inventory's cluster id (KR-07, KR-09). Only the migration asks.
    migration_refusal: str
    admin_argv: list[str]
    #: A KRaft node's log directories without meta.properties formatted with the cluster id;
    #: the helper refuses one formatted for another cluster. KR-07. Empty in ZooKeeper mode.
    format_storage_argv: list[str]
    #: Asked before anything changes when this run takes a KRaft node to an older release than
    #: the one it runs: Kafka refuses one older than the cluster's metadata.version. KR-10
    older_release_argv: list[str]
    #: Topics, users and ACLs are converged by the brokers' play, once for the cluster. SE-03
    converge_topics: bool
    converge_users: bool
    converge_acls: bool
    #: metadata.version follows the release once every Kafka node named here runs it (KR-10).
    raise_metadata_version: bool
    #: The helper's call that raises it, then each feature the inventory names, one by one
    #: (KR-13); append --dry-run to ask what it would change.
    features_argv: list[str]
    #: KRaft brokers, once a run: hold the cluster-wide min.insync.replicas at the cluster's (the
    #: controllers of a 4.x cluster wrote their own there). Empty otherwise. KR-14
    cluster_defaults_argv: list[str]
    kafka_nodes: list[str]
    #: SE-07, SE-10: at the tls_replication step, ACLs go on the znodes written before the
    #: brokers logged in, once (the marker remembers it); back at plaintext_replication, where
    #: brokers write znodes without ACLs again, the marker goes.
    secure_znodes: bool
    mark_znodes_secured: bool
    forget_znodes_secured: bool
    znodes_marker: str
    roll: KafkaBrokerRoll
    #: A decommission's or a scale-out's helper calls (plans.broker_moves); brokers only.
    day_two: DayTwoArgv
    #: The node's part in the controllers' quorum membership (KR-15, OP-12).
    quorum: QuorumPlan
    #: The verify step: every node registered, one controller active, nothing under-replicated
    #: (MO-02, MO-03, MO-04), asked up to ``verify_retries`` times.
    verify_argv: list[str]
    verify_retries: int
    #: Kafka is enabled and started unless the host read found it both already: a node whose
    #: files change in this run is restarted by the roll, not by the start (OP-02, OP-03).
    start_service: bool
    #: Where the declared topics, users and ACLs are read, best first: the brokers that were
    #: running when the run read the hosts, then the others. A broker answers on its own SASL
    #: listener, where the users log in, so one that starts in this run answers only once it runs,
    #: and in a dry run never (a broker stopped to replace its failed disk, OP-13). Each engine
    #: reads on the first of these in its play.
    declared_state_hosts: list[str] = field(default_factory=list)
    #: What the host read found of the files and directories without secrets (install_files'
    #: host_state).
    host_state: dict[str, str] = field(default_factory=dict)

    def as_vars(self) -> dict[str, Any]:
        found = super().as_vars()
        found["install"] = self.install.as_vars()
        return found


def _migrating(cluster: Mapping[str, Any]) -> bool:
    return str(cluster.get("kraft_migration") or "") not in ("", "finalized")


def _refusal(host: str, kb: Mapping[str, Any], read: KafkaBrokerHost) -> str:
    """Why the node must not be changed: a log directory on a failed disk (OP-13), a step of
    securing skipped (SE-10), or a log directory that holds replicas dropped (OP-10)."""
    if read.running_config is None:
        return ""
    failed = [d for d, state in read.log_dir_states.items() if state == log_dirs.FAILED]
    return log_dirs.failed_refusal(host, failed) or security_steps.step_problem(
        host, kb["java"]["config"], security_steps.broker_step(read.running_config),
        kb["security_step"]) or log_dirs.refusal(host, read.log_dir_replicas, kb["log_dirs"])


def _migration_refusal(cluster: Mapping[str, Any], host: str, read: KafkaBrokerHost) -> str:
    wanted = str(cluster.get("cluster_id", ""))
    if read.cluster_id == wanted:
        return ""
    return (f"{host}: {log_dirs.first(cluster, host)}/meta.properties says "
            f"cluster.id={read.cluster_id}, but the inventory's cluster id is {wanted}: the "
            "controllers join the running cluster, so they are formatted with its id. Set "
            f"kafka_cluster_id: {read.cluster_id} in the inventory's group_vars/all and run again")


def _older_release_argv(cluster: Mapping[str, Any], kb: Mapping[str, Any],
                        read: KafkaBrokerHost) -> list[str]:
    older = (kb["metadata_mode"] == "kraft" and not _migrating(cluster)
             and bool(re.match(r"\d+\.\d", read.release))
             and release_key(read.release) > release_key(kb["release"]))
    return [*kb["admin_argv"], "--dry-run", "features", "--release", kb["release"]] if older \
        else []


def _roll(kb: Mapping[str, Any], settings: Mapping[str, Any]) -> KafkaBrokerRoll:
    controller = kb["process_roles"] == "controller"
    # KR-08: controllers one at a time, the quorum's leader last, whatever the brokers do.
    parallelism = 1 if controller else int(_setting(settings, "restart_parallelism"))
    return KafkaBrokerRoll(
        parallelism=parallelism,
        batch_argv=[*kb["admin_argv"], "placement"] if parallelism > 1 else [],
        racks={str(h): str(kb["racks_by_id"][str(i)]) for h, i in kb["ids_by_host"].items()
               if str(i) in kb["racks_by_id"] and kb["racks_by_id"][str(i)]},
        rule="KR-08" if controller else "OP-02",
        health_argv=[*kb["admin_argv"], *kb["health_args"]],
        after_argv=[] if controller else [*kb["admin_argv"], "elect"],
        after_changed_pattern=ELECTED_PATTERN,
        last_key="controller",
        member_ids={str(h): int(i) for h, i in kb["ids_by_host"].items()},
        timeout_s=float(_setting(settings, "restart_timeout_s")),
        try_s=float(kb["health_wait_s"]),
        delay_s=float(kb["health_poll_s"]))


def _serving_first(cluster: Mapping[str, Any]) -> list[str]:
    """The brokers, those that were running when the run read the hosts first."""
    serving = [str(h) for h in cluster.get("serving_brokers") or ()]
    return [*serving, *(str(b["host"]) for b in cluster["brokers"] if b["host"] not in serving)]


def kafka_broker_plan(cluster: Mapping[str, Any], host: str, inputs: Mapping[str, Any],
                      read: KafkaBrokerHost) -> KafkaBrokerPlan:
    """The plan for the Kafka node ``host``, from the model, the role's inputs (``inputs`` of
    deploys.kafka_broker, ``kafka_broker_inputs`` of the role) and the host read."""
    inputs = with_release(cluster, inputs)
    install = install_plan(inputs, read)
    settings = {**inputs, "kafka_broker_java_home": install.java_home,
                "kafka_broker_cores": install.cores}
    kb = kafka_broker_context(cluster, host, settings)
    files = files_plan(kb)
    broker = kb["process_roles"] != "controller"
    kraft = kb["metadata_mode"] == "kraft"
    roll = _roll(kb, settings)
    admin = list(kb["admin_argv"])
    return KafkaBrokerPlan(
        context=kb, install=install, files=files.files, secret_files=files.secret_files,
        secrets=files.secrets, secret_inputs=files.secret_inputs,
        refusal=_refusal(host, kb, read),
        migration_refusal=_migration_refusal(cluster, host, read),
        admin_argv=admin,
        format_storage_argv=[*admin, "storage", f"--cluster-id={kb['cluster_id']}",
                             "--owner", f"{kb['user']}:{kb['group']}",
                             *format_options(cluster, "controller" in kb["process_roles"])]
        if kraft else [],
        older_release_argv=_older_release_argv(cluster, kb, read),
        converge_topics=broker and bool(_setting(settings, "topics")),
        converge_users=broker and bool(_setting(settings, "users")),
        converge_acls=broker and bool(_setting(settings, "acls")),
        raise_metadata_version=(kraft and broker and not _migrating(cluster)
                                and bool(_setting(settings, "upgrade_metadata_version"))),
        cluster_defaults_argv=[*admin, "cluster-defaults", "--set",
                               f"min.insync.replicas={cluster['min_insync_replicas']}"]
        if kraft and broker and not _migrating(cluster) else [],
        features_argv=[*admin, "features", *(
            arg for name, level in sorted(dict(_setting(settings, "feature_levels") or {}).items())
            for arg in ("--feature", f"{name}={level}"))],
        kafka_nodes=[*(str(c["host"]) for c in cluster.get("controllers", ())),
                     *(str(b["host"]) for b in cluster["brokers"])],
        secure_znodes=bool(kb["secure_existing_znodes"]) and not read.znodes_secured,
        mark_znodes_secured=bool(kb["secure_existing_znodes"]),
        forget_znodes_secured=(kb["security_step"] == "plaintext_replication"
                               and read.znodes_secured),
        znodes_marker=ZNODES_SECURED_MARKER,
        roll=roll,
        day_two=day_two_argv(kb, _setting(settings, "reassignment_throttle_mb_s"),
                             _setting(settings, "reassignment_timeout_s")),
        quorum=quorum_plan(cluster, admin, "controller" in kb["process_roles"], roll.timeout_s),
        verify_argv=verify_argv(kb, _setting(settings, "catching_up_hosts")),
        verify_retries=math.ceil(roll.timeout_s / (roll.try_s + roll.delay_s)),
        start_service=not read.service_running,
        declared_state_hosts=_serving_first(cluster) if broker else [],
        host_state=dict(read.paths),
    )


def plan_vars(cluster: Mapping[str, Any], host: str, inputs: Mapping[str, Any],
              host_read_stdout: str) -> dict[str, Any]:
    """:func:`kafka_broker_plan` as the role reads it (filter ``kafka_broker_plan``)."""
    return kafka_broker_plan(cluster, host, inputs, parse_host(host_read_stdout)).as_vars()


def running_cluster_vars(cluster: Mapping[str, Any], host_reads: Mapping[str, str],
                         declared: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`running_cluster` from what each node's host read printed and each node's
    kafka_broker_version, by host, as the role reads it (filter ``kafka_running_cluster``)."""
    return running_cluster(cluster, {host: parse_host(stdout or "")
                                     for host, stdout in host_reads.items()},
                           {host: str(version or "") for host, version in declared.items()}
                           ).as_vars()
