"""``roles/kafka_broker`` as a pyinfra deploy: the node's plan (kafkaform.plans.kafka_broker),
carried out as the role carries it out: the same security gate, install, files, TLS material
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

from ..acls import plan as acls_plan
from ..contexts import SYSTEMD_UNIT_DIR
from ..contexts.kafka_broker import ADMIN_SCRIPT
from ..model import KAFKA_BROKER, KAFKA_CONTROLLER
from ..plans.kafka_broker import (
    KafkaBrokerHost,
    KafkaBrokerPlan,
    host_read,
    kafka_broker_plan,
    parse_host,
)
from ..plans.running_cluster import running_cluster
from ..topics import parse_describe
from ..topics import plan as topics_plan
from . import artifact, tls
from .base import (
    Planned,
    Roll,
    Unchanged,
    cluster,
    create_account,
    group_hosts,
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
    wait_until_ok,
    will_change,
)
from .facts import AdminAnswer, CommandOutput, ServiceStale

ROLE = "kafka_broker"
#: The controllers' role: it runs this role's tasks with its own defaults beside them.
CONTROLLER_ROLE = "kafka_controller"


def inputs(of: Host | None = None) -> dict[str, Any]:
    """``kafka_broker_inputs`` of roles/kafka_broker/vars/main.yml, for the host ``of``."""
    target = host if of is None else of
    return {**role_settings(CONTROLLER_ROLE, of=target),
            **role_settings(ROLE, "os_tuning_nofile_limit", "kafkaform_apache_mirror_url",
                            of=target)}


def plan(of: Host | None = None) -> KafkaBrokerPlan:
    """``kafka_broker_plan`` of roles/kafka_broker/tasks/read.yml: the plan of the node ``of``
    (the current host by default), from its host read."""
    target = host if of is None else of
    return _planned(target, inputs(target))


def _read(model: dict[str, Any], target: Host, given: dict[str, Any]) -> KafkaBrokerHost:
    """The host read of ``target`` (a fact: asked once a run, whoever asks)."""
    return parse_host(target.get_fact(CommandOutput,
                                      argv=tuple(host_read(model, target.name, given))))


def _with_running_cluster(model: dict[str, Any]) -> dict[str, Any]:
    """The model with what the Kafka nodes hold where the inventory names nothing, the cluster
    id and the release line, as roles/kafka_broker/tasks/read.yml takes them (KR-07, KF-05)."""
    nodes = {h.name: h for h in (*play_hosts(KAFKA_CONTROLLER), *play_hosts(KAFKA_BROKER))}
    # Every Kafka node's inputs, --limit or not: KR-12 weighs the brokers against every controller.
    given = {h.name: inputs(h)
             for h in (*group_hosts(KAFKA_CONTROLLER), *group_hosts(KAFKA_BROKER))}
    running = running_cluster(model, {name: _read(model, node, given[name])
                                      for name, node in nodes.items()},
                              {name: str(found.get("kafka_broker_version") or "")
                               for name, found in given.items()})
    if running.problem:
        raise DeployError(running.problem)
    return running.model(model)


def _planned(target: Host, given: dict[str, Any]) -> KafkaBrokerPlan:
    """The plan of ``target`` from its inputs ``given``, already assembled (its host read is
    the one the running cluster was taken from)."""
    read = cluster()
    return kafka_broker_plan(_with_running_cluster(read), target.name, given,
                             _read(read, target, given))


def context(of: Host | None = None) -> dict[str, Any]:
    """The ``kafka_broker`` dict every template of roles/kafka_broker/templates reads."""
    return plan(of).context


def _install(p: KafkaBrokerPlan) -> Any:
    """roles/kafka_broker/tasks/install.yml; returns the admin helper's operation."""
    planned = p.install
    if planned.install_packages:
        install_packages("Install the Java runtime and openssl", planned.packages,
                         cache_time=86400)
    if planned.create_account:
        create_account(planned.account, "without a login shell")
    client = planned.admin_client
    helper = install_admin_helper(planned)
    if planned.fetch_admin_client:
        artifact.download(client["url"], f"{client['url']}.sha512", client["dest"], 60)
    if p.older_release_argv:  # KR-10
        ran = run_on(host.name, p.older_release_argv)
        if not ran.ok:
            raise DeployError(f"{host.name}: {ran.said} [KR-10]")
    artifact.install(planned.release, planned.install_release)
    return helper[ADMIN_SCRIPT]


