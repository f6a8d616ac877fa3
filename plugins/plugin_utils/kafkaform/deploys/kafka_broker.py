"""``roles/kafka_broker`` as a pyinfra deploy: the same security gate, install, files, TLS material
and secrets, rolling restart (every broker registered and nothing under-replicated before each,
the active controller last), declared topics, users and ACLs through the same admin helper; and
``roles/kafka_controller``, the same node as a KRaft controller (storage formatted once, the
controllers rolled on the quorum's gate, the leader last).

    pyinfra @kafkaform/inventory/lab kafkaform.deploys.kafka_broker.kafka_broker
    pyinfra @kafkaform/inventory/kraft kafkaform.deploys.kafka_broker.kafka_controller
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.api.host import Host
from pyinfra.context import host
from pyinfra.operations import files, python, server, systemd

from .. import security_steps
from ..acls import plan as acls_plan
from ..catalog import release_key
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.kafka_broker import ADMIN_SCRIPT, kafka_broker_context
from ..defaults import setting
from ..model import KAFKA_BROKER, KAFKA_CONTROLLER
from ..plans import kafka_broker as plans
from ..plans.kafka_broker import KafkaBrokerFiles, KafkaBrokerInstall, host_read, parse_host
from ..topics import parse_describe
from ..topics import plan as topics_plan
from . import artifact, tls
from .base import (
    Roll,
    cluster,
    create_account,
    install_packages,
    install_planned,
    install_secret_files,
    make_directories,
    member_contexts,
    play_hosts,
    put_content,
    role_settings,
    roll_restarts,
    run_on,
    until_ok,
    will_change,
)
from .facts import CommandOutput, ServiceStale

ROLE = "kafka_broker"
#: The controllers' role: it runs this role's tasks with its own defaults beside them.
CONTROLLER_ROLE = "kafka_controller"
#: Marks that Kafka's ZkSecurityMigrator ran at the tls_replication step of securing in place.
ZNODES_SECURED_MARKER = "/var/lib/kafkaform/kafka-znodes-secured"


def inputs(of: Host | None = None) -> dict[str, Any]:
    """``kafka_broker_inputs`` of roles/kafka_broker/vars/main.yml, for the host ``of``."""
    target = host if of is None else of
    return {**role_settings(CONTROLLER_ROLE, of=target),
            **role_settings(ROLE, "os_tuning_nofile_limit", "kafkaform_apache_mirror_url",
                            of=target)}


def install_plan(of: Host | None = None) -> KafkaBrokerInstall:
    """``kafka_broker_install`` of roles/kafka_broker/tasks/install.yml: what the host read of
    ``of`` decides."""
    target = host if of is None else of
    given = inputs(target)
    read = target.get_fact(CommandOutput, argv=tuple(host_read(given)))
    return plans.install_plan(given, parse_host(read))


def settings(of: Host | None = None, planned: KafkaBrokerInstall | None = None
             ) -> dict[str, Any]:
    """``kafka_broker_settings`` of roles/kafka_broker/vars/main.yml, for the host ``of``: its
    inputs, with the Java home and the cores its install plan (``planned``, else read) found."""
    planned = planned or install_plan(of)
    return {**inputs(of), "kafka_broker_java_home": planned.java_home,
            "kafka_broker_cores": planned.cores}


def context(of: Host | None = None) -> dict[str, Any]:
    """The ``kafka_broker`` dict every template of templates/kafka_broker/ reads."""
    return kafka_broker_context(cluster(), (host if of is None else of).name, settings(of))


def admin(kb: dict[str, Any]) -> list[str]:
    """The admin helper's command line with this cluster's bootstrap servers."""
    return list(kb["admin_argv"])


def _security_gate(kb: dict[str, Any]) -> None:
    """roles/kafka_broker/tasks/security_gate.yml. SE-01, SE-10"""
    path = kb["java"]["config"]
    running = host.get_fact(CommandOutput, argv=("sh", "-c", f"cat {shlex.quote(path)} || true"))
    if running:
        problem = security_steps.step_problem(
            host.name, path, security_steps.broker_step(running), kb["security_step"])
        if problem:
            raise DeployError(problem)


def _install(planned: KafkaBrokerInstall, s: dict[str, Any]) -> Any:
    """roles/kafka_broker/tasks/install.yml; returns the admin helper's operation."""
    if planned.install_packages:
        install_packages("Install the Java runtime and openssl", planned.packages,
                         cache_time=86400)
    if planned.create_account:
        create_account(planned.account, "without a login shell")
    artifact.install("kafka", str(s["kafka_broker_version"]), str(s["kafka_broker_archive_url"]))
    client = planned.admin_client
    make_directories(planned.admin_directories)
    helper = install_planned([f.as_task_item() for f in planned.admin_files], {})
    if planned.fetch_admin_client:
        artifact.download(client["url"], f"{client['url']}.sha512", client["dest"], 60)
    return helper[ADMIN_SCRIPT]


