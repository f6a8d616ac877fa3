"""``roles/zookeeper`` as a pyinfra deploy: the same security gate, install, files, units, purge
timer and rolling restart (followers first, the leader last, every member serving before each).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.zookeeper.zookeeper
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host
from pyinfra.operations import files, python, server, systemd

from .. import security_steps
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.zookeeper import zookeeper_context
from ..model import ZOOKEEPER
from ..paths import role_dir
from . import artifact, tls
from .base import (
    Roll,
    cluster,
    install_packages,
    make_directories,
    member_contexts,
    play_hosts,
    put_content,
    put_rendered,
    role_settings,
    roll_restarts,
    secret,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale

ROLE = "zookeeper"
#: Where the role installs its four-letter-word and quorum probe (roles/zookeeper/vars/main.yml).
FOUR_LETTER_WORD_SCRIPT = "/usr/local/sbin/zookeeper-4lw"
PURGE_UNITS = ("zookeeper-purge.service", "zookeeper-purge.timer")


def _java_home_detected(of: Host) -> str:
    arch = of.get_fact(CommandOutput, argv=("dpkg", "--print-architecture")) or ""
    return f"/usr/lib/jvm/java-17-openjdk-{arch.strip()}"


def settings(of: Host | None = None) -> dict[str, Any]:
    """``zookeeper_settings`` of roles/zookeeper/vars/main.yml, for the host ``of``."""
    found = role_settings(ROLE, "os_tuning_nofile_limit", "kafkaform_apache_mirror_url", of=of)
    found["zookeeper_java_home"] = found.get("zookeeper_java_home") or _java_home_detected(
        host if of is None else of)
    return found


def context(of: Host | None = None) -> dict[str, Any]:
    """The ``zookeeper`` dict every template of templates/zookeeper/ reads."""
    return zookeeper_context(cluster(), (host if of is None else of).name, settings(of))


def _security_gate(zk: dict[str, Any]) -> None:
    """roles/zookeeper/tasks/security_gate.yml. SE-07, SE-08, SE-10"""
    path = f"{zk['conf_dir']}/zoo.cfg"
    running = host.get_fact(CommandOutput, argv=("sh", "-c", f"cat {shlex.quote(path)} || true"))
    if running:
        problem = security_steps.member_problem(host.name, path, running,
                                                zk["security_step"], zk["tls_step"])
        if problem:
            raise DeployError(problem)


def _install(zk: dict[str, Any], s: dict[str, Any]) -> None:
    """roles/zookeeper/tasks/install.yml."""
    install_packages("Install Java 17 from the distribution", [str(s["zookeeper_java_package"])],
                     cache_time=3600, no_recommends=True, java=True)
    server.group(name="Create the zookeeper group", group=zk["group"], system=True)
    server.user(name="Create the zookeeper user, without login or home", user=zk["user"],
                group=zk["group"], system=True, shell="/usr/sbin/nologin", home=zk["data_dir"],
                create_home=False, ensure_home=False, comment="Apache ZooKeeper")
    install_dir = zk["install_dir"]
    artifact.install("zookeeper", str(s["zookeeper_version"]), str(s["zookeeper_archive_url"]),
                     posixpath.dirname(install_dir), install_dir)
    files.put(name="Install the four-letter-word and quorum probe",
              src=str(role_dir(ROLE) / "files" / "zookeeper-4lw"), dest=FOUR_LETTER_WORD_SCRIPT,
              user="root", group="root", mode="755")


def _certificate(zk: dict[str, Any]) -> bool:
    """The member's own certificate with its names and IP addresses (SE-18); whether it or the
    trust bundle may change in this run."""
    addresses = host.get_fact(CommandOutput, argv=("hostname", "--all-ip-addresses")) or ""
    t = zk["tls"]
    files.directory(name="Create the TLS directory", path=t["dir"], user="root",
                    group=zk["group"], mode="750")
    return tls.certificate([*t["names"], *addresses.split()], t["ou"], zk["group"],
                           service="zookeeper", trust=t["trust"], keystore=t["keystore"],
                           cert=t["cert"], key=t["key"])


def _configure(zk: dict[str, Any], version: str) -> tuple[list[Any], list[Any], bool]:
    """roles/zookeeper/tasks/configure.yml; returns the operations of the files the member reads
    at start, those of the systemd units, and whether its TLS material may change."""
    group = zk["group"]
    make_directories(zk["directories"])
    tls_changes = _certificate(zk)
    myid = f"{zk['data_dir']}/myid"
    existing = host.get_fact(CommandOutput, argv=("sh", "-c", f"cat {shlex.quote(myid)} "
                                                              "2>/dev/null || true")).strip()
    if existing and existing != str(zk["id"]):
        raise DeployError(
            f"{host.name}: {myid} holds {existing} but the inventory gives zookeeper_id "
            f"{zk['id']}. kafkaform never rewrites an existing myid: the ensemble would see a "
            f"member vanish and an unknown one appear, with the old member's data. If the "
            f"inventory is wrong, set zookeeper_id: {existing} for {host.name}; to replace the "
            "member on purpose, see roles/zookeeper/tasks/configure.yml (ZK-03, ZK-14)")
    restart = []
    if not existing:
        restart.append(put_content(f"{zk['id']}\n", myid, group=group, mode="640"))
    rendered = {ROLE: zk}
    restart.append(put_rendered("zookeeper/zoo.cfg.j2", rendered, f"{zk['conf_dir']}/zoo.cfg",
                                group=group, mode="640"))
    logins = {**rendered, "zookeeper_secrets": {"kafka": secret("zookeeper-kafka"),
                                                "quorum": secret("zookeeper-quorum")}}
    restart.append(put_rendered("zookeeper/jaas.conf.j2", logins, zk["sasl"]["jaas_file"],
                                group=group, mode="640"))
    restart.append(put_content(f"{secret('keystore')}\n", zk["tls"]["password_file"],
                               group=group, mode="640"))
    # For root's ZooKeeperMain: the service never reads it, so a change restarts nothing.
    put_rendered("zookeeper/client-jaas.conf.j2", logins, zk["sasl"]["client_jaas_file"],
                 mode="600")
    restart.append(put_rendered("zookeeper/logback.xml.j2", rendered,
                                f"{zk['conf_dir']}/logback.xml", group=group, mode="640"))
    restart.append(put_content(f"zookeeper {version}\n", f"{zk['conf_dir']}/release",
                               group=group, mode="640"))
    artifact.jmx_agent(zk["metrics"], "zookeeper/jmx-exporter.yml.j2", rendered, group)
    units = [put_rendered("zookeeper/zookeeper.service.j2", rendered,
                          f"{SYSTEMD_UNIT_DIR}/zookeeper.service")]
    if zk["purge_timer"]["enabled"]:
        units += [put_rendered(f"zookeeper/{unit}.j2", rendered, f"{SYSTEMD_UNIT_DIR}/{unit}")
                  for unit in PURGE_UNITS]
    else:
        timer = f"{SYSTEMD_UNIT_DIR}/zookeeper-purge.timer"
        if host.get_fact(CommandOutput, argv=("sh", "-c", f"test -e {timer} && echo yes || true")):
            systemd.service(name="Stop the purge timer, ZooKeeper's autopurge replaces it",
                            service="zookeeper-purge.timer", running=False, enabled=False)
        units += [files.file(name=f"Remove {unit}", path=f"{SYSTEMD_UNIT_DIR}/{unit}",
                             present=False) for unit in PURGE_UNITS]
    return restart + units, units, tls_changes


def _probe(zk: dict[str, Any], *args: str) -> list[str]:
    """The four-letter-word probe's command line, over TLS once every member serves it."""
    return [FOUR_LETTER_WORD_SCRIPT, *zk["probe_options"], *args]