def install_admin_helper(planned: Any) -> dict[str, Any]:
    """The admin helper as this collection ships it (roles/kafka_broker/tasks/admin_helper.yml);
    returns the operations of its files by path."""
    make_directories(planned.admin_directories)
    return install_planned([f.as_task_item() for f in planned.admin_files], {})


def _configure(p: KafkaBrokerPlan) -> tuple[list[Any], Any]:
    """roles/kafka_broker/tasks/configure.yml; returns the operations of the files the node
    reads at start and the unit's."""
    kb = p.context
    make_directories(kb["directories"])
    written = install_planned([f.as_task_item() for f in p.files], {ROLE: kb})
    metrics = kb["metrics"]
    if p.install.fetch_agent:
        artifact.download(str(metrics["url"]), f"{metrics['url']}.sha512", str(metrics["jar"]),
                          60)
    unit = written[f"{SYSTEMD_UNIT_DIR}/kafka.service"]
    return [written[f.dest] for f in p.files if f.restarts], unit


def _security(p: KafkaBrokerPlan, s: dict[str, Any]) -> tuple[list[Any], bool]:
    """roles/kafka_broker/tasks/security.yml; returns the operations of the files the broker
    reads at start, and whether its certificate or trust bundle may change in this run."""
    kb = p.context
    group = kb["group"]
    files.directory(name="Create the TLS directory", path=kb["tls"]["dir"], user="root",
                    group=group, mode="750")
    tls_changes = tls.certificate(list(kb["tls_names"]), kb["principal"], group,
                                  trust=kb["tls"]["trust"], keystore=kb["tls"]["keystore"])
    written = install_secret_files(p, ROLE, {ROLE: kb}, s)
    return [written[f.dest] for f in p.secret_files if f.restarts], tls_changes


def _declared(p: KafkaBrokerPlan, s: dict[str, Any]) -> dict[str, Any]:
    """The declared topics, users and ACLs the plan converges."""
    return {"topics": list(s["kafka_broker_topics"]) if p.converge_topics else [],
            "users": list(s["kafka_broker_users"]) if p.converge_users else [],
            "acls": list(s["kafka_broker_acls"]) if p.converge_acls else [],
            "iterations": int(s["kafka_broker_scram_iterations"])}


def _wanted(declared: dict[str, Any]) -> str:
    """The admin helper's ``state`` question for ``declared`` (roles/kafka_broker's
    declared_state.yml): the passwords go on stdin only, never a command line or a log. SE-06"""
    users = declared["users"]
    return json.dumps({"topics": bool(declared["topics"]), "acls": bool(declared["acls"]),
                       "users": {"iterations": declared["iterations"], "users": users}
                       if users else None})


def _changes(declared: dict[str, Any], state: str) -> tuple[dict[str, Any], list[Any], bool]:
    """The topic plan, the ACL changes and whether a SCRAM user changes, from the cluster's
    ``state`` answer."""
    answer = json.loads(state)
    topics = topics_plan(declared["topics"], parse_describe(state)) if declared["topics"] \
        else {"actions": [], "refusals": []}
    acls = acls_plan(declared["acls"], state) if declared["acls"] else []
    return topics, acls, bool(declared["users"]) and bool(answer.get("users_changed"))