def _configure(kb: dict[str, Any], planned: KafkaBrokerFiles,
               fetch_agent: bool) -> tuple[list[Any], Any]:
    """roles/kafka_broker/tasks/configure.yml; returns the operations of the files the node
    reads at start and the unit's."""
    make_directories(kb["directories"])
    written = install_planned([f.as_task_item() for f in planned.files], {ROLE: kb})
    metrics = kb["metrics"]
    if metrics["enabled"] and fetch_agent:
        artifact.download(str(metrics["url"]), f"{metrics['url']}.sha512", str(metrics["jar"]),
                          60)
    unit = written[f"{SYSTEMD_UNIT_DIR}/kafka.service"]
    return [written[f.dest] for f in planned.files if f.restarts], unit


def _security(kb: dict[str, Any], s: dict[str, Any],
              planned: KafkaBrokerFiles) -> tuple[list[Any], bool]:
    """roles/kafka_broker/tasks/security.yml; returns the operations of the files the broker
    reads at start, and whether its certificate or trust bundle may change in this run."""
    group = kb["group"]
    files.directory(name="Create the TLS directory", path=kb["tls"]["dir"], user="root",
                    group=group, mode="750")
    tls_changes = tls.certificate(list(kb["tls_names"]), kb["principal"], group,
                                  trust=kb["tls"]["trust"], keystore=kb["tls"]["keystore"])
    written = install_secret_files(planned, ROLE, {ROLE: kb}, s)
    return [written[f.dest] for f in planned.secret_files if f.restarts], tls_changes


def _converge_declared(kb: dict[str, Any], topics: list[Any], users: list[Any],
                       acls: list[Any], iterations: int) -> None:
    """roles/kafka_broker/tasks/topics.yml and access.yml, at execution time, once."""
    tool = admin(kb)
    if topics:
        described = run_on(host.name, [*tool, "describe"])
        if not described.ok:
            raise DeployError(f"{host.name}: describing the topics failed: {described.said}")
        plan = topics_plan(topics, parse_describe(described.stdout))
        if plan["refusals"]:
            raise DeployError("; ".join(r["message"] for r in plan["refusals"]) + " [TR-05]")
        for action in plan["actions"]:
            ran = run_on(host.name, [*tool, "apply", json.dumps(action)])
            if not ran.ok:
                raise DeployError(f"{host.name}: {action['message']}: {ran.said}")
    if users:
        # Passwords go through stdin only, never a command line or a log. SE-06
        ok, output = host.run_shell_command(
            shlex.join([*tool, "users"]),
            _stdin=json.dumps({"iterations": iterations, "users": users}))
        if not ok:
            raise DeployError(f"{host.name}: converging the SCRAM users failed: "
                              f"{output.stderr}")
    if acls:
        listed = run_on(host.name, [*tool, "acl-list"])
        if not listed.ok:
            raise DeployError(f"{host.name}: listing the ACLs failed: {listed.said}")
        for change in acls_plan(acls, listed.stdout):
            ran = run_on(host.name, [*tool, "acl-apply", json.dumps(change)])
            if not ran.ok:
                raise DeployError(f"{host.name}: {change['message']}: {ran.said}")


def _declared_changes(kb: dict[str, Any], s: dict[str, Any]) -> bool:
    """Whether the declared topics, users or ACLs differ from the cluster's, asked when the deploy
    is planned; True when the cluster cannot answer yet (a fresh one), so the run converges them
    once the brokers are up."""
    tool = admin(kb)
    topics, users, acls = (list(s[f"kafka_broker_{kind}"]) for kind in ("topics", "users", "acls"))
    try:
        if topics:
            plan = topics_plan(topics, parse_describe(
                host.get_fact(CommandOutput, argv=(*tool, "describe"))))
            if plan["actions"] or plan["refusals"]:
                return True
        if acls and acls_plan(acls, host.get_fact(CommandOutput, argv=(*tool, "acl-list"))):
            return True
        if users:
            wanted = {"iterations": s["kafka_broker_scram_iterations"], "users": users}
            answer = host.get_fact(CommandOutput, argv=(*tool, "--dry-run", "users"),
                                   _stdin=json.dumps(wanted))
            return bool(json.loads(answer)["changed"])
    except (ValueError, KeyError, TypeError):
        return True
    return False


