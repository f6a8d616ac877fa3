# Managed by kafkaform (roles/kafka_broker/files/kafkaform_tools.py); local changes are overwritten.
"""Kafka's own tool classes, run straight on the JVM (no bin/*.sh), for the questions Kafka's admin
protocol does not answer: storage format, features, the metadata quorum of the controllers and
ZooKeeper's znodes. ``kafkaform-kafka`` calls it; it sits beside ``kafkaform_admin.py`` (installed
by the kafka_broker role in /opt/kafkaform/kafka-admin).

Each tool's JVM is short-lived (C1 only, the serial collector, a small heap) and starts from an
archive of the classes it loads, which its first clean run writes as it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from typing import Any, Protocol

from kafkaform_admin import Session, properties, resolved

# Short-lived JVMs: C1 only, the serial collector, a small heap (kafkaform.jvm, which a unit test
# holds this copy to). The JVM's own warnings go to stderr: the tools' stdout is parsed.
JVM = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
       "-Xlog:disable", "-Xlog:all=warning:stderr"]
# Archives of the classes each tool loads (application class data sharing, JDK 13 and later): a
# tool's JVM starts in about half the time from its archive, which the tool's first clean run
# writes as it exits. A cache, root only, safe to delete.
# https://docs.oracle.com/en/java/javase/17/vm/class-data-sharing.html
CLASS_ARCHIVES = "/var/cache/kafkaform/kafka-tools"
FEATURE_COMMAND = "org.apache.kafka.tools.FeatureCommand"
ZK_SECURITY_MIGRATOR = "kafka.admin.ZkSecurityMigrator"
METADATA_QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
STORAGE_TOOL = "kafka.tools.StorageTool"
ZK_SHELL = "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka"


class ToolArgs(Protocol):
    """The helper's options the tools read."""

    conf: str
    bootstrap: str
    libs: str
    java: str
    dry_run: bool