def _converge_declared(tool: list[str], declared: dict[str, Any]) -> None:
    """roles/kafka_broker/tasks/declared_state.yml, topics.yml and access.yml, at execution
    time, once: one read of the cluster, then one helper run for each kind of change."""
    read = run_on(host.name, [*tool, "state"], stdin=_wanted(declared))
    if not read.ok:
        raise DeployError(f"{host.name}: reading the topics, ACLs and users failed: "
                          f"{read.stderr}")
    topics, acls, users_change = _changes(declared, read.stdout)
    if topics["refusals"]:
        raise DeployError("; ".join(r["message"] for r in topics["refusals"]) + " [TR-05]")
    _apply_all(tool, "apply", topics["actions"], "the topic changes")
    if users_change:
        ran = run_on(host.name, [*tool, "users"], stdin=json.dumps(
            {"iterations": declared["iterations"], "users": declared["users"]}))
        if not ran.ok:
            raise DeployError(f"{host.name}: converging the SCRAM users failed: {ran.stderr}")
    _apply_all(tool, "acl-apply", acls, "the ACL changes")


def _apply_all(tool: list[str], command: str, actions: list[Any], what: str) -> None:
    """A plan's actions in one helper run, in order, the list on stdin (as the role's topics.yml
    and access.yml give it); the helper names the first that fails, after the ones it applied."""
    if not actions:
        return
    ran = run_on(host.name, [*tool, command, "-"], stdin=json.dumps(actions))
    if not ran.ok:
        raise DeployError(f"{host.name}: applying {what} failed: {ran.said}")


def _declared_changes(tool: list[str], declared: dict[str, Any]) -> bool:
    """Whether the declared topics, users or ACLs differ from the cluster's, asked when the deploy
    is planned; True when the cluster cannot answer yet (a fresh one), so the run converges them
    once the brokers are up."""
    try:
        topics, acls, users_change = _changes(declared, host.get_fact(
            AdminAnswer, argv=(*tool, "state"), _stdin=_wanted(declared)))
    except (ValueError, KeyError, TypeError):
        return True
    return bool(topics["actions"] or topics["refusals"] or acls or users_change)


def _format_storage(p: KafkaBrokerPlan, changes: list[Any]) -> None:
    """roles/kafka_broker/tasks/storage.yml: in KRaft mode, the log directories without
    meta.properties formatted with the cluster id; a directory formatted for another cluster
    stops the run (the helper names it). Asked of the host unless the helper or the files it reads
    change in this run. KR-07"""
    if not p.format_storage_argv:
        return
    if not will_change(*changes):
        # A refusal prints nothing on stdout: the run's own format then says why.
        answer = host.get_fact(AdminAnswer, argv=(*p.format_storage_argv, "--dry-run"))
        try:
            blank = json.loads(answer)["formatted"]
        except (ValueError, KeyError, TypeError):
            blank = True
        if not blank:
            return
    server.shell(name="Format the log directories that are not yet, with the cluster id [KR-07]",
                 commands=[shlex.join(p.format_storage_argv)])


def _join_quorum(p: KafkaBrokerPlan, changes: list[Any]) -> None:
    """roles/kafka_broker/tasks/service.yml's join: a dynamic quorum's controller that is not a
    voter yet is added once it has caught up, and the voters of its id on another directory
    removed, one controller at a time. Asked of the host unless the node starts or its helper
    changes in this run. KR-15"""
    if not p.quorum.join_argv:
        return
    if not will_change(*changes):
        try:
            found = json.loads(host.get_fact(AdminAnswer,
                                             argv=(*p.quorum.join_argv, "--dry-run")))
            if not found["joined"] and not found["removed"]:
                return
        except (ValueError, KeyError, TypeError):
            pass  # the run's own call says why
    server.shell(name="Add the controller to the quorum's voters once it has caught up [KR-15]",
                 commands=[shlex.join(p.quorum.join_argv)], _serial=True)


