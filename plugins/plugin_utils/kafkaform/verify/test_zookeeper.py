"""ZooKeeper ensemble checks: a working quorum, not just running processes.

    kafkaform verify -i inventory/lab --checks zookeeper [--limit zookeeper]

The ensemble (members, ids, server lines, paths, users) comes from the kafkaform model over the
inventory (``--ansible-inventory``, else ``$KAFKAFORM_INVENTORY``, else Ansible's configured one),
never from constants here. Members are reached with ``--hosts`` when given (matched by inventory
name or address), else through the inventory's own connection (``podman://`` for podman hosts,
``ansible://`` otherwise). The znode test writes and deletes one ``/kafkaform-verify-*`` node,
logged in as Kafka's user through the member's client login (``client-jaas.conf``); the anonymous
session test tries to create one and checks it was refused and not created. The TLS test asks
every member's secure client port from the first member, with and without its certificate (SE-18).
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import testinfra.host  # type: ignore[import-untyped]

from kafkaform.plans.zookeeper import (
    FOUR_LETTER_WORD_SCRIPT,
    ZookeeperPlan,
    host_read,
    parse_host,
    zookeeper_plan,
)
from kafkaform.verify.conftest import (
    Inventory,
    Nodes,
    assert_live_jvm,
    assert_planned_files,
    stat_paths,
    unreadable_by,
)

SERVING = ("leader", "follower")

# One four-letter word over the client port, from the member itself (python3 is on every host
# Ansible manages).
FOUR_LETTER_WORD = (
    "import socket,sys\n"
    "s=socket.create_connection(('127.0.0.1',int(sys.argv[2])),timeout=5)\n"
    "s.sendall(sys.argv[1].encode())\n"
    "b=b''\n"
    "while True:\n"
    "    c=s.recv(65536)\n"
    "    if not c: break\n"
    "    b+=c\n"
    "sys.stdout.write(b.decode())\n"
)


@dataclass(frozen=True)
class Member:
    name: str
    host: testinfra.host.Host
    plan: ZookeeperPlan  # what the role planned for this member, read as the role reads it

    @property
    def expected(self) -> Mapping[str, Any]:
        """The role's template context for this member."""
        return self.plan.context

    def four_letter_word(self, word: str) -> str:
        cmd = self.host.run("python3 -c %s %s %s", FOUR_LETTER_WORD, word,
                            str(self.expected["client_port"]))
        assert cmd.rc == 0, f"{self.name}: {word}: {cmd.stderr}"
        return str(cmd.stdout)

    def mode(self) -> str:
        for line in self.four_letter_word("srvr").splitlines():
            if line.startswith("Mode: "):
                return line.removeprefix("Mode: ").strip()
        return "not serving"

    def client(self, *command: str, login: bool = True) -> Any:
        """Run one ZooKeeperMain command against this member's client port, logged in as Kafka's
        user through the member's client login, or anonymously with ``login=False``."""
        exp = self.expected
        java = exp["java"]["binary"]
        jaas = [f"-Djava.security.auth.login.config={exp['sasl']['client_jaas_file']}",
                *exp["sasl"]["jvm_options"]]
        argv = [java, "-Xmx64m", f"-Dlogback.configurationFile={exp['conf_dir']}/logback.xml",
                *(jaas if login else []),
                "-cp", f"{exp['install_dir']}/lib/*", "org.apache.zookeeper.ZooKeeperMain",
                "-server", f"127.0.0.1:{exp['client_port']}", *command]
        return self.host.run(shlex.join(argv) + " 2>&1")


@pytest.fixture(scope="module")
def ensemble(nodes: Nodes, inventory: Inventory) -> list[Member]:
    members = []
    for n in nodes("ensemble", "ZooKeeper ensemble"):
        read = n.host.run(shlex.join(host_read(inventory.cluster, n.name, n.variables)))
        assert read.rc == 0, f"{n.name}: the host read failed: {read.stderr}"
        planned = zookeeper_plan(inventory.cluster, n.name, n.variables, parse_host(read.stdout))
        members.append(Member(n.name, n.host, planned))
    return members


def test_nothing_left_to_do_and_nothing_refused(ensemble: list[Member]) -> None:
    """Read as the role reads it, a converged member needs no Java, account or agent jar, and
    the run would not stop on it."""
    for member in ensemble:
        p = member.plan
        assert not p.refusal, f"{member.name}: {p.refusal}"
        assert not (p.install_java or p.create_account or p.fetch_agent), (
            f"{member.name}: Java {p.install_java}, account {p.create_account}, "
            f"agent jar {p.fetch_agent} still to install")