def _format_storage(kb: dict[str, Any], tool: list[str], changes: list[Any]) -> None:
    """roles/kafka_broker/tasks/storage.yml: in KRaft mode, the log directories without
    meta.properties formatted with the cluster id; a directory formatted for another cluster
    stops the run (the helper names it). Asked of the host unless the helper or the files it reads
    change in this run. KR-07"""
    if kb["metadata_mode"] != "kraft":
        return
    argv = [*tool, "storage", f"--cluster-id={kb['cluster_id']}",
            "--owner", f"{kb['user']}:{kb['group']}"]
    if not will_change(*changes):
        # A refusal prints nothing on stdout: the run's own format then says why.
        answer = host.get_fact(CommandOutput, argv=(
            "sh", "-c", f"{shlex.join([*argv, '--dry-run'])} 2>/dev/null || true"))
        try:
            blank = json.loads(answer)["formatted"]
        except (ValueError, KeyError, TypeError):
            blank = True
        if not blank:
            return
    server.shell(name="Format the log directories that are not yet, with the cluster id [KR-07]",
                 commands=[shlex.join(argv)])


def _kafka_node(group: str) -> None:
    """One Kafka node of ``group``: a broker, or in KRaft mode a controller."""
    planned = install_plan()
    s = settings(planned=planned)
    model = cluster()
    kb = kafka_broker_context(model, host.name, s)
    if str(model.get("kraft_migration") or "") not in ("", "finalized"):
        # The migration's phases, soak point and rollback are the playbooks' alone.
        raise DeployError(f"{host.name}: the cluster is migrating from ZooKeeper to KRaft "
                          f"(kafka_kraft_migration: {model['kraft_migration']}), which only "
                          "the playbooks run: ansible-playbook kafkaform.platform.kraft_migration "
                          "(KR-09)")
    controller = kb["process_roles"] == "controller"
    _security_gate(kb)
    _refuse_older_release(kb, model, planned.release_before)
    helper = _install(planned, s)
    planned_files = plans.files_plan(kb)
    restart_ops, unit = _configure(kb, planned_files, planned.fetch_agent)
    secret_ops, tls_changes = _security(kb, s, planned_files)
    if will_change(unit):
        systemd.daemon_reload(name="Reload systemd for the Kafka unit")
    tool = admin(kb)
    _format_storage(kb, tool, [helper, *restart_ops])
    # A controller's unit fails a start whose registration with the quorum Kafka dropped, so
    # that a new process registers (KR-11): one more start.
    started = systemd.service(name="Enable and start Kafka", service="kafka", running=True,
                              enabled=True, _retries=1, _retry_delay=float(kb["health_poll_s"]))
    # A combined node (KR-04) is one of the brokers' play's members, not the controllers'.
    members = [h for h in play_hosts(group)
               if group == KAFKA_BROKER or KAFKA_BROKER not in h.groups]
    contexts = member_contexts(ROLE, members, kb, context)
    # Asked of the host, not remembered by a run: a run stopped between writing a file and the
    # restart left the node stale. OP-03
    stale_now = host.get_fact(ServiceStale, service="kafka",
                              paths=tuple(kb["restart_files"]))["stale"]
    # A node that talks to the KRaft quorum restarts for new TLS material (it is among the
    # files it reads at start); the others reload it. SE-02
    tls_restarts = kb["tls"]["keystore"] in kb["restart_files"]
    might_restart = (stale_now or will_change(*restart_ops, *secret_ops)
                     or (tls_changes and tls_restarts))
    health = [*tool, *kb["health_args"]]  # each check waits on its own up to health_wait_s
    timeout_s = float(s["kafka_broker_restart_timeout_s"])
    roll_restarts(Roll(
        service="kafka", rule="KR-08" if controller else "OP-02", members=tuple(contexts),
        restart_files={m: c["restart_files"] for m, c in contexts.items()},
        gate_argv=health, health_argv=health, timeout_s=timeout_s,
        delay_s=float(kb["health_poll_s"]),
        last_key="controller", member_ids={m: str(c["id"]) for m, c in contexts.items()},
        # Controllers lead no partition: nothing to elect after their roll.
        after_argv=[] if controller else [*tool, "elect"]), might_be_stale=might_restart)
    if will_change(started) or might_restart:
        python.call(name="Wait until every node is registered and healthy",
                    function=_wait_healthy, argv=[*tool, *kb["verify_args"]], timeout_s=timeout_s,
                    poll_s=float(kb["health_poll_s"]), _run_once=True)
    # A broker that starts or restarts in this run reads its new certificate then. SE-02
    if tls_changes and not (tls_restarts or will_change(started) or might_restart):
        server.shell(name="Load the new certificate and trust bundle into the running broker",
                     commands=[shlex.join([*tool, "reload-tls"])])
    if controller:
        return  # topics, users and ACLs are the brokers' play's
    # The role's run_once steps run on the first broker of the play, as Ansible's do: the admin
    # helper keeps what it set (the SCRAM users' password hashes) on the broker that ran it.
    first = members[0].name == host.name
    _secure_znodes(kb, tool, first)
    if first and (will_change(helper) or _declared_changes(kb, s)):
        python.call(name="Converge the declared topics, users and ACLs",
                    function=_converge_declared, kb=kb, topics=list(s["kafka_broker_topics"]),
                    users=list(s["kafka_broker_users"]), acls=list(s["kafka_broker_acls"]),
                    iterations=int(s["kafka_broker_scram_iterations"]))
    if first and _raises_metadata_version(kb, s, model, restarting=might_restart):
        python.call(name="Raise metadata.version to the release every Kafka node runs [KR-10]",
                    function=_raise_metadata_version, argv=[*tool, "features"])