def _roll(p: KafkaBrokerPlan, members: list[Host], might_restart: bool) -> None:
    """roles/kafka_broker/tasks/restart.yml, through the one rolling restart."""
    contexts = member_contexts(ROLE, members, p.context, context)
    roll = p.roll
    roll_restarts(Roll(
        service="kafka", rule=roll.rule, members=tuple(contexts),
        restart_files={m: c["restart_files"] for m, c in contexts.items()},
        gate_argv=roll.health_argv, health_argv=roll.health_argv, timeout_s=roll.timeout_s,
        delay_s=roll.delay_s, last_key=roll.last_key,
        member_ids={m: str(i) for m, i in roll.member_ids.items() if m in contexts},
        after_argv=roll.after_argv, parallelism=roll.parallelism, batch_argv=roll.batch_argv,
        racks={m: r for m, r in roll.racks.items() if m in contexts}),
        might_be_stale=might_restart)


def _kafka_node(group: str) -> None:
    """One Kafka node of ``group``: a broker, or in KRaft mode a controller."""
    # The role's inputs, assembled once: the plan's, the release's and the declared entries'.
    s = inputs()
    p = _planned(host, s)
    model = cluster()
    kb = p.context
    if str(model.get("kraft_migration") or "") not in ("", "finalized"):
        # The migration's phases, soak point and rollback are the playbooks' alone.
        raise DeployError(f"{host.name}: the cluster is migrating from ZooKeeper to KRaft "
                          f"(kafka_kraft_migration: {model['kraft_migration']}), which only "
                          "the playbooks run: ansible-playbook kafkaform.platform.kraft_migration "
                          "(KR-09)")
    if p.refusal:
        raise DeployError(p.refusal)
    helper = _install(p)
    restart_ops, unit = _configure(p)
    secret_ops, tls_changes = _security(p, s)
    if will_change(unit):
        systemd.daemon_reload(name="Reload systemd for the Kafka unit")
    _format_storage(p, [helper, *restart_ops])
    # A controller's unit fails a start whose registration with the quorum Kafka dropped, so
    # that a new process registers (KR-11): one more start.
    # Asked only when the host read found it not both enabled and active, as the role does.
    started: Planned = Unchanged()
    if p.start_service:
        started = systemd.service(name="Enable and start Kafka", service="kafka", running=True,
                                  enabled=True, _retries=1, _retry_delay=p.roll.delay_s)
    # A combined node (KR-04) is one of the brokers' play's members, not the controllers'.
    members = [h for h in play_hosts(group)
               if group == KAFKA_BROKER or KAFKA_BROKER not in h.groups]
    # Asked of the host, not remembered by a run: a run stopped between writing a file and the
    # restart left the node stale. OP-03
    stale_now = host.get_fact(ServiceStale, service="kafka",
                              paths=tuple(kb["restart_files"]))["stale"]
    # A node that talks to the KRaft quorum restarts for new TLS material (it is among the
    # files it reads at start); the others reload it. SE-02
    tls_restarts = kb["tls"]["keystore"] in kb["restart_files"]
    might_restart = (stale_now or will_change(*restart_ops, *secret_ops)
                     or (tls_changes and tls_restarts))
    _roll(p, members, might_restart)
    _join_quorum(p, [helper, started])
    if will_change(started) or might_restart:
        python.call(name="Wait until every node is registered and healthy",
                    function=wait_until_ok, node=host.name, argv=p.verify_argv,
                    timeout_s=p.roll.timeout_s, delay_s=p.roll.delay_s,
                    failure="the brokers are not all registered and in sync",
                    rules="MO-02, MO-03, MO-04", _run_once=True)
    # A broker that starts or restarts in this run reads its new certificate then. SE-02
    if tls_changes and not (tls_restarts or will_change(started) or might_restart):
        server.shell(name="Load the new certificate and trust bundle into the running broker",
                     commands=[shlex.join([*p.admin_argv, "reload-tls"])])
    # The role's run_once steps run on the first node of the play, as Ansible's do (any broker
    # answers alike: the SCRAM users log in on its own SASL listener, kafkaform_scram.py).
    first = members[0].name == host.name
    _secure_znodes(p, first)
    declared = _declared(p, s)
    # On the broker the plan names to answer (roles/kafka_broker/tasks/declared_state.yml). One
    # that starts in this run (a fresh cluster's) converges once it runs.
    names = {m.name for m in members}
    reader = next((h for h in p.declared_state_hosts if h in names), members[0].name)
    if host.name == reader and (declared["topics"] or declared["users"] or declared["acls"]) and (
            will_change(helper) or will_change(started)
            or _declared_changes(p.admin_argv, declared)):
        python.call(name="Converge the declared topics, users and ACLs",
                    function=_converge_declared, tool=p.admin_argv, declared=declared)
    if first and _holds_cluster_defaults(p, restarting=might_restart):
        python.call(name="Hold the cluster-wide min.insync.replicas at the cluster's value "
                    "[KR-14]", function=_hold_cluster_defaults, argv=p.cluster_defaults_argv)
    if first and _raises_metadata_version(p, restarting=might_restart):
        python.call(name="Raise metadata.version to the release every Kafka node runs, then each "
                    "named feature [KR-10, KR-13]",
                    function=_raise_metadata_version, argv=p.features_argv)