class Tools:
    """This node's Kafka tools: its server.properties, its listener, the controllers and the
    JVM command line of each tool class."""

    def __init__(self, args: ToolArgs) -> None:
        self.args = args
        self.server = properties(f"{args.conf}/server.properties")
        # A controller advertises nothing: its one listener is CONTROLLER.
        listeners = (self.server.get("advertised.listeners")
                     or self.server.get("listeners", "")).split(",")
        own = next((lst for lst in listeners if lst.startswith("BROKER://")), listeners[0])
        # This node's listener among those the tools were pointed at (--bootstrap), else its
        # BROKER listener (a controller's CONTROLLER listener), as host:port. While a cluster
        # built open is secured, the tools use the plaintext listener: the BROKER one this file
        # names may not be served yet by the running broker (SE-10).
        endpoints = [lst.split("://", 1)[-1] for lst in listeners]
        given = [e for e in (args.bootstrap or "").split(",") if e in endpoints]
        self.own_listener = given[0] if given else own.split("://", 1)[-1]
        self.roles = self.server.get("process.roles", "")  # empty in ZooKeeper mode
        # The controllers' listeners (KRaft mode), from controller.quorum.voters (id@host:port)
        # or a dynamic quorum's controller.quorum.bootstrap.servers (host:port, in a file of
        # its own: KR-15).
        self.controllers = ",".join(voter.split("@", 1)[-1] for voter in (
            self.server.get("controller.quorum.voters")
            or resolved(self.server.get("controller.quorum.bootstrap.servers", ""))).split(",")
            if voter)
        self.bootstrap = args.bootstrap or self.own_listener
        self.admin_config = f"{args.conf}/admin-client.properties"
        self.jaas = f"{args.conf}/kafka-jaas.conf"
        # main class -> (temporary, final path) of the class archive its JVM writes at exit.
        self.writing: dict[str, tuple[str, str]] = {}
        self.reading: dict[str, str] = {}  # main class -> the archive its JVM was started from
        self.zk_tls_file: str | None = None

    def zk_tls(self, flag: str) -> list[str]:
        """The option that gives a ZooKeeper tool this node's TLS settings for the ensemble
        (SE-18): server.properties' zookeeper.ssl.* lines, their file references resolved (the
        tools read no config provider), in a file only root reads, removed at exit. None while
        the node connects to the ensemble in plaintext."""
        if self.server.get("zookeeper.ssl.client.enable") != "true":
            return []
        if self.zk_tls_file is None:
            keys = [k for k in sorted(self.server)
                    if k.startswith("zookeeper.ssl.") or k == "zookeeper.clientCnxnSocket"]
            with tempfile.NamedTemporaryFile("w", prefix="kafkaform-zk-tls-",
                                             suffix=".properties", delete=False) as handle:
                handle.write("".join(f"{k}={resolved(self.server[k])}\n" for k in keys))
            atexit.register(os.remove, handle.name)
            self.zk_tls_file = handle.name
        return [flag, self.zk_tls_file]

    def argv(self, main_class: str, *args: str) -> list[str]:
        login = [f"-Djava.security.auth.login.config={self.jaas}"] \
            if os.path.exists(self.jaas) else []
        return [self.args.java, *JVM, *self.class_archive(main_class), *login,
                "-cp", f"{self.args.libs}/*", main_class, *args]

    def class_archive(self, main_class: str) -> list[str]:
        """The JVM options that start ``main_class`` from its class archive, or that write the
        archive as it exits (then pass its exit code to :meth:`archived`); none when the
        archive can be neither read nor written."""
        try:
            java = os.path.realpath(self.args.java)
            # A Kafka or Java upgrade gives the archive a new name: an archive serves only the
            # JVM and the classpath it was written with.
            key = hashlib.sha256("\0".join(
                [java, str(os.stat(java).st_mtime_ns), main_class,
                 *sorted(os.listdir(self.args.libs))]).encode()).hexdigest()[:16]
            os.makedirs(CLASS_ARCHIVES, mode=0o700, exist_ok=True)
        except OSError:
            return []
        path = f"{CLASS_ARCHIVES}/{main_class.rsplit('.', 1)[-1]}-{key}.jsa"
        if os.path.exists(path):
            self.reading[main_class] = path
            return [f"-XX:SharedArchiveFile={path}"]
        if main_class in self.writing:
            return []
        self.writing[main_class] = (f"{path}.{os.getpid()}.tmp", path)
        return [f"-XX:ArchiveClassesAtExit={self.writing[main_class][0]}",
                "-Xlog:all=error:stderr"]  # without the classes it leaves out, one by one

    def archived(self, main_class: str, returncode: int) -> None:
        """Keep the class archive ``main_class``'s JVM wrote as it exited, only after a clean
        exit: a JVM started from a partial archive aborts. It replaces the tool's archives of
        an earlier Kafka or Java."""
        read = self.reading.pop(main_class, None)
        if read and returncode == -signal.SIGABRT:  # the JVM could not map it: write it anew
            with contextlib.suppress(OSError):
                os.remove(read)
        written = self.writing.pop(main_class, None)
        if written is None:
            return
        temporary, path = written
        with contextlib.suppress(OSError):
            if returncode != 0:
                os.remove(temporary)
                return
            os.replace(temporary, path)
            stem = os.path.basename(path).rsplit("-", 1)[0]
            for name in os.listdir(CLASS_ARCHIVES):
                if name.rsplit("-", 1)[0] == stem and name.endswith(".jsa") \
                        and name != os.path.basename(path):
                    os.remove(os.path.join(CLASS_ARCHIVES, name))

    def session(self) -> Session:
        """The run's admin client (opened at first use): this cluster, as the brokers'
        principal."""
        return Session(self.admin_config, self.bootstrap)

    def admin(self) -> list[str]:
        """The connection options of Kafka's tools: this cluster, as the brokers' principal."""
        return ["--bootstrap-server", self.bootstrap, "--command-config", self.admin_config]

    def run(self, main_class: str, *args: str,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(self.argv(main_class, *args), capture_output=True, text=True,
                                check=False)
        self.archived(main_class, result.returncode)
        if check and result.returncode != 0:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f"kafkaform-kafka: {main_class} exited {result.returncode}")
        return result

    def change(self, main_class: str, *args: str) -> subprocess.CompletedProcess[str]:
        """A call that changes the cluster; with --dry-run (check mode) it is only reported."""
        if self.args.dry_run:
            return subprocess.CompletedProcess([main_class, *args], 0, "(dry run)\n", "")
        return self.run(main_class, *args)

    def zk_get_all(self, paths: Sequence[str]) -> dict[str, Any]:
        """ZooKeeper shell `get` of each path, all in one JVM: path -> parsed JSON or None.

        Without JLine on Kafka's classpath the shell runs the commands it reads on stdin, in
        order, and answers each with its data or with an error line ending in the path; Java
        flushes stdout and stderr at each line, so the merged output keeps that order."""
        connect = self.server["zookeeper.connect"]
        result = subprocess.run(self.argv(ZK_SHELL, *self.zk_tls("-zk-tls-config-file"),
                                          "-server", connect),
                                input="".join(f"get {p}\n" for p in paths),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=120, check=False)
        self.archived(ZK_SHELL, result.returncode)
        found: dict[str, Any] = dict.fromkeys(paths)
        pending = iter(paths)
        path = next(pending, None)
        for line in result.stdout.splitlines():
            if path is None:
                break
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    found[path] = json.loads(line)
            elif not line.rstrip().endswith(f" {path}"):
                continue
            path = next(pending, None)
        return found

    def zk_state(self, ids: Sequence[str]) -> dict[str, Any]:
        """The active controller and each broker's registration (rack, endpoints), from
        ZooKeeper."""
        paths = ["/controller"] + [f"/brokers/ids/{i}" for i in ids]
        data = self.zk_get_all(paths)
        controller = data["/controller"]
        return {
            "controller": None if controller is None else controller.get("brokerid"),
            "brokers": {
                str(i): None if data[f"/brokers/ids/{i}"] is None else {
                    "rack": data[f"/brokers/ids/{i}"].get("rack"),
                    "endpoints": data[f"/brokers/ids/{i}"].get("endpoints", []),
                } for i in ids
            },
        }

    def quorum(self) -> dict[str, Any]:
        """MetadataQuorumCommand describe --replication, asked of the controllers: the leader's
        id and each node fetching the metadata log (voters and observers) by id, with its lag
        in records and its status (Leader, Follower, Observer)."""
        return quorum_rows(describe_quorum(self, "--replication").stdout)


