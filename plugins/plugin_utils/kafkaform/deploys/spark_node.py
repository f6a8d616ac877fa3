"""``roles/spark_node`` as a pyinfra deploy: the same install, files, TLS material, units and
restarts (the master and history server when stale, the workers one at a time, each registered
with the master again before the next).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.spark_node.spark_node
"""

from __future__ import annotations

import shlex
from functools import cache
from typing import Any

import yaml
from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host
from pyinfra.operations import files, python, server, systemd

from ..contexts.spark_node import connector_jars, spark_node_context
from ..java import DEFAULT_PACKAGE, java_home
from ..model import SPARK_MASTER, SPARK_WORKER
from ..paths import role_dir
from . import artifact, tls
from .base import (
    Roll,
    cluster,
    install_packages,
    mark_changing,
    member_contexts,
    play_hosts,
    put_content,
    put_rendered,
    restart_if_stale,
    role_settings,
    roll_restarts,
    run_on,
    secret,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale

ROLE = "spark_node"
GROUPS = (SPARK_MASTER, SPARK_WORKER)
WORKER = "spark-worker"
MASTER = "spark-master"
#: The host's architecture, logical CPUs and memory in MiB, as the role's host.yml reads them
#: (and Ansible's facts processor_vcpus and memtotal_mb count them).
HOST_PROBE = ("sh", "-c", "dpkg --print-architecture; grep -c ^processor /proc/cpuinfo; "
                          "awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo")


@cache
def _role_vars() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((role_dir(ROLE) / "vars" / "main.yml").read_text())
    return found


def _pth_probe() -> str:
    """``spark_node_pth_probe_script``: the environment's site-packages directory and the lines of
    its spark-release.pth, the release's pyspark and its newest py4j."""
    return str(_role_vars()["spark_node_pth_probe_script"])


def _host_facts(of: Host) -> tuple[str, int, int]:
    lines = (of.get_fact(CommandOutput, argv=HOST_PROBE) + "\n\n\n").split("\n")
    return lines[0].strip(), int(lines[1].strip() or 1), int(lines[2].strip() or 0)


def settings(of: Host | None = None) -> dict[str, Any]:
    """``spark_node_settings`` of roles/spark_node/vars/main.yml, for the host ``of``."""
    target = host if of is None else of
    found = role_settings(ROLE, of=target)
    arch = _host_facts(target)[0]
    found["spark_node_java_home"] = java_home(
        str(found.get("spark_node_java_package") or DEFAULT_PACKAGE), arch.strip(),
        "spark_node_java_home", str(found.get("spark_node_java_home") or ""))
    return found


def context(of: Host | None = None) -> dict[str, Any]:
    """The ``spark_node`` dict every template of templates/spark_node/ reads."""
    target = host if of is None else of
    cores, memory_mb = _host_facts(target)[1:]
    return spark_node_context(cluster(), target.name, settings(target),
                              {"cores": cores, "memory_mb": memory_mb})


def _probe_argv(node: dict[str, Any], script: str, targets: list[str]) -> list[str]:
    """A probe of roles/spark_node/vars/main.yml run by the host's python3: the master's web UI
    over TLS (trusting the cluster CA), then what it checks there."""
    return ["python3", "-c", str(_role_vars()[script]), node["master_webui_urls"][0],
            node["tls"]["trust"], *targets]


def workers_alive_argv(node: dict[str, Any]) -> list[str]:
    """``spark_node_workers_alive_argv``: exits 0 when the master lists every worker ALIVE."""
    return _probe_argv(node, "spark_node_workers_alive_script", node["worker_addresses"])


def _python_environment(node: dict[str, Any], s: dict[str, Any], release_changes: bool) -> None:
    """The role's venv, py4j and .pth tasks: the release's own pyspark and py4j on the drivers'
    Python path, nothing downloaded or built."""
    env = str(s["spark_node_python_env"])
    home = str(s["spark_node_install_dir"])
    env_python = f"{env}/bin/python"
    if not host.get_fact(CommandOutput, argv=(
            "sh", "-c", f"test -e {shlex.quote(env_python)} && echo yes || true")):
        server.shell(name="Create the Python environment the PySpark drivers run in",
                     commands=[f"python3 -m venv --without-pip {shlex.quote(env)}"])
    probe = host.get_fact(CommandOutput, argv=("sh", "-c", f"{shlex.quote(env_python)} -c "
                                                           f"{shlex.quote(_pth_probe())} {home} "
                                                           "2>/dev/null || true"))
    lines = probe.split("\n")
    if release_changes or len(lines) < 3:
        # Known only once the release is unpacked and the environment exists: written then.
        python.call(name="Put the release's pyspark and py4j on the environment's path",
                    function=_write_pth, env_python=env_python, home=home)
        return
    put_content(f"{lines[1]}\n{lines[2]}\n", f"{lines[0]}/spark-release.pth")


def _write_pth(env_python: str, home: str) -> None:
    ran = run_on(host.name, [env_python, "-c", _pth_probe(), home])
    lines = ran.stdout.split("\n")
    if not ran.ok or len(lines) < 3:
        raise DeployError(f"{host.name}: cannot read {env_python}'s site-packages: {ran.said}")
    pth = f"{lines[0]}/spark-release.pth"
    ran = run_on(host.name, ["sh", "-c", f"printf '%s\\n%s\\n' {shlex.quote(lines[1])} "
                                         f"{shlex.quote(lines[2])} > {shlex.quote(pth)} "
                                         f"&& chown root:root {shlex.quote(pth)} "
                                         f"&& chmod 644 {shlex.quote(pth)}"])
    if not ran.ok:
        raise DeployError(f"{host.name}: cannot write {pth}: {ran.said}")


def _install(node: dict[str, Any], s: dict[str, Any]) -> None:
    """roles/spark_node/tasks/install.yml."""
    install_packages("Install Java 17 and Python from the distribution",
                     [str(s["spark_node_java_package"]), str(s["spark_node_python_package"])],
                     cache_time=3600, no_recommends=True, java=True)
    server.group(name="Create the spark group", group=node["group"], system=True)
    server.user(name="Create the spark user, without a login shell", user=node["user"],
                group=node["group"], system=True, shell="/usr/sbin/nologin",
                home=str(s["spark_node_home_dir"]), create_home=False, ensure_home=False,
                comment="Apache Spark")
    release_changes = artifact.install("spark", str(s["spark_node_version"]),
                                       str(s["spark_node_archive_url"]),
                                       link=str(s["spark_node_install_dir"]))
    files.directory(name="Create the Kafka connector directory", path=node["connector_dir"],
                    user="root", group="root", mode="755")
    timeout = 60  # the role's get_url timeout
    urls = [str(url) for url in s["spark_node_connector_urls"]]
    for url, jar in zip(urls, connector_jars(urls, str(s["spark_node_install_dir"])), strict=True):
        artifact.download(url, f"{url}.sha512", jar, timeout)
    _python_environment(node, s, release_changes)


def _configure(node: dict[str, Any], s: dict[str, Any]) -> tuple[list[Any], list[Any], bool]:
    """roles/spark_node/tasks/configure.yml and tls.yml; returns the operations of the files the
    daemons read at start, those of the units, and whether the TLS material may change."""
    group = node["group"]
    files.directory(name="Create the configuration directory", path=node["conf_dir"],
                    user="root", group=group, mode="750")
    for path in node["spark_dirs"]:
        files.directory(name=f"Create {path}", path=path, user=node["user"], group=group,
                        mode="750")
    files.directory(name="Create the TLS directory", path=node["tls"]["dir"], user="root",
                    group=group, mode="750")
    tls_changes = tls.certificate(list(node["tls_names"]), "spark", group,
                                  trust=node["tls"]["trust"], keystore=node["tls"]["keystore"])
    rendered = {ROLE: node}
    conf = node["conf_dir"]
    ops = [
        put_rendered("spark_node/spark-env.sh.j2", rendered, f"{conf}/spark-env.sh",
                     group=group, mode="640"),
        put_rendered("spark_node/spark-defaults.conf.j2",
                     {**rendered, "spark_node_secrets": {
                         "authenticate": secret("spark-authenticate"),
                         "keystore": secret("keystore")}},
                     f"{conf}/spark-defaults.conf", group=group, mode="640"),
        put_rendered("spark_node/log4j2.properties.j2", rendered, f"{conf}/log4j2.properties",
                     group=group, mode="640"),
        put_content(f"spark {s['spark_node_version']}\n", f"{conf}/release", group=group,
                    mode="640"),
    ]
    units = [put_rendered("spark_node/spark-daemon.service.j2", {**rendered, **unit["vars"]},
                          unit["dest"])
             for unit in node["unit_files"]]
    return ops + units, units, tls_changes


def apps_served_argv(node: dict[str, Any]) -> list[str]:
    """``spark_node_apps_served_argv``: exits 0 when every running application has an executor
    (or no worker has a core to give it)."""
    return _probe_argv(node, "spark_node_apps_served_script", node["worker_webui_urls"])


def _restart_if_stale(daemons: list[dict[str, Any]], node: dict[str, Any], workers: list[str],
                      timeout_s: float) -> None:
    """At execution time: restart each daemon that runs an older configuration than its files.
    With recovery mode FILESYSTEM a restarted master recovers its workers and applications; when
    an application is left without executors (SP-10), the workers restart one at a time."""
    restarted = [d["name"] for d in daemons if restart_if_stale(d["name"], d["restart_files"])]
    if MASTER not in restarted:
        return
    served = until_ok(host.name, apps_served_argv(node), timeout_s, 3.0)
    if served.ok:
        return
    if not workers:
        raise DeployError(f"{host.name}: after the master's restart {served.said}, and no worker "
                          f"is in this run to restart. Deploy the spark_worker group too, or "
                          f"restart {WORKER} on {', '.join(node['worker_hosts'])} one at a time "
                          f"(SP-10)")
    alive = workers_alive_argv(node)
    for worker in workers:
        ran = run_on(worker, ["systemctl", "restart", f"{WORKER}.service"])
        if not ran.ok:
            raise DeployError(f"{worker}: restarting {WORKER} failed: {ran.said}. See "
                              f"`journalctl -u {WORKER}`.")
        ran = until_ok(worker, alive, timeout_s, float(node["health_poll_s"]))
        if not ran.ok:
            raise DeployError(f"{worker}: the master does not list every worker as ALIVE after "
                              f"{timeout_s:g} s: {ran.said} (SP-09)")


def _wait_for_workers(argv: list[str], timeout_s: float) -> None:
    ran = until_ok(host.name, argv, timeout_s, 3.0)
    if not ran.ok:
        raise DeployError(f"{host.name}: the master does not list every worker as ALIVE after "
                          f"{timeout_s:g} s: {ran.said} (SP-09)")


@deploy("spark_node")
def spark_node() -> None:
    """The spark_node role on spark_master and spark_worker (playbooks/spark_node.yml)."""
    if not any(group in host.groups for group in GROUPS):
        return
    s = settings()
    node = context()
    _install(node, s)
    restart_ops, units, tls_changes = _configure(node, s)
    if will_change(*units):
        systemd.daemon_reload(name="Reload systemd for the Spark units")
    started = [systemd.service(name=f"Enable and start {daemon['name']}",
                               service=daemon["name"], running=True, enabled=True)
               for daemon in node["daemons"]]
    stale_now = {daemon["name"]: host.get_fact(ServiceStale, service=daemon["name"], paths=tuple(
        daemon["restart_files"]))["stale"] for daemon in node["daemons"]}
    if tls_changes or will_change(*restart_ops):
        mark_changing(node["read_at_start"])  # the pipeline's job reads them too
    might_restart = tls_changes or will_change(*restart_ops) or any(stale_now.values())
    others = [d for d in node["daemons"] if d["name"] != WORKER]
    timeout_s = float(s["spark_node_register_timeout_s"])
    if others and might_restart:
        python.call(name="Restart the stale master and history server [OP-03, SP-10]",
                    function=_restart_if_stale, daemons=others, node=node,
                    workers=[w.name for w in play_hosts(SPARK_WORKER)], timeout_s=timeout_s)
    alive = workers_alive_argv(node)
    # Added on every node that may restart something, so the workers roll after the master's
    # restart above; the operation runs once.
    workers = play_hosts(SPARK_WORKER)
    contexts = member_contexts(ROLE, workers, node, context)
    roll_restarts(Roll(
        service=WORKER, rule="SP-09", members=tuple(contexts),
        restart_files={m: next(d["restart_files"] for d in c["daemons"] if d["name"] == WORKER)
                       for m, c in contexts.items()},
        gate_argv=alive, health_argv=alive, timeout_s=timeout_s,
        delay_s=float(node["health_poll_s"]), gate_skips=node["worker_address_by_host"]),
        might_be_stale=might_restart and bool(contexts))
    if node["is_master"] and (might_restart or will_change(*started)):
        python.call(name="Wait until the master lists every worker as ALIVE",
                    function=_wait_for_workers, argv=alive, timeout_s=timeout_s)
