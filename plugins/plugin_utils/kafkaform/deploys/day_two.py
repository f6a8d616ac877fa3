"""``playbooks/decommission.yml``, ``playbooks/scale_out.yml``, ``playbooks/empty_log_dirs.yml``,
``playbooks/replace_broker.yml`` and ``playbooks/remove_controller.yml`` as pyinfra deploys: the
same decisions (kafkaform.plans.broker_moves, plans.replace and plans.quorum, from the cluster's
live state), carried out by the same admin helper commands from one node that stays, as the
role's tasks/moves.yml, tasks/replace.yml and tasks/remove_controller.yml do.

    pyinfra @kafkaform/INV kafkaform.deploys.day_two.decommission \\
        --data kafka_broker_decommission_hosts=kf-kafka3
    pyinfra @kafkaform/INV kafkaform.deploys.day_two.scale_out
    pyinfra @kafkaform/INV kafkaform.deploys.day_two.empty_log_dirs \\
        --data kafka_broker_empty_log_dirs=/var/lib/kafka/data1
    pyinfra @kafkaform/INV kafkaform.deploys.day_two.replace_broker \\
        --data kafka_broker_replace_hosts=kf-kafka3
    pyinfra @kafkaform/INV kafkaform.deploys.day_two.remove_controller \\
        --data kafka_controller_remove_host=kf-ctl3

Whether anything is to be done is asked of the cluster when the deploy is planned, so that a run
with nothing to move, stop or unregister changes nothing; what moves is decided again when it
runs, after the moves an interrupted run left in flight are done.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from typing import Any

from pyinfra import logger
from pyinfra.api.deploy import deploy
from pyinfra.api.exceptions import DeployError
from pyinfra.context import host
from pyinfra.operations import python, systemd

from ..model import KAFKA_BROKER, KAFKA_CONTROLLER
from ..plans.broker_moves import BrokerMoves, broker_moves, named_hosts
from ..plans.quorum import REMOVE, controller_removal
from ..plans.replace import ACCEPT_LOSS, BrokerReplace, broker_replace, truthy
from . import base
from .base import play_hosts
from .facts import AdminAnswer
from .kafka_broker import install_admin_helper, kafka_broker, kafka_controller, plan
from .site import barrier

#: The --data key that names an operation's brokers.
NAMED = {"decommission": "kafka_broker_decommission_hosts",
         "scale_out": "kafka_broker_scale_out_hosts",
         "empty_log_dirs": "kafka_broker_empty_log_dirs"}


def _ran(name: str, argv: list[str], what: str, stdin: str | None = None) -> str:
    ran = base.run_on(name, argv, stdin=stdin)
    if not ran.ok:
        raise DeployError(f"{name}: {what} failed: {ran.said}")
    return ran.stdout


def _wait_moves(name: str, argv: list[str]) -> None:
    """The moves in flight watched until done (the helper then clears their throttles), what is
    left said at each report."""
    while True:
        left = json.loads(_ran(name, argv, "watching the moves in flight"))
        if left["done"]:
            return
        logger.info(f"{name}: {left['said']}")


def _decided(operation: str, named: list[str], name: str, argv: dict[str, Any]) -> BrokerMoves:
    answer = json.loads(_ran(name, argv["placement"], "reading the placement"))
    moves = broker_moves(operation, named, answer, argv)
    if moves.problem:
        raise DeployError(f"No replica moved: {moves.problem}")
    return moves


def _cordon(me: str, operation: str, moves: BrokerMoves) -> None:
    """Before anything moves (OP-08): a decommission cordons the brokers that leave (or says
    once why it does not); either operation lifts a cordon on every broker its moves name
    (Kafka refuses a move naming a cordoned broker) and on a scale-out's that join."""
    if moves.cordon_argv:
        _ran(me, moves.cordon_argv, "cordoning the brokers that leave")
    elif moves.cordon_note:
        logger.info(f"{me}: {moves.cordon_note}")
    if moves.uncordon_receiving_argv:
        lifted = json.loads(_ran(me, moves.uncordon_receiving_argv,
                                 "lifting a cordon on the brokers the moves name"))
        if lifted["uncordoned"]:
            logger.info(f"{me}: {moves.uncordon_note} (lifted on: "
                        f"{', '.join(lifted['uncordoned'])})")