def describe_quorum(tools: Any, what: str,
                    check: bool = True) -> subprocess.CompletedProcess[str]:
    """MetadataQuorumCommand describe ``what`` (--status, --replication), asked of the
    controllers as the brokers' principal; with ``check`` false a failed call is returned, its
    exit code said, instead of ending the helper."""
    result: subprocess.CompletedProcess[str] = tools.run(
        METADATA_QUORUM, "--bootstrap-controller", tools.controllers, "--command-config",
        tools.admin_config, "describe", what, check=check)
    return result


def replication_rows(out: str) -> dict[tuple[int, str], dict[str, Any]]:
    """Each node fetching the metadata log in a ``describe --replication`` table, by (node id,
    directory id), with its lag in records and its status (Leader, Follower, Observer). The
    table's header names its columns (NodeId, DirectoryId, LogEndOffset, Lag, ..., Status);
    a table without DirectoryId gives every node the directory "". Lines before the header (a
    warning) and rows that do not fit it are left out."""
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header = next((row for row in lines if row and row[0] == "NodeId"), None)
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    if header is None:
        return rows
    for row in lines[lines.index(header) + 1:]:
        if len(row) != len(header):
            continue
        cells = dict(zip(header, row, strict=True))
        with contextlib.suppress(ValueError):
            rows[(int(cells["NodeId"]), cells.get("DirectoryId", ""))] = {
                "lag": int(cells["Lag"]), "status": cells["Status"]}
    return rows


