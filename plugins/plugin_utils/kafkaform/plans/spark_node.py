"""The spark_node role's plan for one Spark node: what to install, which files to write, which
daemons restart for which files, and the probes that gate the workers' rolling restart
(roles/spark_node, deploys/spark_node.py).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import java
from ..contexts.spark_node import connector_dir, connector_jars, spark_node_context
from ..defaults import setting
from ..paths import role_dir
from . import hostread
from .artifact import Release, read_marker, release
from .files import Account, PlannedFile, WritesFiles, planned_paths, template

ROLE = "spark_node"
#: A connector jar as the download leaves it: then it is neither fetched nor hashed again.
JAR_STATE = "root:root:644"
#: Seconds between two looks at the master while a restarted daemon comes back (SP-09, SP-10).
PROBE_DELAY_S = 3
#: Every daemon a node may run (kafkaform.contexts.spark_node): the host read asks each unit's
#: state without knowing which of them this node runs; the plan starts those it runs.
DAEMON_NAMES = ("spark-master", "spark-history", "spark-worker")


def _setting(settings: Mapping[str, Any], name: str) -> Any:
    return setting(settings, f"{ROLE}_{name}")


def _packages(settings: Mapping[str, Any]) -> list[str]:
    """Java, and Python for PySpark's drivers."""
    return [str(_setting(settings, "java_package")), str(_setting(settings, "python_package"))]