def carry_out(operation: str, named: list[str], argv: dict[str, Any], timeout_s: float,
              delay_s: float) -> None:
    """At execution time, on the broker that runs the moves: tasks/moves.yml, then, for a
    decommission, tasks/decommission.yml's stop and unregistration."""
    me = host.name
    # What an interrupted run left in flight is watched first, under a gate that takes its new
    # replicas out of sync for the moves' (a broker down still fails it); then the full gate.
    flight = json.loads(_ran(me, argv["in_flight"], "reading the moves in flight"))["in_flight"]
    flight_gate = broker_moves(operation, named, None, argv, flight)
    if flight_gate.gate_note:
        logger.info(f"{me}: {flight_gate.gate_note}")
        base.wait_until_ok(me, flight_gate.health_argv, timeout_s, delay_s,
                           "the cluster was not healthy with moves in flight", "OP-06")
    _wait_moves(me, argv["wait"])
    gate = broker_moves(operation, named, None, argv)
    base.wait_until_ok(me, gate.health_argv, timeout_s, delay_s,
                       "the cluster was not healthy before anything moved", "OP-06")
    moves = _decided(operation, named, me, argv)
    logger.info(f"{me}: {moves.summary}")
    if moves.warning:
        logger.warning(f"{me}: {moves.warning}")
    _cordon(me, operation, moves)
    if moves.reassignment["partitions"]:
        started = json.loads(_ran(me, argv["start"], "starting the moves",
                                  stdin=json.dumps(moves.reassignment)))
        if started["warning"]:
            logger.warning(f"{me}: {started['warning']}")
        try:
            _wait_moves(me, argv["wait"])
        except DeployError:
            base.run_on(me, argv["cancel"])
            raise
    if moves.elect:
        _ran(me, argv["elect"], "the preferred-replica election")
    if operation == "decommission":
        left = _decided(operation, named, me, argv)
        if left.reassignment["partitions"]:
            raise DeployError(f"{', '.join(moves.leaving)} still hold replicas ({left.summary}): "
                              "no broker was stopped. Run again.")
        for leaving in moves.leaving:
            _ran(leaving, ["systemctl", "disable", "--now", "kafka.service"], "stopping Kafka")
        # A broker id used again must take new replicas: uncordoned while still registered
        # (Kafka refuses an unregistered broker's configs), once stopped (it gets no replica).
        if moves.uncordon_leaving_argv:
            _ran(me, moves.uncordon_leaving_argv, "lifting the cordon of the brokers that left")
        if moves.unregister_argv:
            _ran(me, moves.unregister_argv, "unregistering the brokers that left")
    base.wait_until_ok(me, moves.health_argv, timeout_s, delay_s,
                       "the cluster was not healthy after the moves", "OP-06")


def _something_to_do(operation: str, named: list[str], argv: dict[str, Any]) -> bool:
    """Asked when the deploy is planned, before anything runs (so a dry run, --dry, changes
    nothing and says what a real run would do): replicas to move, leadership to give back (an
    election an interrupted run did not reach), or a broker a decommission names still
    registered. Decided as a dry run decides (plans.broker_moves): the moves an
    interrupted run left in flight taken as done, and for a scale-out, whose converge starts
    new brokers only later in the run, every broker of the inventory taken as running. True
    when the cluster cannot answer (the run then finds out)."""
    starting = [h for h, i in argv["ids_by_host"].items()
                if str(i) in argv["brokers"]] if operation == "scale_out" else []
    try:
        answer = json.loads(host.get_fact(AdminAnswer, argv=tuple(argv["placement"])))
        in_flight = json.loads(host.get_fact(
            AdminAnswer, argv=(*argv["wait"], "--dry-run")))["in_flight"]
        moves = broker_moves(operation, named, answer, argv, in_flight, starting)
    except (ValueError, KeyError, TypeError):
        return True
    registered = {int(b["id"]) for b in answer.get("brokers", [])}
    leaving = {int(argv["ids_by_host"][h]) for h in moves.leaving} & registered
    if in_flight:
        logger.info(f"{host.name}: {len(in_flight)} partition move(s) an interrupted run left "
                    "in flight, waited for first")
    if (moves.reassignment and moves.reassignment["partitions"]) or moves.elect:
        logger.info(f"{host.name}: {moves.summary}")
        for line in moves.moved:
            logger.info(f"{host.name}:   {line}")
    if moves.cordon_argv:  # said when planned, so that a dry run (--dry) says it too (OP-08)
        logger.info(f"{host.name}: broker(s) {moves.cordon_argv[-1]} to be cordoned before the "
                    "moves")
    if leaving:
        logger.info(f"{host.name}: broker(s) {', '.join(map(str, sorted(leaving)))} to be "
                    "stopped" + (" and unregistered" if moves.unregister_argv else ""))
    return bool(moves.problem or in_flight or moves.reassignment["partitions"] or leaving
                or moves.elect)