def test_planned_files_have_their_owner_group_and_mode(ensemble: list[Member]) -> None:
    for member in ensemble:
        assert_planned_files(member.name, member.host,
                             (*member.plan.files, *member.plan.secret_files))


def test_services_run_as_zookeeper_user(ensemble: list[Member]) -> None:
    for member in ensemble:
        service = member.host.service("zookeeper")
        assert service.is_running, f"{member.name}: zookeeper is not running"
        assert service.is_enabled, f"{member.name}: zookeeper is not enabled"
        pid = member.host.check_output("systemctl show --property=MainPID --value zookeeper")
        user = member.host.check_output("ps -o user= -p %s", pid)
        assert user == member.expected["user"], f"{member.name}: runs as {user}"


def test_ruok_answers_imok(ensemble: list[Member]) -> None:
    for member in ensemble:
        assert member.four_letter_word("ruok") == "imok", member.name


def test_exactly_one_leader_rest_followers(ensemble: list[Member]) -> None:
    modes = {m.name: m.mode() for m in ensemble}
    assert all(mode in SERVING for mode in modes.values()), modes
    leaders = list(modes.values()).count("leader")
    # A --limit to part of the ensemble may leave the leader out, never hold two.
    whole = len(ensemble) == len(ensemble[0].expected["servers"])
    assert (leaders == 1 if whole else leaders <= 1), modes


def test_myid_matches_its_server_line(ensemble: list[Member]) -> None:
    configs = {}
    for member in ensemble:
        exp = member.expected
        myid = member.host.file(f"{exp['data_dir']}/myid").content_string.strip()
        assert myid == str(exp["id"]), f"{member.name}: myid {myid}, inventory {exp['id']}"
        lines = member.host.file(f"{exp['conf_dir']}/zoo.cfg").content_string.splitlines()
        servers = [line for line in lines if line.startswith("server.")]
        assert servers == exp["servers"], f"{member.name}: {servers}"
        own = [s for s in servers if s.startswith(f"server.{myid}=")]
        address = model_address(exp, member.name)
        assert len(own) == 1 and own[0].split("=")[1].split(":")[0] == address, (
            f"{member.name}: myid {myid} but its server line is {own}")
        configs[member.name] = servers
    assert len({tuple(s) for s in configs.values()}) == 1, f"server lines differ: {configs}"


def model_address(expected: Mapping[str, Any], name: str) -> str:
    own = next(s for s in expected["servers"] if s.startswith(f"server.{expected['id']}="))
    return str(own.split("=")[1].split(":")[0])


def test_znode_written_through_one_member_reads_back_through_every_member(
        ensemble: list[Member]) -> None:
    path = f"/kafkaform-verify-{uuid.uuid4().hex[:12]}"
    data = f"written-through-{ensemble[0].name}"
    created = ensemble[0].client("create", path, data)
    assert created.rc == 0 and f"Created {path}" in created.stdout, created.stdout
    try:
        for member in ensemble:
            got = member.client("get", path)
            assert data in got.stdout.splitlines(), f"{member.name}: {got.stdout}"
    finally:
        ensemble[0].client("delete", path)


def test_anonymous_session_is_refused(ensemble: list[Member]) -> None:
    """SE-07: a session that has not logged in cannot create a znode (nor do anything else)."""
    path = f"/kafkaform-verify-anonymous-{uuid.uuid4().hex[:12]}"
    for member in ensemble:
        if not member.expected["sasl"]["enforced"]:
            pytest.skip(f"{member.name}: zookeeper_sasl_enforced is false")
        refused = member.client("create", path, "anonymous", login=False)
        assert refused.rc != 0, f"{member.name}: an anonymous session created {path}"
        assert "Session closed because client failed to authenticate" in refused.stdout, (
            f"{member.name}: {refused.stdout}")
        assert "Node does not exist" in member.client("stat", path).stdout, (
            f"{member.name}: {path} exists after an anonymous create")


def test_members_require_each_others_login(ensemble: list[Member]) -> None:
    """SE-08, SE-07: zoo.cfg requires SASL logins both ways between members and of every client
    session (the live JVM runs it, with the JAAS file: test_live_jvm_*); a serving quorum shows
    the members' logins succeed."""
    for member in ensemble:
        exp = member.expected
        if not exp["sasl"]["enforced"]:
            pytest.skip(f"{member.name}: zookeeper_sasl_enforced is false")
        conf = member.host.file(f"{exp['conf_dir']}/zoo.cfg").content_string.splitlines()
        for line in ("quorum.auth.enableSasl=true", "quorum.auth.learnerRequireSasl=true",
                     "quorum.auth.serverRequireSasl=true", "enforce.auth.enabled=true",
                     "enforce.auth.schemes=sasl"):
            assert line in conf, f"{member.name}: zoo.cfg lacks {line}"


