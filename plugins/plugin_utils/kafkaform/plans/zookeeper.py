"""The zookeeper role's plan for one member: what to install, which files to write, what to
refuse, and how to roll a restart through the ensemble (roles/zookeeper, deploys/zookeeper.py).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import java, security_steps
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.zookeeper import zookeeper_context
from ..defaults import setting
from ..paths import role_dir
from ..rules import cite
from . import hostread
from .artifact import Release, read_marker, release
from .files import Account, PlannedFile, WritesFiles, planned_paths, template

ROLE = "zookeeper"
#: Where the role installs its four-letter-word and quorum probe (roles/zookeeper/files).
FOUR_LETTER_WORD_SCRIPT = "/usr/local/sbin/zookeeper-4lw"
PURGE_UNITS = ("zookeeper-purge.service", "zookeeper-purge.timer")
#: The units the role enables and starts (roles/zookeeper/tasks/service.yml).
SERVICE_UNIT = "zookeeper.service"
STARTED_UNITS = (SERVICE_UNIT, PURGE_UNITS[1])
#: The agent jar as the download leaves it: then it is neither fetched nor hashed again.
AGENT_JAR_STATE = "root:root:644"
#: `srvr` prints this line on the member that leads: it restarts last (ZK-15).
LEADER_PATTERN = r"(?m)^Mode: leader$"
#: A zoo.cfg server line: its id and the rest (address and ports).
SERVER_LINE = re.compile(r"(?m)^server\.(\d+)=([^:\s]+:\d+:\d+)")


@dataclass(frozen=True)
class ZookeeperHost:
    """What the role needs to know of a member before it changes anything."""

    architecture: str = ""
    java_installed: bool = False
    passwd: str = ""
    group: str = ""
    agent_jar: str = ""
    #: The member's myid, None on a member that has none yet.
    myid: str | None = None
    ip_addresses: tuple[str, ...] = ()
    purge_timer_installed: bool = False
    #: The zoo.cfg the member runs with today, None on a new member.
    running_config: str | None = None
    #: The server lines the running member holds (`conf`), None when it does not answer.
    running_servers: str | None = None
    #: Those of STARTED_UNITS that are enabled and active now (hostread.running_units).
    running_units: frozenset[str] = frozenset()
    #: The marker of the release behind the install directory (plans.artifact.Release).
    release_marker: str | None = None
    #: The state of each planned file and directory that exists (hostread.path_states).
    paths: Mapping[str, str] = field(default_factory=dict)


def _release(settings: Mapping[str, Any]) -> Release:
    return release(ROLE, setting(settings, "zookeeper_version"),
                   setting(settings, "zookeeper_archive_url"),
                   setting(settings, "zookeeper_install_dir"))


def host_read(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any]) -> list[str]:
    """The one command that reads a member (its answers: :func:`parse_host`)."""
    zk = zookeeper_context(cluster, host, settings)
    q = shlex.quote
    package = str(setting(settings, "zookeeper_java_package"))
    return hostread.command([
        hostread.ask("architecture", "dpkg --print-architecture"),
        hostread.ask("java", f"dpkg-query --show --showformat='${{db:Status-Abbrev}}' "
                             f"{q(package)} 2>/dev/null"),
        hostread.ask("passwd", f"getent passwd {q(zk['user'])}"),
        hostread.ask("group", f"getent group {q(zk['group'])}"),
        hostread.ask("agent_jar", f"stat -c '%U:%G:%a' {q(zk['metrics']['jar'])} 2>/dev/null"),
        hostread.ask("myid", f"cat {q(zk['data_dir'] + '/myid')}",
                     present=f"{zk['data_dir']}/myid"),
        hostread.ask("ip_addresses", "hostname --all-ip-addresses"),
        hostread.ask("purge_timer", "echo yes", present=f"{SYSTEMD_UNIT_DIR}/{PURGE_UNITS[1]}"),
        hostread.file_lines("zoo.cfg", f"{zk['conf_dir']}/zoo.cfg"),
        # The server lines the running member holds (`conf`), which a run stopped after writing
        # zoo.cfg and before the restart leaves behind the file. ZK-16
        hostread.ask("membership", f"{FOUR_LETTER_WORD_SCRIPT} conf 127.0.0.1:{zk['client_port']} "
                                   "2>/dev/null | grep '^server\\.' | base64 -w0",
                     present=FOUR_LETTER_WORD_SCRIPT),
        _release(settings).question(),
        *hostread.unit_states(STARTED_UNITS),
        *hostread.path_states(planned_paths(
            _files(zk, str(setting(settings, "zookeeper_version")), write_myid=True),
            zk["directories"])),
    ])


def parse_host(stdout: str) -> ZookeeperHost:
    """:func:`host_read`'s answers."""
    found = hostread.answers(stdout)
    return ZookeeperHost(
        architecture=found.get("architecture", ""),
        java_installed=found.get("java", "").startswith("ii"),
        passwd=found.get("passwd", ""),
        group=found.get("group", ""),
        agent_jar=found.get("agent_jar", ""),
        myid=found.get("myid"),
        ip_addresses=tuple(found.get("ip_addresses", "").split()),
        purge_timer_installed=found.get("purge_timer") == "yes",
        running_config=hostread.decoded(found.get("zoo.cfg")),
        running_servers=hostread.decoded(found.get("membership")) or None,
        running_units=hostread.running_units(found),
        release_marker=read_marker(found),
        paths=hostread.found_paths(found),
    )