def _operation(operation: str) -> None:
    if KAFKA_BROKER not in host.groups:
        return
    p = plan()
    named = named_hosts(host.data.get(NAMED[operation]) or [])
    argv = asdict(p.day_two)
    # The names first: a bad one stops the run before anything is installed (OP-05).
    gate = broker_moves(operation, named, None, argv)
    if gate.problem:
        raise DeployError(gate.problem)
    install_admin_helper(p.install)
    brokers = play_hosts(KAFKA_BROKER)
    runner = next((h for h in brokers if h.name not in gate.leaving), brokers[0])
    if host.name == runner.name and _something_to_do(operation, named, argv):
        python.call(name=f"Move the replicas ({operation}) under the throttle [OP-06]",
                    function=carry_out, operation=operation, named=named, argv=argv,
                    timeout_s=p.roll.timeout_s, delay_s=p.roll.delay_s)


@deploy("decommission")
def decommission() -> None:
    """playbooks/decommission.yml: every replica off the brokers named, then they stop and, in
    KRaft mode, are unregistered. OP-05"""
    _operation("decommission")


def _converged_then(operation: str) -> None:
    """Every Kafka node converged (the controllers first), then the ``operation``'s moves."""
    kafka_controller()
    barrier("the KRaft controllers")
    kafka_broker()
    barrier("the brokers")
    _operation(operation)


@deploy("scale_out")
def scale_out() -> None:
    """playbooks/scale_out.yml: every Kafka node converged, then the new brokers take a fair
    share of the replicas. OP-06"""
    _converged_then("scale_out")


@deploy("empty_log_dirs")
def empty_log_dirs() -> None:
    """playbooks/empty_log_dirs.yml: every Kafka node converged, then every replica in the log
    directories named moves to its broker's other log directories. OP-11"""
    _converged_then("empty_log_dirs")


def _replace_decided(named: list[str], argv: dict[str, Any], accept: Any) -> BrokerReplace:
    """At plan time, on the broker that runs the calls: the replacement decided from the
    cluster's placement (plans.replace), refused before any host is touched."""
    said = host.get_fact(AdminAnswer, argv=tuple(argv["placement"]))
    if not said:
        raise DeployError(f"{host.name}: the cluster did not say where its replicas are "
                          f"({shlex.join(argv['placement'])}): nothing changed (OP-09)")
    decided = broker_replace(named, json.loads(said), argv, truthy(accept))
    if decided.problem:
        raise DeployError(f"Nothing changed: {decided.problem}")
    logger.info(f"{host.name}: {decided.summary}")
    if decided.warning:
        logger.warning(f"{host.name}: WARNING: {decided.warning}")
    return decided


def _throttle_left(decided: BrokerReplace) -> bool:
    """Asked when the deploy is planned: a throttle an interrupted run left (True when the
    helper cannot answer: the run then finds out)."""
    try:
        return bool(json.loads(host.get_fact(
            AdminAnswer, argv=(*decided.clear_argv, "--dry-run")))["cleared"])
    except (ValueError, KeyError, TypeError):
        return True


def throttle_catch_up(argv: list[str]) -> None:
    """Before the new hosts start (OP-09): their catch-up throttled, warnings said."""
    found = json.loads(_ran(host.name, argv, "throttling the catch-up"))
    for said in [found["warning"], *found["notes"]]:
        if said:
            logger.warning(f"{host.name}: WARNING: {said}")


