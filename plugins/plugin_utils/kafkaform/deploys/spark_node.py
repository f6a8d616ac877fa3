"""``roles/spark_node`` as a pyinfra deploy: the same install, files, TLS material, units and
restarts (the master and history server when stale, the workers one at a time, each registered
with the master again before the next).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.spark_node.spark_node
"""

from __future__ import annotations

import shlex
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host
from pyinfra.operations import files, python, server, systemd

from ..model import SPARK_MASTER, SPARK_WORKER
from ..plans.spark_node import (
    PROBE_DELAY_S,
    ROLE,
    SparkNodePlan,
    host_read,
    parse_host,
    pth_files,
    spark_node_plan,
)
from . import artifact, tls
from .base import (
    Roll,
    cluster,
    create_account,
    install_packages,
    install_planned,
    install_secret_files,
    make_directories,
    mark_changing,
    member_contexts,
    play_hosts,
    restart_if_stale,
    role_settings,
    roll_restarts,
    run_on,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale

GROUPS = (SPARK_MASTER, SPARK_WORKER)
WORKER = "spark-worker"
MASTER = "spark-master"


def settings(of: Host | None = None) -> dict[str, Any]:
    """``spark_node_settings`` of roles/spark_node/vars/main.yml, for the host ``of``."""
    return role_settings(ROLE, of=of)


def plan(of: Host | None = None) -> SparkNodePlan:
    """The plan of the node ``of`` (the current host by default), from its host read."""
    target = host if of is None else of
    found = settings(target)
    argv = tuple(host_read(cluster(), target.name, found))
    read = parse_host(target.get_fact(CommandOutput, argv=argv))
    return spark_node_plan(cluster(), target.name, found, read)


def _python_environment(p: SparkNodePlan, release_changes: bool) -> None:
    """The role's venv and .pth tasks: the release's own pyspark and py4j on the drivers' Python
    path, nothing downloaded or built."""
    node = p.context
    if p.create_python_env:
        server.shell(name="Create the Python environment the PySpark drivers run in",
                     commands=[f"python3 -m venv --without-pip {shlex.quote(node['python_env'])}"])
    probe = "" if p.create_python_env or release_changes else host.get_fact(
        CommandOutput, argv=("sh", "-c", shlex.join(p.pth_read_argv) + " 2>/dev/null || true"))
    planned = pth_files(probe)
    if not planned:
        # Known only once the release is unpacked and the environment exists: written then.
        python.call(name="Put the release's pyspark and py4j on the environment's path",
                    function=_write_pth, argv=p.pth_read_argv)
        return
    install_planned(planned, {})


def _write_pth(argv: list[str]) -> None:
    ran = run_on(host.name, argv)
    planned = pth_files(ran.stdout) if ran.ok else []
    if not planned:
        raise DeployError(f"{host.name}: cannot read the drivers' environment's site-packages: "
                          f"{ran.said}")
    pth = planned[0]
    ran = run_on(host.name, ["sh", "-c", f"printf '%s' {shlex.quote(pth['content'])} > "
                                         f"{shlex.quote(pth['dest'])} && chown root:root "
                                         f"{shlex.quote(pth['dest'])} && chmod 644 "
                                         f"{shlex.quote(pth['dest'])}"])
    if not ran.ok:
        raise DeployError(f"{host.name}: cannot write {pth['dest']}: {ran.said}")


def _install(p: SparkNodePlan) -> None:
    """roles/spark_node/tasks/install.yml."""
    if p.install_packages:
        install_packages("Install Java and Python from the distribution", p.packages,
                         cache_time=3600, no_recommends=True, java=True)
    if p.create_account:
        create_account(p.account, "without a login shell")
    release_changes = artifact.install(p.release, p.install_release)
    make_directories(p.install_directories)
    for url, jar in p.jars_missing:
        artifact.download(url, f"{url}.sha512", jar, 60)  # the role's get_url timeout
    _python_environment(p, release_changes)


def _configure(p: SparkNodePlan) -> tuple[list[Any], list[Any], bool]:
    """roles/spark_node/tasks/configure.yml and tls.yml; returns the operations of the files the
    daemons read at start, those of the units, and whether the TLS material may change."""
    node = p.context
    make_directories(p.directories)
    files.directory(name="Create the TLS directory", path=node["tls"]["dir"], user="root",
                    group=p.account.group, mode="750")
    tls_changes = tls.certificate(list(node["tls_names"]), "spark", p.account.group,
                                  trust=node["tls"]["trust"], keystore=node["tls"]["keystore"])
    rendered = {ROLE: node}
    written = install_planned([f.as_task_item() for f in p.files], rendered)
    written |= install_secret_files(p, ROLE, rendered, {})
    units = [written[unit["dest"]] for unit in node["unit_files"]]
    restart = [written[f.dest] for f in (*p.files, *p.secret_files) if f.restarts]
    return restart, units, tls_changes


def _restart_if_stale(daemons: list[dict[str, Any]], p: SparkNodePlan, workers: list[str],
                      timeout_s: float) -> None:
    """At execution time: restart each daemon that runs an older configuration than its files.
    With recovery mode FILESYSTEM a restarted master recovers its workers and applications; when
    an application is left without executors (SP-10), the workers restart one at a time."""
    restarted = [d["name"] for d in daemons if restart_if_stale(d["name"], d["restart_files"])]
    if MASTER not in restarted:
        return
    served = until_ok(host.name, p.apps_served_argv, timeout_s, PROBE_DELAY_S)
    if served.ok:
        return
    node = p.context
    if not workers:
        raise DeployError(f"{host.name}: after the master's restart {served.said}, and no worker "
                          f"is in this run to restart. Deploy the spark_worker group too, or "
                          f"restart {WORKER} on {', '.join(node['worker_hosts'])} one at a time "
                          f"(SP-10)")
    alive = p.workers_alive_argv
    for worker in workers:
        ran = run_on(worker, ["systemctl", "restart", f"{WORKER}.service"])
        if not ran.ok:
            raise DeployError(f"{worker}: restarting {WORKER} failed: {ran.said}. See "
                              f"`journalctl -u {WORKER}`.")
        ran = until_ok(worker, alive, timeout_s, float(node["health_poll_s"]))
        if not ran.ok:
            raise DeployError(f"{worker}: the master does not list every worker as ALIVE after "
                              f"{timeout_s:g} s: {ran.said} (SP-09)")


def _change_release(p: SparkNodePlan, workers: list[str]) -> None:
    """At execution time, on the master: roles/spark_node/tasks/release_change.yml, the whole
    cluster moved to the new release at once (every worker stopped, the master started again
    with its recovery state emptied, then the workers). SP-12"""

    def run(name: str, argv: list[str]) -> None:
        ran = run_on(name, argv)
        if not ran.ok:
            raise DeployError(f"{name}: {' '.join(argv)} failed: {ran.said} (SP-12)")

    for worker in workers:
        run(worker, ["systemctl", "stop", f"{WORKER}.service"])
    run(host.name, ["systemctl", "stop", f"{MASTER}.service"])
    if p.clear_recovery_argv:
        run(host.name, p.clear_recovery_argv)
    run(host.name, ["systemctl", "start", f"{MASTER}.service"])
    for worker in workers:
        run(worker, ["systemctl", "start", f"{WORKER}.service"])


def _wait_for_workers(argv: list[str], timeout_s: float) -> None:
    ran = until_ok(host.name, argv, timeout_s, PROBE_DELAY_S)
    if not ran.ok:
        raise DeployError(f"{host.name}: the master does not list every worker as ALIVE after "
                          f"{timeout_s:g} s: {ran.said} (SP-09)")


@deploy("spark_node")
def spark_node() -> None:
    """The spark_node role on spark_master and spark_worker (playbooks/spark_node.yml)."""
    if not any(group in host.groups for group in GROUPS):
        return
    p = plan()
    node = p.context
    _install(p)
    restart_ops, units, tls_changes = _configure(p)
    if will_change(*units):
        systemd.daemon_reload(name="Reload systemd for the Spark units")
    # Only the daemons the host read found not both enabled and active, as the role does.
    started = [systemd.service(name=f"Enable and start {name}", service=name, running=True,
                               enabled=True)
               for name in p.start_daemons]
    if node["is_master"] and p.release_change:
        python.call(name="Move the whole cluster to the new Spark release at once [SP-12]",
                    function=_change_release, p=p,
                    workers=[w.name for w in play_hosts(SPARK_WORKER)])
    stale_now = {daemon["name"]: host.get_fact(ServiceStale, service=daemon["name"], paths=tuple(
        daemon["restart_files"]))["stale"] for daemon in node["daemons"]}
    if tls_changes or will_change(*restart_ops):
        mark_changing(node["read_at_start"])  # the pipeline's job reads them too
    might_restart = tls_changes or will_change(*restart_ops) or any(stale_now.values())
    others = [d for d in node["daemons"] if d["name"] != WORKER]
    timeout_s = p.timeout_s
    if others and might_restart:
        python.call(name="Restart the stale master and history server [OP-03, SP-10]",
                    function=_restart_if_stale, daemons=others, p=p,
                    workers=[w.name for w in play_hosts(SPARK_WORKER)], timeout_s=timeout_s)
    alive = p.workers_alive_argv
    # Added on every node that may restart something, so the workers roll after the master's
    # restart above; the operation runs once.
    workers = play_hosts(SPARK_WORKER)
    contexts = member_contexts(ROLE, workers, node, lambda m: plan(m).context)
    roll_restarts(Roll(
        service=WORKER, rule="SP-09", members=tuple(contexts),
        restart_files={m: next(d["restart_files"] for d in c["daemons"] if d["name"] == WORKER)
                       for m, c in contexts.items()},
        gate_argv=alive, health_argv=alive, timeout_s=timeout_s,
        delay_s=float(node["health_poll_s"]), gate_skips=p.gate_skips),
        might_be_stale=might_restart and bool(contexts))
    if node["is_master"] and (might_restart or will_change(*started)):
        python.call(name="Wait until the master lists every worker as ALIVE",
                    function=_wait_for_workers, argv=alive, timeout_s=timeout_s)