@dataclass(frozen=True)
class Roll:
    """ZooKeeper's terms for the one rolling restart (roles/rolling_restart, deploys.base.Roll):
    every member serving and one leader before the first restart and after each one, followers
    first and the leader last. ZK-15"""

    health_argv: list[str]
    last_probe_argv: dict[str, list[str]]
    last_pattern: str
    timeout_s: float
    delay_s: float
    rule: str = "ZK-15"


@dataclass(frozen=True)
class ZookeeperPlan(WritesFiles):
    """Everything the role does on one member, decided."""

    #: The templates' input (kafkaform.contexts.zookeeper).
    context: dict[str, Any]
    #: Why the run must stop before it changes this member, or "": a skipped step of securing
    #: the ensemble in place stops every member (the steps are the ensemble's), a changed myid
    #: this member alone.
    refusal: str
    refusal_stops_all: bool
    java_package: str
    install_java: bool
    account: Account
    create_account: bool
    #: The artifact role's inputs for the release, included only when it is not in place.
    release: dict[str, str]
    install_release: bool
    fetch_agent: bool
    directories: list[dict[str, str]]
    #: Files without secrets, and those with (written with no_log, never diffed).
    files: list[PlannedFile]
    secret_files: list[PlannedFile]
    #: The secrets the secret files read: the templates' name for each, to the cluster secret.
    secrets: dict[str, str]
    certificate_names: list[str]
    #: ZooKeeper is enabled and started unless it is both already: a member whose files change
    #: in this run is restarted by the roll, not by the start (OP-03, ZK-15).
    start_service: bool
    #: The purge timer runs (zookeeper_purge_method timer: enabled and started unless it is both
    #: already), or is stopped if it is there.
    start_purge_timer: bool
    stop_purge_timer: bool
    remove_units: list[str]
    restart_files: list[str]
    roll: Roll
    #: The probe of the verify step: the member answers imok (then the roll's health probe: the
    #: ensemble serves with one leader). Each is asked every 2 s up to ``probe_retries`` times.
    ruok_argv: list[str] = field(default_factory=list)
    probe_retries: int = 0
    #: What the host read found of ``files`` and ``directories`` (install_files' host_state).
    host_state: dict[str, str] = field(default_factory=dict)
    #: A member without myid (new, or its data directory emptied to replace it) starts only once
    #: the other members serve with one leader, or none of them answers yet (a new ensemble):
    #: this probe, asked every 2 s up to ``probe_retries`` times; empty on a member with myid.
    #: ZK-17
    join_gate_argv: list[str] = field(default_factory=list)


def servers(config: str) -> dict[int, str]:
    """The server lines of a zoo.cfg: each member's id to its address and ports."""
    return {int(found[1]): found[2] for found in SERVER_LINE.finditer(config)}


def _membership_refusal(host: str, zk: Mapping[str, Any], running_config: str) -> str:
    """More than one member added, removed or moved to another host in one run: the majorities of
    the old and the new server lists need not overlap, and two leaders could be elected. ZK-16"""
    running = servers(running_config)
    planned = servers("\n".join(zk["servers"]))
    if not running:
        return ""
    changed = sorted(i for i in running.keys() | planned.keys() if running.get(i) != planned.get(i))
    if len(changed) <= 1:
        return ""
    names = ", ".join(f"server.{i}" for i in changed)
    return (
        f"{host}: its running {zk['conf_dir']}/zoo.cfg lists {len(running)} members and the "
        f"inventory's zookeeper group {len(planned)}, differing in {names}. kafkaform changes a "
        f"static ZooKeeper ensemble by one member per run ({cite('ZK-16')}): with two changed at "
        "once a majority of the old server lines and one of the new need not share a member, and "
        "two leaders could serve. Fix: change the zookeeper group by one host (add one, remove "
        "one, or move one zookeeper_id to a new host), run playbooks/zookeeper.yml, then the "
        "next.")