def _jars(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(url, path) of each Kafka connector jar."""
    urls = [str(url) for url in _setting(settings, "connector_urls")]
    return list(zip(urls, connector_jars(urls, str(_setting(settings, "install_dir"))),
                    strict=True))


@dataclass(frozen=True)
class SparkNodeHost:
    """What the role needs to know of a node before it changes anything."""

    architecture: str = ""
    installed: frozenset[str] = frozenset()
    cores: int = 1
    memory_mb: int = 0
    python_env: bool = False
    passwd: str = ""
    group: str = ""
    #: Each connector jar's owner:group:mode, by path ("" when absent).
    jars: Mapping[str, str] = field(default_factory=dict)
    #: The daemons' units (DAEMON_NAMES) that are enabled and active now.
    running_units: frozenset[str] = frozenset()
    #: The marker of the release behind the install directory (plans.artifact.Release).
    release_marker: str | None = None
    #: The state of each planned file and directory that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)


def node_release(settings: Mapping[str, Any]) -> Release:
    """The Spark release the node is to run, behind spark_node_install_dir."""
    return release("spark", _setting(settings, "version"), _setting(settings, "archive_url"),
                   _setting(settings, "install_dir"))


def host_read(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a node (its answers: :func:`parse_host`): the CPUs and memory
    as Ansible's facts processor_vcpus and memtotal_mb count them."""
    q = shlex.quote
    env_python = f"{str(_setting(settings, 'python_env')).rstrip('/')}/bin/python"
    return hostread.command([
        hostread.ask("architecture", "dpkg --print-architecture"),
        *(hostread.ask(f"package:{package}",
                       f"dpkg-query --show --showformat='${{db:Status-Abbrev}}' {q(package)} "
                       "2>/dev/null") for package in _packages(settings)),
        hostread.ask("cores", "grep -c ^processor /proc/cpuinfo"),
        hostread.ask("memory_mb", "awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo"),
        hostread.ask("python_env", "echo yes", present=env_python),
        hostread.ask("passwd", f"getent passwd {q(str(_setting(settings, 'user')))}"),
        hostread.ask("group", f"getent group {q(str(_setting(settings, 'group')))}"),
        *(hostread.ask(f"jar:{path}", f"stat -c '%U:%G:%a' {q(path)} 2>/dev/null")
          for _url, path in _jars(settings)),
        node_release(settings).question(),
        *hostread.unit_states(f"{name}.service" for name in DAEMON_NAMES),
        *hostread.path_states(planned_paths(*_written(cluster, host, settings))),
    ])


def _written(cluster: Mapping[str, Any], host: str,
             settings: Mapping[str, Any]) -> tuple[list[PlannedFile], list[dict[str, str]]]:
    """The files without secrets and the directories the node's plan writes, as a new node's
    plan has them (their paths do not depend on the read)."""
    p = spark_node_plan(cluster, host, settings, SparkNodeHost())
    return p.files, p.directories


def parse_host(stdout: str) -> SparkNodeHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    return SparkNodeHost(
        architecture=found.get("architecture", ""),
        installed=frozenset(label.removeprefix("package:") for label, answer in found.items()
                            if label.startswith("package:") and answer.startswith("ii")),
        cores=int(found.get("cores") or 1),
        memory_mb=int(found.get("memory_mb") or 0),
        python_env=found.get("python_env") == "yes",
        passwd=found.get("passwd", ""),
        group=found.get("group", ""),
        jars={label.removeprefix("jar:"): answer for label, answer in found.items()
              if label.startswith("jar:")},
        running_units=hostread.running_units(found),
        release_marker=read_marker(found),
        paths=hostread.found_paths(found),
    )


def pth_files(stdout: str) -> list[dict[str, Any]]:
    """The drivers' environment's ``spark-release.pth`` (the release's own pyspark and py4j on
    its path), from what the plan's ``pth_read_argv`` printed; none before the environment and
    the release are in place (a dry run on a new host)."""
    found = hostread.answers(stdout)
    if not found.get("site") or not found.get("pyspark"):
        return []
    return [PlannedFile(dest=f"{found['site']}/spark-release.pth", mode="0644",
                        content=f"{found['pyspark']}\n{found.get('py4j', '')}\n").as_task_item()]


@dataclass(frozen=True)
class SparkNodePlan(WritesFiles):
    """Everything the role does on one Spark node, decided."""

    #: The templates' input (kafkaform.contexts.spark_node).
    context: dict[str, Any]
    packages: list[str]
    install_packages: bool
    account: Account
    create_account: bool
    #: The artifact role's inputs for the release, included only when it is not in place.
    release: dict[str, str]
    install_release: bool
    create_python_env: bool
    #: [url, path] of each connector jar to download.
    jars_missing: list[list[str]]
    #: The connector directory, made before the jars arrive.
    install_directories: list[dict[str, str]]
    #: The command that prints where spark-release.pth goes and what it holds (pth_files).
    pth_read_argv: list[str]
    directories: list[dict[str, str]]
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    secrets: dict[str, str]
    #: Exits 0 when the master lists every worker ALIVE (SP-09); every running application
    #: has an executor (SP-10). Asked every PROBE_DELAY_S up to probe_retries times.
    workers_alive_argv: list[str]
    apps_served_argv: list[str]
    probe_retries: int
    timeout_s: float
    #: The argument each worker is named by in workers_alive_argv: a worker about to restart
    #: need not be registered before its own restart (its configuration may keep it out).
    gate_skips: dict[str, str]
    #: The names of the node's daemons to enable and start: those the host read did not find
    #: both enabled and active. A daemon whose files change in this run is restarted by the
    #: restarts after the start, not by it (OP-03, SP-09).
    start_daemons: list[str]
    #: What the host read found of ``files`` and ``directories`` (install_files' host_state).
    host_state: dict[str, str] = field(default_factory=dict)
    #: The node's daemons run another Spark release than the one planned. Masters, workers and
    #: drivers of two releases cannot talk (their messages are Java-serialized classes) and a
    #: master's recovery state is its release's, so the whole cluster changes at once: every
    #: worker stops, the master stops, its recovery state is emptied, it starts on the new
    #: release, then the workers do (the pipeline's job was stopped before, SP-12).
    release_change: bool = False
    #: Empties the master's recovery state on a release change ([] on a node that keeps none).
    clear_recovery_argv: list[str] = field(default_factory=list)


def _script(name: str) -> str:
    """A probe of the role's files/, run by the host's python3 from its text."""
    return (role_dir(ROLE) / "files" / name).read_text(encoding="utf-8")


def _files(node: Mapping[str, Any], version: str) -> list[PlannedFile]:
    """spark-env.sh (read by systemd and Spark's scripts), the console-only log configuration
    (the journal keeps the logs), the release and the daemons' hardened units."""
    conf, group = node["conf_dir"], node["group"]

    def config(name: str, template: str | None = None, content: str | None = None) -> PlannedFile:
        return PlannedFile(dest=f"{conf}/{name}", template=template, content=content,
                           group=group, restarts=True)

    return [
        config("spark-env.sh", template=template(ROLE, "etc/spark/spark-env.sh.j2")),
        config("log4j2.properties", template=template(ROLE, "etc/spark/log4j2.properties.j2")),
        config("release", content=f"spark {version}\n"),
        *(PlannedFile(dest=unit["dest"],
                      template=template(ROLE, "etc/systemd/system/spark-daemon.service.j2"),
                      vars=unit["vars"], mode="0644", restarts=True)
          for unit in node["unit_files"]),
    ]


def spark_node_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                    read: SparkNodeHost) -> SparkNodePlan:
    """The plan for the Spark node ``host``, from the model, the role's settings and the read."""
    packages = _packages(settings)
    home = java.java_home(packages[0], read.architecture or "amd64", "spark_node_java_home",
                          str(_setting(settings, "java_home") or ""))
    node = spark_node_context(cluster, host, {**settings, "spark_node_java_home": home},
                              {"cores": read.cores, "memory_mb": read.memory_mb})
    account = Account(user=node["user"], group=node["group"], home=node["home_dir"],
                      comment="Apache Spark")
    install_dir = str(_setting(settings, "install_dir")).rstrip("/")
    the_release = node_release(settings)
    timeout_s = float(_setting(settings, "register_timeout_s"))
    master_probe = [node["master_webui_urls"][0], node["tls"]["trust"]]
    return SparkNodePlan(
        context=node,
        packages=packages,
        install_packages=not set(packages) <= read.installed,
        account=account,
        create_account=not account.in_place(read.passwd, read.group),
        release=the_release.as_vars(),
        install_release=not the_release.found_in_place(read.release_marker),
        create_python_env=not read.python_env,
        jars_missing=[[url, path] for url, path in _jars(settings)
                      if read.jars.get(path) != JAR_STATE],
        install_directories=[{"path": connector_dir(install_dir), "owner": "root",
                              "group": "root", "mode": "0755"}],
        pth_read_argv=[node["python"], "-c", _script("spark-pth.py"), install_dir],
        directories=[{"path": node["conf_dir"], "owner": "root", "group": node["group"],
                      "mode": "0750"},
                     *({"path": path, "owner": node["user"], "group": node["group"],
                        "mode": "0750"} for path in node["spark_dirs"])],
        files=_files(node, str(_setting(settings, "version"))),
        # Its master URL, connector class path, UTC, recovery and authentication. SP-04, SE-09
        secret_files=[PlannedFile(dest=f"{node['conf_dir']}/spark-defaults.conf",
                                  template=template(ROLE, "etc/spark/spark-defaults.conf.j2"),
                                  group=node["group"], restarts=True)],
        secrets={"authenticate": "spark-authenticate", "keystore": "keystore"},
        workers_alive_argv=["python3", "-c", _script("spark-workers-alive.py"), *master_probe,
                            *node["worker_addresses"]],
        apps_served_argv=["python3", "-c", _script("spark-apps-served.py"), *master_probe,
                          *node["worker_webui_urls"]],
        probe_retries=math.ceil(timeout_s / PROBE_DELAY_S),
        timeout_s=timeout_s,
        gate_skips=dict(node["worker_address_by_host"]),
        start_daemons=[daemon["name"] for daemon in node["daemons"]
                       if f"{daemon['name']}.service" not in read.running_units],
        host_state=dict(read.paths),
        release_change=(read.release_marker is not None
                        and not the_release.found_in_place(read.release_marker)
                        and bool(read.running_units)),
        clear_recovery_argv=(["find", node["recovery_dir"], "-mindepth", "1", "-delete"]
                             if node["is_master"] and node["recovery_dir"] else []),
    )
