"""The zookeeper role's plan: the host read's command and parser, and each decision the role and
the pyinfra deploy take from it (kafkaform.plans.zookeeper)."""

from __future__ import annotations

import base64
import getpass
import grp
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkaform.plans import hostread
from kafkaform.plans.zookeeper import (
    AGENT_JAR_STATE,
    ZookeeperHost,
    host_read,
    parse_host,
    zookeeper_plan,
)
from tests.unit.test_hostread_units import STARTS, systemctl_stub
from tests.unit.test_security_steps import cluster as migrating_cluster
from tests.unit.test_zookeeper_context import cluster

#: A member as a converged run leaves it (kf-zk2 of inventory/lab).
CONVERGED = ZookeeperHost(
    architecture="amd64", java_installed=True,
    passwd="zookeeper:x:999:999:Apache ZooKeeper:/var/lib/zookeeper:/usr/sbin/nologin",
    group="zookeeper:x:999:", agent_jar=AGENT_JAR_STATE, myid="2",
    ip_addresses=("10.89.0.12",), purge_timer_installed=True, running_config=None,
    running_units=frozenset({"zookeeper.service", "zookeeper-purge.timer"}))


def plan(read: ZookeeperHost = CONVERGED, **settings: Any) -> Any:
    return zookeeper_plan(cluster(), "kf-zk2", settings, read)


def test_a_new_host_gets_java_the_account_the_agent_and_its_myid() -> None:
    p = plan(ZookeeperHost(architecture="arm64"))
    assert (p.install_java, p.create_account, p.fetch_agent) == (True, True, True)
    assert (p.start_service, p.start_purge_timer) == (True, True)
    myid = [f for f in p.files if f.dest.endswith("/myid")]
    assert [(f.content, f.restarts) for f in myid] == [("2\n", True)]
    assert p.context["java"]["binary"] == "/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
    assert not p.refusal


def test_a_converged_member_needs_nothing_installed_and_keeps_its_myid() -> None:
    p = plan()
    assert (p.install_java, p.create_account, p.fetch_agent) == (False, False, False)
    assert (p.start_service, p.start_purge_timer) == (False, False)
    assert not [f for f in p.files if f.dest.endswith("/myid")]
    assert not p.refusal


def test_an_account_with_another_home_is_declared_again() -> None:
    moved = ZookeeperHost(**{**CONVERGED.__dict__,
                             "passwd": CONVERGED.passwd.replace("/var/lib/zookeeper", "/home/zk")})
    assert plan(moved).create_account


def test_a_different_myid_is_refused_with_the_host_the_setting_and_the_fix() -> None:
    p = plan(ZookeeperHost(**{**CONVERGED.__dict__, "myid": "7"}))
    assert p.refusal.startswith("kf-zk2: /var/lib/zookeeper/myid holds 7")
    assert "set zookeeper_id: 7 for kf-zk2" in p.refusal
    assert "server.7" in p.refusal
    assert not p.refusal_stops_all  # this member alone


def test_skipping_a_securing_step_is_refused_before_the_myid() -> None:
    """A member running without SASL at all may not be taken to enforced SASL in one run."""
    open_config = "clientPort=2181\nserver.1=kf-zk1:2888:3888\n"
    p = zookeeper_plan(migrating_cluster(""), "zk1", {},
                       ZookeeperHost(architecture="amd64", myid="9", running_config=open_config))
    assert p.refusal.startswith("zk1 runs at step open of securing the cluster in place")
    assert "kafka_security_migration: plaintext_replication" in p.refusal
    assert "myid" not in p.refusal
    assert p.refusal_stops_all  # the steps are the ensemble's


def test_autopurge_stops_and_removes_a_purge_timer_left_behind() -> None:
    p = plan(zookeeper_purge_method="autopurge")
    assert p.stop_purge_timer
    assert [Path(u).name for u in p.remove_units] == ["zookeeper-purge.service",
                                                        "zookeeper-purge.timer"]
    assert not [f for f in p.files if "purge" in f.dest]
    timer_kept = plan()
    assert not timer_kept.stop_purge_timer and not timer_kept.remove_units
    assert {Path(f.dest).name for f in timer_kept.files} >= {"zookeeper-purge.timer"}