def _myid_refusal(host: str, zk: Mapping[str, Any], existing: str) -> str:
    data_dir = zk["data_dir"]
    return (
        f"{host}: {data_dir}/myid holds {existing} but the inventory gives zookeeper_id "
        f"{zk['id']}. kafkaform never rewrites an existing myid ({cite('ZK-03')}): the "
        "ensemble would see a member vanish and an unknown one appear, with the old member's "
        f"data. If the inventory is wrong, set zookeeper_id: {existing} for {host}. To replace "
        f"the member on purpose, keep the same id and address ({cite('ZK-14')}): stop zookeeper "
        f"on {host}, move {data_dir} (and the dataLogDir) aside, and rerun; the member resyncs "
        f"from the leader. To give it a new id, first take server.{existing} out of the ensemble "
        f"on the other members, then remove {data_dir}/myid here and rerun.")


def _refusal(host: str, zk: Mapping[str, Any], read: ZookeeperHost) -> tuple[str, bool]:
    """The security steps first (SE-10, SE-18), the membership change (ZK-16; both stop every
    member), then the myid (ZK-03, ZK-14; this member alone)."""
    if read.running_config is not None:
        problem = security_steps.member_problem(host, f"{zk['conf_dir']}/zoo.cfg",
                                                read.running_config, zk["security_step"],
                                                zk["tls_step"])
        if problem:
            return problem, True
        membership = _membership_refusal(host, zk, read.running_servers or read.running_config)
        if membership:
            return membership, True
    if read.myid is not None and read.myid.strip() != str(zk["id"]):
        return _myid_refusal(host, zk, read.myid.strip()), False
    return "", False


def _files(zk: Mapping[str, Any], version: str, write_myid: bool) -> list[PlannedFile]:
    group, conf = zk["group"], zk["conf_dir"]

    def read_at_start(dest: str, template: str | None = None,
                      content: str | None = None) -> PlannedFile:
        return PlannedFile(dest=dest, template=template, content=content, group=group,
                           restarts=True)

    def unit(name: str, restarts: bool = False) -> PlannedFile:
        return PlannedFile(template=template(ROLE, f"etc/systemd/system/{name}.j2"),
                           dest=f"{SYSTEMD_UNIT_DIR}/{name}", mode="0644", restarts=restarts)

    planned = [
        # Identical server lines on every member. ZK-02, ZK-04, ZK-08, ZK-09, ZK-13
        read_at_start(f"{conf}/zoo.cfg", template=template(ROLE, "etc/zookeeper/zoo.cfg.j2")),
        read_at_start(f"{conf}/logback.xml",
                      template=template(ROLE, "etc/zookeeper/logback.xml.j2")),
        # The ZooKeeper release the service runs. ZK-01
        read_at_start(f"{conf}/release", content=f"zookeeper {version}\n"),
        # Heap, G1 and GC log rotation. ZK-10, FD-02
        unit("zookeeper.service", restarts=True),
        # The four-letter-word and quorum probe.
        PlannedFile(src=str(role_dir(ROLE) / "files" / "zookeeper-4lw"),
                    dest=FOUR_LETTER_WORD_SCRIPT, mode="0755"),
    ]
    if write_myid:  # ZK-03: written once, never rewritten
        planned.append(read_at_start(f"{zk['data_dir']}/myid", content=f"{zk['id']}\n"))
    if zk["metrics"]["enabled"]:  # the agent rereads its rules: no restart. MO-07
        planned.append(PlannedFile(template=template(ROLE, "etc/zookeeper/jmx-exporter.yml.j2"),
                                   dest=zk["metrics"]["config"], group=group))
    if zk["purge_timer"]["enabled"]:  # ZK-08
        planned += [unit(name) for name in PURGE_UNITS]
    return planned


def _secret_files(zk: Mapping[str, Any]) -> list[PlannedFile]:
    group = zk["group"]
    return [
        # Readable by the service group only. SE-06, SE-07, SE-08
        PlannedFile(template=template(ROLE, "etc/zookeeper/jaas.conf.j2"),
                    dest=zk["sasl"]["jaas_file"], group=group, restarts=True),
        # ssl.keyStore.passwordPath and ssl.quorum.keyStore.passwordPath: zoo.cfg holds no secret.
        PlannedFile(secret="keystore", dest=zk["tls"]["password_file"], group=group,
                    restarts=True),
        # For root's ZooKeeperMain: the service never reads it, so a change restarts nothing.
        PlannedFile(template=template(ROLE, "etc/zookeeper/client-jaas.conf.j2"),
                    dest=zk["sasl"]["client_jaas_file"], mode="0600"),
    ]


