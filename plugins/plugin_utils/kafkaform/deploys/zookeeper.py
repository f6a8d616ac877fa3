"""``roles/zookeeper`` as a pyinfra deploy: the member's plan (kafkaform.plans.zookeeper), carried
out as the role carries it out: the same refusal, install, files, units, purge timer and rolling
restart (followers first, the leader last, every member serving before each).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.zookeeper.zookeeper
"""

from __future__ import annotations

from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host
from pyinfra.operations import files, python, systemd

from ..model import ZOOKEEPER
from ..plans.zookeeper import ROLE, ZookeeperPlan, host_read, parse_host, zookeeper_plan
from . import artifact, tls
from .base import (
    Planned,
    Roll,
    Unchanged,
    cluster,
    create_account,
    install_packages,
    install_planned,
    install_secret_files,
    make_directories,
    member_contexts,
    play_hosts,
    role_settings,
    roll_restarts,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale


def settings(of: Host | None = None) -> dict[str, Any]:
    """``zookeeper_settings`` of roles/zookeeper/vars/main.yml, for the host ``of``."""
    return role_settings(ROLE, "os_tuning_nofile_limit", "kafkaform_apache_mirror_url", of=of)


def plan(of: Host | None = None) -> ZookeeperPlan:
    """The plan of the member ``of`` (the current host by default), from its host read."""
    target = host if of is None else of
    found = settings(target)
    argv = tuple(host_read(cluster(), target.name, found))
    read = parse_host(target.get_fact(CommandOutput, argv=argv))
    return zookeeper_plan(cluster(), target.name, found, read)


def context(of: Host | None = None) -> dict[str, Any]:
    """The ``zookeeper`` dict every template of roles/zookeeper/templates/ reads."""
    return plan(of).context


def _install(p: ZookeeperPlan) -> None:
    """roles/zookeeper/tasks/install.yml."""
    if p.install_java:
        install_packages("Install Java from the distribution", [p.java_package],
                         cache_time=3600, no_recommends=True, java=True)
    if p.create_account:
        create_account(p.account, "without login or home")
    artifact.install(p.release, p.install_release)


def _certificate(p: ZookeeperPlan) -> bool:
    """roles/zookeeper/tasks/tls.yml; whether the certificate or the trust bundle may change."""
    t = p.context["tls"]
    files.directory(name="Create the TLS directory", path=t["dir"], user="root",
                    group=p.account.group, mode="750")
    return tls.certificate(p.certificate_names, t["ou"], p.account.group, service=ROLE,
                           trust=t["trust"], keystore=t["keystore"], cert=t["cert"],
                           key=t["key"])


def _configure(p: ZookeeperPlan) -> tuple[list[Any], list[Any], bool]:
    """roles/zookeeper/tasks/configure.yml; returns the operations of the files the member reads
    at start, those of the systemd units, and whether its TLS material may change."""
    make_directories(p.directories)
    rendered = {ROLE: p.context}
    written = install_planned([f.as_task_item() for f in p.files], rendered)
    tls_changes = _certificate(p)
    written |= install_secret_files(p, ROLE, rendered, {})
    metrics = p.context["metrics"]
    if p.fetch_agent:
        artifact.download(str(metrics["url"]), f"{metrics['url']}.sha512", str(metrics["jar"]), 60)
    if p.stop_purge_timer:
        systemd.service(name="Stop the purge timer, ZooKeeper's autopurge replaces it",
                        service="zookeeper-purge.timer", running=False, enabled=False)
    units = [op for dest, op in written.items() if dest.endswith((".service", ".timer"))]
    units += [files.file(name=f"Remove {path}", path=path, present=False)
              for path in p.remove_units]
    restart = [written[f.dest] for f in (*p.files, *p.secret_files) if f.restarts]
    return restart + units, units, tls_changes


def _wait_for_quorum(p: ZookeeperPlan) -> None:
    ran = until_ok(host.name, p.roll.health_argv, p.roll.timeout_s, p.roll.delay_s)
    if not ran.ok:
        raise DeployError(f"{host.name}: the ensemble does not serve with one leader after "
                          f"{p.roll.timeout_s:g} s: {ran.said} (ZK-13)")


def _wait_to_join(p: ZookeeperPlan) -> None:
    ran = until_ok(host.name, p.join_gate_argv, p.roll.timeout_s, 2.0)
    if not ran.ok:
        raise DeployError(f"{host.name}: a member with no data starts only once the other "
                          f"members serve with one leader, and they do not after "
                          f"{p.roll.timeout_s:g} s: {ran.said} (ZK-17)")


@deploy("zookeeper")
def zookeeper() -> None:
    """The zookeeper role on the hosts of the zookeeper group (playbooks/zookeeper.yml)."""
    if ZOOKEEPER not in host.groups:
        return
    p = plan()
    if p.refusal:
        raise DeployError(p.refusal)
    _install(p)
    restart_files, units, tls_changes = _configure(p)
    if will_change(*units):
        systemd.daemon_reload(name="Reload systemd for ZooKeeper units")
    # Asked only when the host read found it not both enabled and active, as the role does.
    started: Planned = Unchanged()
    if p.start_service and p.join_gate_argv:
        python.call(name="Wait until the other members serve with one leader (ZK-17)",
                    function=_wait_to_join, p=p)
    if p.start_service:
        started = systemd.service(name="Enable and start ZooKeeper", service="zookeeper",
                                  running=True, enabled=True)
    if p.start_purge_timer:
        systemd.service(name="Enable and start the purge timer", service="zookeeper-purge.timer",
                        running=True, enabled=True)
    members = play_hosts(ZOOKEEPER)
    restart_files_of = member_contexts(ROLE, members, {"restart_files": p.restart_files},
                                       lambda m: {"restart_files": plan(m).restart_files})
    # Asked of the host, not remembered by a run: a run stopped between writing a file and the
    # restart left the member stale. OP-03
    stale_now = host.get_fact(ServiceStale, service="zookeeper",
                              paths=tuple(p.restart_files))["stale"]
    roll_restarts(Roll(
        service="zookeeper", rule=p.roll.rule, members=tuple(restart_files_of),
        restart_files={m: c["restart_files"] for m, c in restart_files_of.items()},
        gate_argv=p.roll.health_argv, health_argv=p.roll.health_argv,
        last_probe_argv={m: argv for m, argv in p.roll.last_probe_argv.items()
                         if m in restart_files_of},
        last_pattern=p.roll.last_pattern, timeout_s=p.roll.timeout_s, delay_s=p.roll.delay_s),
        might_be_stale=stale_now or tls_changes or will_change(*restart_files))
    if will_change(started):
        python.call(name="Wait until the ensemble serves with one leader",
                    function=_wait_for_quorum, p=p)