def test_the_certificate_names_the_member_and_its_addresses() -> None:
    assert plan().certificate_names == ["kf-zk2", "10.89.0.12"]


def test_every_file_read_at_start_is_a_restart_file() -> None:
    p = plan(ZookeeperHost(architecture="amd64"))
    read_at_start = {f.dest for f in (*p.files, *p.secret_files) if f.restarts}
    assert read_at_start <= set(p.restart_files)
    assert {"/etc/zookeeper/zoo.cfg", "/var/lib/zookeeper/myid",
            "/etc/systemd/system/zookeeper.service"} <= read_at_start


def test_no_secret_value_is_in_the_plan() -> None:
    """Secret files name their secrets; the values are filled in at the write (with_secrets)."""
    p = plan()
    password = [f for f in p.secret_files if f.secret]
    assert [f.secret for f in password] == ["keystore"]
    assert set(p.secrets.values()) == {"zookeeper-kafka", "zookeeper-quorum", "keystore"}
    assert all(f.content is None for f in p.secret_files)


def test_the_leader_goes_last_and_every_member_is_probed() -> None:
    roll = plan().roll
    assert sorted(roll.last_probe_argv) == ["kf-zk1", "kf-zk2", "kf-zk3"]
    assert roll.last_probe_argv["kf-zk1"][-2:] == ["srvr", "kf-zk1:2182"]
    assert roll.health_argv[-2] == "--quorum"
    assert plan(zookeeper_restart_timeout_s=31).probe_retries == 16


@pytest.mark.parametrize(("package", "architecture"), [("temurin-17-jre", "amd64"),
                                                        ("openjdk-17-jre-headless", "sparc")])
def test_java_home_names_the_setting_when_it_cannot_tell(package: str, architecture: str) -> None:
    with pytest.raises(ValueError, match="set zookeeper_java_home"):
        plan(ZookeeperHost(architecture=architecture), zookeeper_java_package=package)


def test_a_given_java_home_wins() -> None:
    p = plan(ZookeeperHost(architecture="sparc"), zookeeper_java_home="/opt/jdk/")
    assert p.context["java"]["binary"] == "/opt/jdk/bin/java"


def test_the_parser_reads_labels_not_positions() -> None:
    config = "clientPort=2181\nsecureClientPort=2182\n"
    out = "\n".join([
        f"zoo.cfg {base64.b64encode(config.encode()).decode()}",
        "ip_addresses 10.0.0.5 fd00::5",
        "myid 3",
        "java ii ",
        "architecture arm64",
    ])
    read = parse_host(out)
    assert (read.architecture, read.java_installed, read.myid) == ("arm64", True, "3")
    assert read.ip_addresses == ("10.0.0.5", "fd00::5")
    assert read.running_config == config
    assert (read.passwd, read.purge_timer_installed) == ("", False)
    assert read.running_units == frozenset()
    assert parse_host(f"enabled:zookeeper.service enabled\n{out}\nactive:zookeeper.service "
                      "active").running_units == {"zookeeper.service"}