def leaving(zk: Mapping[str, Any], running_config: str | None) -> list[str]:
    """Where the probes ask the members the running zoo.cfg lists and the inventory no longer
    does: they may still run, and lead, until the others restarted without them. ZK-16"""
    planned = servers("\n".join(zk["servers"]))
    port = str(zk["client_addresses"][0]).rpartition(":")[2] if zk["client_addresses"] else ""
    return [f"{address.split(':')[0]}:{port}"
            for i, address in sorted(servers(running_config or "").items()) if i not in planned]


def _roll(cluster: Mapping[str, Any], zk: Mapping[str, Any],
          settings: Mapping[str, Any], read: ZookeeperHost) -> Roll:
    probe = [FOUR_LETTER_WORD_SCRIPT, *zk["probe_options"]]
    members = [str(member) for member in cluster["ensemble_by_host"]]
    gone = leaving(zk, read.running_servers or read.running_config)
    return Roll(
        health_argv=[*probe, "--quorum", ",".join(zk["client_addresses"]),
                     *(["--leaving", ",".join(gone)] if gone else [])],
        last_probe_argv={m: [*probe, "srvr", zk["client_address_by_host"][m]] for m in members},
        last_pattern=LEADER_PATTERN,
        timeout_s=float(setting(settings, "zookeeper_restart_timeout_s")),
        delay_s=float(zk["health_poll_s"]))


def zookeeper_plan(cluster: Mapping[str, Any], host: str, settings: Mapping[str, Any],
                   read: ZookeeperHost) -> ZookeeperPlan:
    """The plan for the member ``host``, from the model, the role's settings and the host read."""
    package = str(setting(settings, "zookeeper_java_package"))
    home = str(setting(settings, "zookeeper_java_home") or "")
    if read.architecture:
        home = java.java_home(package, read.architecture, "zookeeper_java_home", home)
    zk = zookeeper_context(cluster, host, {**settings, "zookeeper_java_home": home})
    account = Account(user=zk["user"], group=zk["group"], home=zk["data_dir"],
                      comment="Apache ZooKeeper")
    purge = bool(zk["purge_timer"]["enabled"])
    roll = _roll(cluster, zk, settings, read)
    refusal, stops_all = _refusal(host, zk, read)
    the_release = _release(settings)
    return ZookeeperPlan(
        context=zk,
        refusal=refusal,
        refusal_stops_all=stops_all,
        java_package=package,
        install_java=not read.java_installed,
        account=account,
        create_account=not account.in_place(read.passwd, read.group),
        release=the_release.as_vars(),
        install_release=not the_release.found_in_place(read.release_marker),
        fetch_agent=bool(zk["metrics"]["enabled"]) and read.agent_jar != AGENT_JAR_STATE,
        directories=list(zk["directories"]),
        files=_files(zk, str(setting(settings, "zookeeper_version")), read.myid is None),
        secret_files=_secret_files(zk),
        secrets={"kafka": "zookeeper-kafka", "quorum": "zookeeper-quorum",
                 "keystore": "keystore"},
        certificate_names=[*zk["tls"]["names"], *read.ip_addresses],
        start_service=SERVICE_UNIT not in read.running_units,
        start_purge_timer=purge and PURGE_UNITS[1] not in read.running_units,
        stop_purge_timer=not purge and read.purge_timer_installed,
        remove_units=[] if purge else [f"{SYSTEMD_UNIT_DIR}/{u}" for u in PURGE_UNITS],
        restart_files=list(zk["restart_files"]),
        roll=roll,
        ruok_argv=[FOUR_LETTER_WORD_SCRIPT, "ruok", f"127.0.0.1:{zk['client_port']}"],
        probe_retries=math.ceil(roll.timeout_s / 2),
        host_state=dict(read.paths),
        join_gate_argv=_join_gate(host, zk, read),
    )


def _join_gate(host: str, zk: Mapping[str, Any], read: ZookeeperHost) -> list[str]:
    """ZooKeeper elects the member with the newest transaction log, so a member with an empty one
    is elected only among members that hold no more than it; but started while a majority of the
    others is down, it could form a quorum with a member that misses committed writes. It starts
    once every other member serves with one leader (then it syncs from that leader as a follower),
    or when none runs yet. ZK-17"""
    if read.myid is not None:
        return []
    others = [address for member, address in zk["client_address_by_host"].items()
              if member != host]
    if not others:
        return []
    return [FOUR_LETTER_WORD_SCRIPT, *zk["probe_options"], "--quorum-or-none", ",".join(others)]