def catch_up(decided: dict[str, Any], timeout_s: float, delay_s: float) -> None:
    """tasks/replace.yml after the converge: wait for the catch-up, saying what is left, the
    throttle cleared whatever happens; leadership given back; every broker healthy."""
    me = host.name
    try:
        while decided["wait_argv"]:
            left = json.loads(_ran(me, decided["wait_argv"], "watching the catch-up"))
            if left["done"]:
                break
            logger.info(f"{me}: {left['said']}")
    finally:
        cleared = base.run_on(me, decided["clear_argv"])
        if not cleared.ok:
            raise DeployError(f"{me}: clearing the catch-up's throttle failed: {cleared.said}")
    _ran(me, decided["elect_argv"], "the preferred-replica election")
    base.wait_until_ok(me, decided["health_argv"], timeout_s, delay_s,
                       "the cluster was not healthy after the catch-up", "OP-09")


@deploy("replace_broker")
def replace_broker() -> None:
    """playbooks/replace_broker.yml: new, empty hosts take the broker ids of the hosts named in
    kafka_broker_replace_hosts; their catch-up is throttled before they start, waited for, and
    its throttle cleared. OP-09"""
    if KAFKA_BROKER not in host.groups:
        return
    p = plan()
    install_admin_helper(p.install)
    named = named_hosts(host.data.get("kafka_broker_replace_hosts") or [])
    argv = asdict(p.day_two)
    gate = broker_replace(named, None, argv)
    if gate.problem:
        raise DeployError(f"Nothing changed: {gate.problem}")
    brokers = play_hosts(KAFKA_BROKER)
    runner = next((h for h in brokers if h.name not in gate.replaced), brokers[0])
    decided = _replace_decided(named, argv, host.data.get(ACCEPT_LOSS)) \
        if host.name == runner.name else None
    if decided is not None and decided.throttle_argv:
        python.call(name="Throttle the replaced brokers' catch-up before their hosts start "
                    "[OP-09]", function=throttle_catch_up, argv=decided.throttle_argv)
    barrier("the catch-up's throttle")
    # The converge's closing check excuses the replaced brokers' replicas out of sync
    # (kafka_broker_catching_up_hosts defaults to the hosts named).
    kafka_broker()
    barrier("the brokers")
    if decided is not None and (decided.catch_up or _throttle_left(decided)):
        python.call(name="Wait for the catch-up, clear its throttle, give leadership back "
                    "[OP-09]", function=catch_up, decided=asdict(decided),
                    timeout_s=p.roll.timeout_s, delay_s=p.roll.delay_s)


def _still_voter(argv: list[str]) -> bool:
    """Asked when the deploy is planned: the controller is still a voter (True when the helper
    cannot answer: the run then finds out)."""
    try:
        return bool(json.loads(host.get_fact(AdminAnswer,
                                             argv=(*argv, "--dry-run")))["removed"])
    except (ValueError, KeyError, TypeError):
        return True


def take_out(argv: list[str]) -> None:
    """The quorum asked to take the controller out of its voters (the helper waits until the
    others are caught up, and until it is out)."""
    _ran(host.name, argv, "taking the controller out of the voters")


@deploy("remove_controller")
def remove_controller() -> None:
    """playbooks/remove_controller.yml: the controller named in kafka_controller_remove_host
    leaves the dynamic quorum's voters, asked by another controller once the others are caught
    up, then its Kafka stops and is disabled. OP-12"""
    if KAFKA_CONTROLLER not in host.groups:
        return
    p = plan()
    install_admin_helper(p.install)
    controllers = play_hosts(KAFKA_CONTROLLER)
    decided = controller_removal(host.data.get(REMOVE),
                                 {h.name: asdict(plan(h).quorum) for h in controllers})
    if decided.problem:
        raise DeployError(f"Nothing changed: {decided.problem}")
    if host.name == decided.runner:
        logger.info(f"{host.name}: {decided.summary}")
        if _still_voter(decided.remove_argv):
            python.call(name="Take the controller out of the quorum's voters once the others "
                        "are caught up [OP-12]", function=take_out, argv=decided.remove_argv)
    barrier("the quorum's voters")
    if host.name == decided.host:
        systemd.service(name="Stop and disable Kafka on the controller taken out [OP-12]",
                        service="kafka", running=False, enabled=False)