def quorum_rows(out: str) -> dict[str, Any]:
    """{"leader": id or None, "nodes": {id: {"lag": N, "status": S}}} of a --replication table
    (:func:`replication_rows` by node id: of two rows of one id, the later one)."""
    nodes = {str(node): row for (node, _directory), row in replication_rows(out).items()}
    leader = next((i for i, node in nodes.items() if node["status"] == "Leader"), None)
    return {"leader": leader, "nodes": nodes}


#: A line of ConfigCommand's --describe: two spaces, key=value, then its sensitivity.
CONFIG_LINE = re.compile(r"^\s+([\w.]+)=(\S*) sensitive=", re.MULTILINE)


def config_command(libs: str) -> str:
    """Kafka's ConfigCommand: a class of the tools jar from Kafka 4.0, the Scala one before."""
    jars = [j for j in glob.glob(f"{libs}/kafka-tools-*.jar")
            if re.search(r"/kafka-tools-\d", j)]
    if jars:
        with zipfile.ZipFile(jars[0]) as jar:
            if "org/apache/kafka/tools/ConfigCommand.class" in jar.namelist():
                return "org.apache.kafka.tools.ConfigCommand"
    return "kafka.admin.ConfigCommand"


def cluster_defaults(tools: Any, wanted: dict[str, str]) -> int:
    """Hold the cluster-wide dynamic broker defaults named in ``wanted`` at their values (KR-14):
    with eligible leader replicas (a cluster formatted by Kafka 4.x) the active controller writes
    its own min.insync.replicas there, which outranks every broker's server.properties; a cluster
    formatted before its controllers named the value holds Kafka's default of 1. Only the keys
    named are read and set (--add-config changes those alone), and only where a cluster-wide
    value is set at all: without one (no eligible leader replicas, a cluster migrated from
    ZooKeeper) every broker's own server.properties applies, which kafkaform writes."""
    command = config_command(tools.args.libs)
    entity = ["--entity-type", "brokers", "--entity-default"]
    found = dict(CONFIG_LINE.findall(tools.run(command, *tools.admin(), *entity,
                                               "--describe").stdout))
    changes = {key: value for key, value in wanted.items()
               if key in found and found[key] != value}
    if changes:
        tools.change(command, *tools.admin(), *entity, "--alter", "--add-config",
                     ",".join(f"{k}={v}" for k, v in sorted(changes.items())))
    print(json.dumps({"changed": sorted(changes),
                      "was": {k: found.get(k) for k in sorted(changes)}}))
    return 0


def migration(tools: Any) -> int:
    """Where Kafka's own migration from ZooKeeper stands (KR-09), read from ZooKeeper: the
    /migration znode the active KRaft controller keeps, and /controller. The metadata is copied
    once the controller recorded an offset of the metadata log there."""
    data = tools.zk_get_all(["/migration", "/controller"])
    state = data["/migration"] or {}
    offset = state.get("kraft_metadata_offset", -1)
    controller = (data["/controller"] or {}).get("brokerid")
    print(json.dumps({"migrated": isinstance(offset, int) and offset > 0,
                      "controller": controller, "migration": state}))
    return 0


def migration_reset(tools: Any) -> int:
    """Clear Kafka's migration state from ZooKeeper once the controllers are stopped (KR-09):
    /controller, so that a broker becomes the cluster's controller again, and /migration, so that
    a later migration starts afresh. Prints /migration as it was, for the record."""
    before = tools.zk_get_all(["/migration"])["/migration"]
    if not tools.args.dry_run:
        result = subprocess.run(tools.argv(ZK_SHELL, *tools.zk_tls("-zk-tls-config-file"),
                                           "-server", tools.server["zookeeper.connect"]),
                                input="delete /controller\ndelete /migration\n",
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=120, check=False)
        tools.archived(ZK_SHELL, result.returncode)
    after = tools.zk_get_all(["/migration"])["/migration"]
    print(json.dumps({"migration_was": before, "cleared": after is None}))
    return 0 if after is None or tools.args.dry_run else 1