def _refuse_older_release(kb: dict[str, Any], model: dict[str, Any], before: str) -> None:
    """roles/kafka_broker/tasks/install.yml: a KRaft node never goes to a release older than the
    cluster's metadata.version (it would not start); asked, before any operation, only of a node
    this run takes to an older release than its release file names. KR-10"""
    if kb["metadata_mode"] != "kraft" or str(model.get("kraft_migration") or "") not in (
            "", "finalized"):
        return
    if before and release_key(before) > release_key(kb["release"]):
        ran = run_on(host.name, [*admin(kb), "--dry-run", "features", "--release", kb["release"]])
        if not ran.ok:
            raise DeployError(f"{host.name}: {ran.said} [KR-10]")


def _raises_metadata_version(kb: dict[str, Any], s: dict[str, Any], model: dict[str, Any],
                             restarting: bool) -> bool:
    """roles/kafka_broker/tasks/features.yml: whether this run raises metadata.version (KR-10).
    Only in KRaft mode, with every controller and broker of the inventory in this run on this
    node's release (their rolls, earlier in the run, stop it if one does not come back on it);
    then when the release changes in this run, or the cluster's level is already behind it."""
    if kb["metadata_mode"] != "kraft" or not s["kafka_broker_upgrade_metadata_version"]:
        return False
    nodes = [*play_hosts(KAFKA_CONTROLLER), *play_hosts(KAFKA_BROKER)]
    named = {c["host"] for c in model["controllers"]} | {b["host"] for b in model["brokers"]}
    if {n.name for n in nodes} != named or any(
            str(setting(settings(n), "kafka_broker_version")) != kb["release"]
            for n in nodes):
        return False
    if restarting:
        return True
    try:
        answer = host.get_fact(CommandOutput, argv=(*admin(kb), "--dry-run", "features"))
        return bool(json.loads(answer)["raised"])
    except (ValueError, KeyError, TypeError):
        return True  # the cluster cannot answer yet: ask it again once the nodes are up


def _raise_metadata_version(argv: list[str]) -> None:
    ran = run_on(host.name, argv)
    if not ran.ok:
        raise DeployError(f"{host.name}: raising metadata.version failed: {ran.said} [KR-10]")


@deploy("kafka_controller")
def kafka_controller() -> None:
    """The kafka_controller role on the hosts of the kafka_controller group
    (playbooks/kafka_controller.yml): KRaft controllers, before the brokers; a combined node is
    the brokers' deploy's."""
    if KAFKA_CONTROLLER in host.groups and KAFKA_BROKER not in host.groups:
        _kafka_node(KAFKA_CONTROLLER)


@deploy("kafka_broker")
def kafka_broker() -> None:
    """The kafka_broker role on the hosts of the kafka_broker group (playbooks/kafka_broker.yml)."""
    if KAFKA_BROKER in host.groups:
        _kafka_node(KAFKA_BROKER)


def _wait_healthy(argv: list[str], timeout_s: float, poll_s: float) -> None:
    ran = until_ok(host.name, argv, timeout_s, poll_s)
    if not ran.ok:
        raise DeployError(f"{host.name}: the brokers are not all registered and in sync after "
                          f"{timeout_s:g} s: {ran.said} (MO-02, MO-03, MO-04)")


def _secure_znodes(kb: dict[str, Any], tool: list[str], first: bool) -> None:
    """roles/kafka_broker/tasks/secure_znodes.yml, its once-per-cluster steps on the first broker
    of the play. SE-07, SE-10"""
    if kb["secure_existing_znodes"] and first:
        done = host.get_fact(CommandOutput, argv=(
            "sh", "-c", f"test -e {ZNODES_SECURED_MARKER} && echo yes || true"))
        if not done:
            server.shell(name="Put ACLs on the znodes the brokers wrote before they logged in",
                         commands=[shlex.join([*tool, "zk-secure-acls"])])
        put_content("ZkSecurityMigrator --zookeeper.acl=secure ran at the tls_replication step\n",
                    ZNODES_SECURED_MARKER, mode="600")
    elif kb["security_step"] == "plaintext_replication":
        files.file(name="Forget the znode ACLs while brokers write znodes without them",
                   path=ZNODES_SECURED_MARKER, present=False)