def test_jaas_files_readable_by_their_readers_only(ensemble: list[Member]) -> None:
    """SE-06: the members' logins only the service reads, the operators' only root."""
    for member in ensemble:
        exp = member.expected
        wanted = {exp["sasl"]["jaas_file"]: ("root", exp["group"], 0o640),
                  exp["sasl"]["client_jaas_file"]: ("root", "root", 0o600)}
        found = stat_paths(member.host, list(wanted))
        for path, (user, group, mode) in wanted.items():
            item = found.get(path)
            assert item is not None and item.is_file, f"{member.name}: {path} missing"
            assert (item.user, item.group, item.mode) == (user, group, mode), (
                f"{member.name}: {path} is {item.owned()}")


def test_config_files_readable_by_the_service_user_only(ensemble: list[Member]) -> None:
    for member in ensemble:
        exp = member.expected
        paths = [f"{exp['conf_dir']}/zoo.cfg", f"{exp['conf_dir']}/logback.xml",
                 exp["sasl"]["jaas_file"], f"{exp['data_dir']}/myid"]
        found = stat_paths(member.host, paths)
        for path in paths:
            item = found.get(path)
            assert item is not None and item.is_file, f"{member.name}: {path} missing"
            assert item.mode & 0o007 == 0, f"{member.name}: {path} is {oct(item.mode)}"
            assert exp["user"] in (item.user, ) or item.group == exp["group"], (
                f"{member.name}: {path} is {item.user}:{item.group}")
        unread = unreadable_by(member.host, exp["user"], paths)
        assert not unread, f"{member.name}: {exp['user']} cannot read {', '.join(unread)}"


def test_four_letter_words_limited_to_monitoring(ensemble: list[Member]) -> None:
    for member in ensemble:
        allowed = member.expected["four_letter_words"].split(",")
        assert "Mode:" in member.four_letter_word("srvr")
        if "conf" in allowed:
            assert f"clientPort={member.expected['client_port']}" in member.four_letter_word("conf")
        refused = member.four_letter_word("dump")
        assert "not in the whitelist" in refused, f"{member.name}: dump answered {refused!r}"


def test_purge_is_scheduled(ensemble: list[Member]) -> None:
    for member in ensemble:
        exp = member.expected
        if exp["purge_timer"]["enabled"]:
            timers = member.host.check_output("systemctl list-timers --all --no-legend")
            assert "zookeeper-purge.timer" in timers, f"{member.name}: {timers}"
            assert member.host.service("zookeeper-purge.timer").is_enabled
        else:
            conf = member.host.file(f"{exp['conf_dir']}/zoo.cfg").content_string
            assert f"autopurge.purgeInterval={exp['autopurge']['purge_interval_hours']}" in conf
            assert exp["autopurge"]["purge_interval_hours"] > 0


def test_live_jvm_has_the_configured_heap_gc_and_limits(ensemble: list[Member]) -> None:
    for member in ensemble:
        pid = member.host.check_output("systemctl show --property=MainPID --value zookeeper")
        assert_live_jvm(member.name, member.host, pid, member.expected)


#: The probe every member carries (roles/zookeeper/files/zookeeper-4lw).
PROBE = FOUR_LETTER_WORD_SCRIPT


def test_client_ports_speak_mutual_tls_and_the_plain_one_stays_local(
        ensemble: list[Member]) -> None:
    """SE-18: from a member, every member's secure client port answers a client holding a
    certificate of the cluster CA and no one without; once the ensemble requires TLS, its plain
    client port does not answer on the network (loopback only, for its own probe)."""
    asking = ensemble[0]
    own_tls = asking.expected["tls"]["dir"]
    for member in ensemble:
        exp = member.expected
        secure = f"{exp['address']}:{exp['secure_client_port']}"
        with_cert = asking.host.run("%s --tls %s srvr %s", PROBE, own_tls, secure)
        assert "Mode: " in with_cert.stdout, f"{member.name} {secure}: {with_cert.stderr}"
        without = asking.host.run("%s srvr %s", PROBE, secure)
        assert "Mode: " not in without.stdout, f"{member.name} {secure} answers without TLS"
        if exp["tls_step"] == "required":
            plain = f"{exp['address']}:{exp['client_port']}"
            reached = asking.host.run("%s srvr %s", PROBE, plain)
            assert reached.rc != 0 and "Mode: " not in reached.stdout, (
                f"{member.name}: the plain client port {plain} answers from {asking.name}")