def _raises_metadata_version(p: KafkaBrokerPlan, restarting: bool) -> bool:
    """roles/kafka_broker/tasks/features.yml: whether this run raises metadata.version (KR-10):
    when the plan says so, and every Kafka node of the plan is in this run on this node's release
    (their rolls, earlier in the run, stop it if one does not come back on it); then when the
    release changes in this run, or the cluster's level is already behind it."""
    if not p.raise_metadata_version:
        return False
    nodes = [*play_hosts(KAFKA_CONTROLLER), *play_hosts(KAFKA_BROKER)]
    if {n.name for n in nodes} != set(p.kafka_nodes) or any(
            plan(n).context["release"] != p.context["release"] for n in nodes):
        return False
    if restarting:
        return True
    try:
        answer = host.get_fact(AdminAnswer, argv=(*p.features_argv, "--dry-run"))
        return bool(json.loads(answer)["changed"])
    except (ValueError, KeyError, TypeError):
        return True  # the cluster cannot answer yet: ask it again once the nodes are up


def _holds_cluster_defaults(p: KafkaBrokerPlan, restarting: bool) -> bool:
    """roles/kafka_broker/tasks/cluster_defaults.yml: whether this run sets the cluster-wide
    min.insync.replicas (KR-14): on a KRaft broker, when the brokers restart in this run or the
    cluster's value differs now."""
    if not p.cluster_defaults_argv:
        return False
    if restarting:
        return True
    try:
        answer = host.get_fact(AdminAnswer, argv=(*p.cluster_defaults_argv, "--dry-run"))
        return bool(json.loads(answer)["changed"])
    except (ValueError, KeyError, TypeError):
        return True  # the cluster cannot answer yet: ask it again once the nodes are up


def _hold_cluster_defaults(argv: list[str]) -> None:
    ran = run_on(host.name, argv)
    if not ran.ok:
        raise DeployError(f"{host.name}: setting the cluster-wide min.insync.replicas failed: "
                          f"{ran.said} [KR-14]")


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


def _secure_znodes(p: KafkaBrokerPlan, first: bool) -> None:
    """roles/kafka_broker/tasks/secure_znodes.yml, its once-per-cluster steps on the first broker
    of the play. SE-07, SE-10"""
    if first and p.secure_znodes:
        server.shell(name="Put ACLs on the znodes the brokers wrote before they logged in",
                     commands=[shlex.join([*p.admin_argv, "zk-secure-acls"])])
    if first and p.mark_znodes_secured:
        put_content("ZkSecurityMigrator --zookeeper.acl=secure ran at the tls_replication step\n",
                    p.znodes_marker, mode="600")
    if p.forget_znodes_secured:
        files.file(name="Forget the znode ACLs while brokers write znodes without them",
                   path=p.znodes_marker, present=False)