def test_the_host_read_runs_and_parses_on_a_real_host(tmp_path: Path) -> None:
    """The command itself, run here: a member with a myid and a zoo.cfg, and one with neither."""
    user = getpass.getuser()
    group = grp.getgrgid(os.getgid()).gr_name
    settings = {"zookeeper_data_dir": str(tmp_path / "data"),
                "zookeeper_conf_dir": str(tmp_path / "conf"),
                "zookeeper_user": user, "zookeeper_group": group}
    argv = host_read(cluster(), "kf-zk2", settings)
    ran = subprocess.run(argv, capture_output=True, text=True, check=True)
    fresh = parse_host(ran.stdout)
    assert (fresh.myid, fresh.running_config) == (None, None)
    # Each unit's two lines, whatever this machine's systemd (or none) answers.
    assert {"enabled:zookeeper.service", "active:zookeeper.service",
            "enabled:zookeeper-purge.timer",
            "active:zookeeper-purge.timer"} <= set(hostread.answers(ran.stdout))
    stubbed = systemctl_stub(tmp_path / "bin", {"zookeeper.service": ("enabled", "active")})
    assert parse_host(subprocess.run(argv, capture_output=True, text=True, check=True,
                                     env=stubbed).stdout).running_units == {"zookeeper.service"}
    assert fresh.passwd.startswith(f"{user}:") and fresh.group.startswith(f"{group}:")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "myid").write_text("2\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "zoo.cfg").write_text("tickTime=2000\n")
    found = parse_host(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert (found.myid, found.running_config) == ("2", "tickTime=2000\n")
    assert found.architecture == subprocess.run(["dpkg", "--print-architecture"],
                                                 capture_output=True, text=True,
                                                 check=True).stdout.strip()


def test_an_absent_file_and_an_empty_one_differ() -> None:
    assert hostread.decoded(None) is None
    assert hostread.decoded("") == ""
    assert hostread.decoded("not base64!") is None


def _units(zookeeper: tuple[str, str], timer: tuple[str, str] = ("enabled", "active")) -> str:
    return (f"enabled:zookeeper.service {zookeeper[0]}\nactive:zookeeper.service {zookeeper[1]}\n"
            f"enabled:zookeeper-purge.timer {timer[0]}\nactive:zookeeper-purge.timer {timer[1]}\n")


@pytest.mark.parametrize(("enabled", "active", "start"), STARTS)
def test_zookeeper_is_started_unless_it_is_enabled_and_active(enabled: str, active: str,
                                                              start: bool) -> None:
    read = parse_host(_units((enabled, active)))
    assert read.running_units == ({"zookeeper-purge.timer"} if start
                                  else {"zookeeper.service", "zookeeper-purge.timer"})
    p = plan(ZookeeperHost(**{**CONVERGED.__dict__, "running_units": read.running_units}))
    assert (p.start_service, p.start_purge_timer) == (start, False)


@pytest.mark.parametrize(("enabled", "active", "start"), STARTS)
def test_the_purge_timer_is_started_unless_it_is_enabled_and_active(enabled: str, active: str,
                                                                    start: bool) -> None:
    running = parse_host(_units(("enabled", "active"), (enabled, active))).running_units
    read = ZookeeperHost(**{**CONVERGED.__dict__, "running_units": running})
    p = plan(read)
    assert (p.start_service, p.start_purge_timer) == (False, start)
    # autopurge: the timer is stopped if it is there, never started
    assert not plan(read, zookeeper_purge_method="autopurge").start_purge_timer


#: The settings of a secured ensemble (SASL enforced, TLS required) a member runs with.
SECURED = """clientPortAddress=127.0.0.1
authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
enforce.auth.enabled=true
enforce.auth.schemes=sasl
quorum.auth.enableSasl=true
quorum.auth.learnerRequireSasl=true
quorum.auth.serverRequireSasl=true
portUnification=false
secureClientPort=2182
ssl.clientAuth=need
sslQuorum=true
"""


def running(*lines: str) -> ZookeeperHost:
    """kf-zk2 converged, running with these server lines."""
    return ZookeeperHost(**{**CONVERGED.__dict__,
                            "running_config": SECURED + "\n".join(lines) + "\n"})


THREE = ("server.1=kf-zk1:2888:3888", "server.2=kf-zk2:2888:3888", "server.3=kf-zk3:2888:3888")


# (case, the server lines kf-zk2 runs with; the inventory holds kf-zk1..3 with ids 1..3)
@pytest.mark.parametrize(("case", "lines"), [
    ("unchanged", THREE),
    ("one added: 2 -> 3", THREE[:2]),
    ("one removed: 4 -> 3", (*THREE, "server.4=kf-zk4:2888:3888")),
    ("one host replaced under its id", (*THREE[:2], "server.3=kf-zk9:2888:3888")),
])
def test_one_membership_change_per_run_is_planned(case: str, lines: tuple[str, ...]) -> None:
    assert not plan(running(*lines)).refusal, case


# (case, the server lines kf-zk2 runs with, the servers the refusal names)
@pytest.mark.parametrize(("case", "lines", "named"), [
    ("two added: 1 -> 3", THREE[1:2], "server.1, server.3"),
    ("two removed: 5 -> 3", (*THREE, "server.4=kf-zk4:2888:3888", "server.5=kf-zk5:2888:3888"),
     "server.4, server.5"),
    ("one added and one removed", (*THREE[:2], "server.4=kf-zk4:2888:3888"),
     "server.3, server.4"),
    ("two hosts replaced", (THREE[0], "server.2=kf-zk8:2888:3888", "server.3=kf-zk9:2888:3888"),
     "server.2, server.3"),
])
def test_two_membership_changes_in_one_run_are_refused_on_every_member(
        case: str, lines: tuple[str, ...], named: str) -> None:
    p = plan(running(*lines))
    assert p.refusal.startswith(f"kf-zk2: its running /etc/zookeeper/zoo.cfg lists {len(lines)} "
                                f"members and the inventory's zookeeper group 3, differing in "
                                f"{named}."), case
    assert "ZK-16" in p.refusal and "Fix: change the zookeeper group by one host" in p.refusal
    assert p.refusal_stops_all


def test_a_member_without_myid_waits_for_the_others_or_for_none() -> None:
    """New or replaced with an empty data directory: it starts once kf-zk1 and kf-zk3 serve with
    one leader, or while neither runs (a new ensemble). A member with myid waits for none. ZK-17"""
    gate = plan(ZookeeperHost(architecture="amd64")).join_gate_argv
    assert gate[-2:] == ["--quorum-or-none", "kf-zk1:2182,kf-zk3:2182"]
    assert plan().join_gate_argv == []


def test_a_member_leaving_must_follow_while_the_others_roll() -> None:
    """kf-zk4 is out of the inventory but still in the server lines kf-zk2 runs with (its `conf`
    answer, not its zoo.cfg already written): the probe asks it and wants it to follow (down, the
    old lines' majority could be lost; leading, the others could not follow it). ZK-16"""
    read = ZookeeperHost(**{**running(*THREE).__dict__, "running_servers": "\n".join(
        [f"{line}:participant" for line in THREE] + ["server.4=kf-zk4:2888:3888:participant"])})
    p = plan(read)
    assert not p.refusal
    assert p.roll.health_argv[-4:] == ["--quorum", "kf-zk1:2182,kf-zk2:2182,kf-zk3:2182",
                                       "--leaving", "kf-zk4:2182"]
    assert "--leaving" not in plan(running(*THREE)).roll.health_argv


def load_probe() -> Any:
    import importlib.machinery
    import importlib.util
    path = str(Path(__file__).parents[2] / "roles/zookeeper/files/zookeeper-4lw")
    loader = importlib.machinery.SourceFileLoader("zookeeper_4lw", path)
    spec = importlib.util.spec_from_loader("zookeeper_4lw", loader)
    assert spec is not None
    probe = importlib.util.module_from_spec(spec)
    loader.exec_module(probe)
    return probe


@pytest.mark.parametrize(("answers", "rc"), [
    ({"a": "follower", "b": "follower", "e": "leader"}, 1),   # the leaving member still leads
    ({"a": "follower", "b": "leader", "e": "follower"}, 0),   # it follows
    ({"a": "follower", "b": "leader"}, 1),                    # it is down
    ({"a": "follower", "b": "follower", "e": "follower"}, 1),  # no leader
    ({"a": "follower", "e": "leader"}, 1),                    # a staying member is down
])
def test_the_probe_with_a_leaving_member(answers: dict[str, str], rc: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    probe = load_probe()
    monkeypatch.setattr(probe, "mode", lambda target, tls: answers.get(
        target, "unreachable ([Errno 111] Connection refused)"))
    assert probe.main(["zookeeper-4lw", "--quorum", "a,b", "--leaving", "e"]) == rc


@pytest.mark.parametrize(("answers", "rc"), [
    ({}, 0),                                            # none answers: a new ensemble
    ({"a": "follower", "b": "leader"}, 0),              # the others serve with one leader
    ({"a": "follower", "b": "not serving"}, 1),         # a quorum without the others all serving
    ({"a": "follower"}, 1),                             # one of two down: wait, an empty member
    ({"a": "leader", "b": "leader"}, 1),                # could form a quorum with it
])
def test_the_join_gate_of_the_probe(answers: dict[str, str], rc: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """files/zookeeper-4lw --quorum-or-none, its decision on the members' answers."""
    probe = load_probe()
    monkeypatch.setattr(probe, "mode", lambda target, tls: answers.get(
        target, "unreachable ([Errno 111] Connection refused)"))
    assert probe.main(["zookeeper-4lw", "--quorum-or-none", "a,b"]) == rc
