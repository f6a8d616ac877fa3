"""The kafka_broker role's read of a Kafka node and what it decides from it before the node's
context is built: packages, service account, metrics agent jar, Java home, the cores its thread
pools are sized from, and the release the node ran before this run (roles/kafka_broker's
install.yml, deploys/kafka_broker.py). The node's files and restarts are planned by its context
(kafkaform.contexts.kafka_broker) so far.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .. import java
from ..catalog import APACHE_DIST_ROOT, CATALOG
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.kafka_broker import ADMIN_SCRIPT
from ..contexts.metrics import AGENT_DIR
from ..defaults import setting
from ..paths import role_dir
from . import hostread
from .files import Account, PlannedFile, WritesFiles, template

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


def host_read(settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a Kafka node (its answers: :func:`parse_host`)."""
    q = shlex.quote
    conf_dir = str(_setting(settings, "conf_dir")).rstrip("/")
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
    ])


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
    )


@dataclass(frozen=True)
class KafkaBrokerInstall:
    """What the role installs on a node, and what its context needs of the host."""

    packages: list[str]
    install_packages: bool
    account: Account
    create_account: bool
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
    """The admin helper and the module it imports its admin client from."""
    files = role_dir(ROLE) / "files"
    return [PlannedFile(src=str(files / "kafkaform-kafka"), dest=ADMIN_SCRIPT, mode="0755"),
            PlannedFile(src=str(files / "kafkaform_admin.py"),
                        dest=f"{ADMIN_LIB}/kafkaform_admin.py", mode="0644")]


def install_plan(settings: Mapping[str, Any], read: KafkaBrokerHost) -> KafkaBrokerInstall:
    """The node's install decisions, from the role's settings and the host read."""
    packages = _packages(settings)
    account = Account(user=str(_setting(settings, "user")), group=str(_setting(settings, "group")),
                      home=ACCOUNT_HOME, comment=None)
    return KafkaBrokerInstall(
        packages=packages,
        install_packages=not set(packages) <= read.installed,
        account=account,
        create_account=not account.in_place(read.passwd, read.group),
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


def install_vars(settings: Mapping[str, Any], host_read_stdout: str) -> dict[str, Any]:
    """:func:`install_plan` as the role reads it (filter ``kafka_broker_install``)."""
    return install_plan(settings, parse_host(host_read_stdout)).as_vars()


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
        planned("server.properties.j2", kb["java"]["config"]),
        # Controller and state-change logs apart. KB-22
        planned(kb["log_config"]["template"], kb["log_config"]["dest"]),
        # The Kafka release the service runs.
        planned("", f"{kb['conf_dir']}/release", content=f"kafka {kb['release']}\n"),
        # Heap, G1 and GC log rotation. JV-02, JV-03, FD-02
        planned("kafka.service.j2", f"{SYSTEMD_UNIT_DIR}/kafka.service", group="root",
                mode="0644"),
    ]
    if kb["metrics"]["enabled"]:  # the agent rereads its rules: no restart. MO-07
        files.append(planned("jmx-exporter.yml.j2", kb["metrics"]["config"]))
    # The configuration Kafka's tools accept (SE-01, SE-03), the keystore password, and in
    # ZooKeeper mode (and on a controller migrating from it) the ZooKeeper login. SE-06, SE-07
    secret_files = [planned("admin-client.properties.j2", kb["admin_client_config"]),
                    planned("secrets.properties.j2", kb["tls"]["secrets"])]
    if kb["zookeeper_client"]:
        secret_files.append(planned("kafka-jaas.conf.j2", kb["jaas_file"]))
    jmx = kb["jmx"]
    if jmx["enabled"]:  # SE-05
        secret_files += [
            planned("jmx.properties.j2", jmx["config"]),
            planned("jmx.access.j2", jmx["access_file"]),
            # The JVM refuses a password file anyone but its owner can read.
            planned("jmx.password.j2", jmx["password_file"], owner=kb["user"], mode="0600"),
            planned("jmx-ssl.properties.j2", jmx["ssl_config"]),
        ]
    secrets = {"keystore": "keystore"}
    if kb["zookeeper_client"]:
        secrets["zookeeper"] = "zookeeper-kafka"
    inputs = {"jmx": f"{ROLE}_jmx_password"} if jmx["enabled"] else {}
    return KafkaBrokerFiles(files=files, secret_files=secret_files, secrets=secrets,
                            secret_inputs=inputs)


def files_vars(kb: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`files_plan` as the role reads it (filter ``kafka_broker_files``)."""
    return files_plan(kb).as_vars()