def _wait_for_quorum(zk: dict[str, Any], timeout_s: float) -> None:
    ran = until_ok(host.name, _probe(zk, "--quorum", ",".join(zk["client_addresses"])),
                   timeout_s, 2.0)
    if not ran.ok:
        raise DeployError(f"{host.name}: the ensemble does not serve with one leader after "
                          f"{timeout_s:g} s: {ran.said} (ZK-13)")


@deploy("zookeeper")
def zookeeper() -> None:
    """The zookeeper role on the hosts of the zookeeper group (playbooks/zookeeper.yml)."""
    if ZOOKEEPER not in host.groups:
        return
    s = settings()
    zk = zookeeper_context(cluster(), host.name, s)
    _security_gate(zk)
    _install(zk, s)
    restart_files, units, tls_changes = _configure(zk, str(s["zookeeper_version"]))
    if will_change(*units):
        systemd.daemon_reload(name="Reload systemd for ZooKeeper units")
    started = systemd.service(name="Enable and start ZooKeeper", service="zookeeper",
                              running=True, enabled=True)
    if zk["purge_timer"]["enabled"]:
        systemd.service(name="Enable and start the purge timer", service="zookeeper-purge.timer",
                        running=True, enabled=True)
    members = play_hosts(ZOOKEEPER)
    contexts = member_contexts(ROLE, members, zk, context)
    # Asked of the host, not remembered by a run: a run stopped between writing a file and the
    # restart left the member stale. OP-03
    stale_now = host.get_fact(ServiceStale, service="zookeeper",
                              paths=tuple(zk["restart_files"]))["stale"]
    timeout_s = float(s["zookeeper_restart_timeout_s"])
    quorum_argv = _probe(zk, "--quorum", ",".join(zk["client_addresses"]))
    roll_restarts(Roll(
        service="zookeeper", rule="ZK-15", members=tuple(contexts),
        restart_files={m: c["restart_files"] for m, c in contexts.items()},
        gate_argv=quorum_argv, health_argv=quorum_argv,
        last_probe_argv={m: _probe(c, "srvr", c["client_address_by_host"][m])
                         for m, c in contexts.items()},
        last_pattern=r"(?m)^Mode: leader$", timeout_s=timeout_s,
        delay_s=float(zk["health_poll_s"])),
        might_be_stale=stale_now or tls_changes or will_change(*restart_files))
    if will_change(started):
        python.call(name="Wait until the ensemble serves with one leader",
                    function=_wait_for_quorum, zk=zk, timeout_s=timeout_s)
