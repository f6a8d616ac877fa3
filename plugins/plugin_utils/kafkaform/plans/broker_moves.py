"""What a decommission or a scale-out moves, decided once from the cluster's live placement for
both engines (the ``broker_moves`` filter, pyinfra's ``deploys.day_two``).

A decommission (OP-05) moves every replica off the named brokers, refused when the brokers that
stay could not hold every partition at its replication factor across as many racks as now; the
brokers are stopped (and, in KRaft, unregistered) only once they hold nothing. A scale-out gives
the new brokers (named, or every registered broker that holds no replica) a fair share, taken
from the brokers that were there. Emptying log directories moves their replicas to their
brokers' other log directories (plans.log_dir_moves, OP-11). Either way the moves run under a
throttle (OP-06). Where Kafka can (plans.cordon), the brokers a decommission empties are cordoned
first (OP-08).

A dry run (Ansible's --check, pyinfra's --dry) changes nothing on the cluster and decides what a
real run would: the moves an interrupted run left in flight are taken as done (a real run waits
for them first), a scale-out's brokers that the converge before it would start are taken as
running, and a decommission's check after the moves takes the moves it would have made as made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..rules import cite
from ..sizing import DISK_FREE_MIN
from . import log_dir_moves
from .cordon import cordon, uncordon_receiving
from .decommission import Topic, decommission_problems
from .reassignment import moves_off, moves_onto
from .restart_batches import Partition, placement

OPERATIONS = ("decommission", "scale_out", log_dir_moves.OPERATION)
#: How often the moves in flight report what is left, in seconds (OP-06).
REPORT_S = 30
MIB = 1024 * 1024


@dataclass(frozen=True)
class DayTwoArgv:
    """The admin helper's command lines a day-two operation runs, from a broker's plan."""

    placement: list[str]
    start: list[str]
    wait: list[str]
    cancel: list[str]
    elect: list[str]
    #: The health gate, less its --ids (the brokers that stay, known only once named).
    health: list[str]
    health_tail: list[str]
    #: KRaft: remove a stopped broker's registration; ZooKeeper mode: empty.
    unregister: list[str]
    ids_by_host: dict[str, int] = field(default_factory=dict)
    #: KRaft: cordon the brokers that leave, and lift a cordon (OP-08); ZooKeeper mode: empty.
    cordon: list[str] = field(default_factory=list)
    uncordon: list[str] = field(default_factory=list)
    #: What the cluster's metadata runs: "kraft", "zookeeper"; and the release the nodes run.
    metadata_mode: str = ""
    release: str = ""
    #: Every broker of the inventory: its rack ("" where undeclared), by id.
    brokers: dict[str, str] = field(default_factory=dict)
    #: A replaced broker's catch-up (plans.replace, OP-09), less its --ids: throttle its
    #: replicas, watch it, clear what the throttle set.
    catch_up_throttle: list[str] = field(default_factory=list)
    catch_up_wait: list[str] = field(default_factory=list)
    catch_up_clear: list[str] = field(default_factory=list)
    #: The ids of the kafka_broker group (ids_by_host names the KRaft controllers too).
    broker_ids: list[int] = field(default_factory=list)
    #: The moves an interrupted run left in flight, read from the node, asking no one.
    in_flight: list[str] = field(default_factory=list)


def day_two_argv(kb: Mapping[str, Any], throttle_mb_s: float, timeout_s: float) -> DayTwoArgv:
    """The helper's command lines of a day-two operation, from a broker's context (``kb``) and
    the throttle and timeout of its moves."""
    admin, kraft = list(kb["admin_argv"]), kb["metadata_mode"] == "kraft"
    return DayTwoArgv(
        placement=[*admin, "placement"],
        start=[*admin, "reassign", "--throttle", str(int(float(throttle_mb_s) * MIB)),
               "--timeout", str(int(timeout_s))],
        wait=[*admin, "reassign-wait", "--for", str(REPORT_S)],
        cancel=[*admin, "reassign-cancel"],
        in_flight=[*admin, "reassign-in-flight"],
        elect=[*admin, "elect"],
        health=[*admin, "health"],
        health_tail=list(kb["health_options"]),
        unregister=[*admin, "unregister"] if kraft else [],
        ids_by_host={str(h): int(i) for h, i in kb["ids_by_host"].items()},
        cordon=[*admin, "cordon"] if kraft else [], uncordon=[*admin, "uncordon"] if kraft else [],
        metadata_mode=str(kb["metadata_mode"]), release=str(kb["release"]),
        brokers={str(i): str(r or "") for i, r in kb.get("racks_by_id", {}).items()},
        catch_up_throttle=[*admin, "catch-up-throttle", "--throttle",
                           str(int(float(throttle_mb_s) * MIB)), "--timeout", str(int(timeout_s))],
        catch_up_wait=[*admin, "catch-up-wait", "--for", str(REPORT_S)],
        catch_up_clear=[*admin, "catch-up-clear"],
        broker_ids=[int(i) for i in kb.get("broker_ids", ())])


@dataclass(frozen=True)
class BrokerMoves:
    """One operation's decisions: refused (``problem``), or what moves and what follows."""

    operation: str
    problem: str = ""
    #: Kafka's reassignment format: {"version": 1, "partitions": [{topic, partition, replicas}]}.
    reassignment: dict[str, Any] = field(default_factory=dict)
    leaving: list[str] = field(default_factory=list)
    joining: list[str] = field(default_factory=list)
    summary: str = ""
    #: What the run should say before it moves anything (disks it could not check).
    warning: str = ""
    #: The health gate after the moves: every broker that stays. Without the placement (the
    #: gate before anything moves), with moves an interrupted run left in flight: replicas out
    #: of sync on the brokers they copy to are taken for the moves' (``gate_note`` says so).
    health_argv: list[str] = field(default_factory=list)
    gate_note: str = ""
    unregister_argv: list[str] = field(default_factory=list)
    #: A decommission: cordon the brokers that leave before any move (empty: none to cordon,
    #: ``cordon_note`` says why), and lift it once they are stopped, before their
    #: unregistration (Kafka then refuses their configs). Either operation: lift a cordon on
    #: every broker a move names, receiving a replica or keeping one (and on a scale-out's
    #: brokers that join), before the moves: Kafka refuses any move whose replicas include a
    #: broker with all its log directories cordoned (left by an interrupted run, or set by an
    #: operator); ``uncordon_note`` says so. OP-08
    cordon_argv: list[str] = field(default_factory=list)
    uncordon_leaving_argv: list[str] = field(default_factory=list)
    uncordon_receiving_argv: list[str] = field(default_factory=list)
    cordon_note: str = ""
    uncordon_note: str = ""
    #: Each move in words, "topic-partition: replicas before -> after": what a dry run reports.
    moved: list[str] = field(default_factory=list)
    #: A preferred-replica election follows: after moves, and also when nothing moves but a
    #: partition is led by another replica while its preferred one is in sync (a run that
    #: stopped between its moves and its election leaves that; a rerun makes up for it).
    elect: bool = False

    def as_vars(self) -> dict[str, Any]:
        return asdict(self)


def broker_hosts(argv: Mapping[str, Any]) -> dict[str, int]:
    """The inventory's brokers, their ids by host (``argv``: :class:`DayTwoArgv` as vars, whose
    ids_by_host names the KRaft controllers too)."""
    ids_by_host = {str(h): int(i) for h, i in argv["ids_by_host"].items()}
    brokers = {int(i) for i in argv.get("broker_ids") or ids_by_host.values()}
    return {h: i for h, i in ids_by_host.items() if i in brokers}


def named_ids(named: Sequence[str], argv: Mapping[str, Any], setting: str,
              rule: str) -> tuple[list[int], str]:
    """The broker ids of the hosts ``named`` in ``setting``, or why they are refused before any
    host is touched, naming the host, the setting and the fix: a name that is no broker of the
    inventory, or a KRaft controller's (``argv``: :class:`DayTwoArgv` as vars)."""
    brokers = broker_hosts(argv)
    controllers = [n for n in named if n not in brokers and n in argv["ids_by_host"]]
    unknown = [n for n in named if n not in brokers and n not in controllers]
    problems = [f"{', '.join(unknown)}: not a host of the kafka_broker group, so it cannot be "
                f"named in {setting} ({cite(rule)}). Name brokers by their inventory hostnames"
                ] if unknown else []
    if controllers:
        problems.append(f"{', '.join(controllers)}: a KRaft controller, not a broker, so it "
                        f"cannot be named in {setting} ({cite(rule)}). Name hosts of the "
                        "kafka_broker group")
    return ([], "; ".join(problems)) if problems else ([brokers[n] for n in named], "")


def _topics(partitions: Sequence[Partition], racks: Mapping[int, str | None]) -> list[Topic]:
    by_topic: dict[str, list[Partition]] = {}
    for p in partitions:
        by_topic.setdefault(p.topic, []).append(p)
    return [Topic(name, max(len(p.replicas) for p in parts),
                  max(len({racks.get(r) for r in p.replicas if racks.get(r)}) for p in parts))
            for name, parts in sorted(by_topic.items())]


def _reassignment(moves: Mapping[tuple[str, int], list[int]]) -> dict[str, Any]:
    return {"version": 1, "partitions": [
        {"topic": topic, "partition": number, "replicas": replicas}
        for (topic, number), replicas in sorted(moves.items())]}


def broker_moves(operation: str, named: Sequence[str], answer: Mapping[str, Any] | None,
                 argv: Mapping[str, Any], taken_as_done: Sequence[Mapping[str, Any]] = (),
                 starting: Sequence[str] = ()) -> BrokerMoves:
    """The ``operation`` on the brokers ``named`` (inventory hostnames; a scale-out naming none
    takes every registered broker that holds no replica), from the helper's ``placement``
    ``answer``, with the command lines of ``argv`` (:class:`DayTwoArgv` as vars). Without an
    answer, only the gate before anything is read: every broker healthy, but those a
    decommission names (a rerun finds them stopped); with ``taken_as_done`` (here: the moves
    an interrupted run left in flight, waited for after this gate), replicas out of sync on the
    brokers those moves copy to are taken for theirs (a broker down still fails it).

    A dry run's: ``taken_as_done``, moves (Kafka's reassignment format) a real run would have
    finished before this decision, each partition taken as on its new replicas; ``starting``,
    the inventory brokers a scale-out's converge would have started (not running in a dry run):
    left out of the gate, and taken as running in their inventory racks, holding nothing."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown operation {operation!r}: one of {', '.join(OPERATIONS)}")
    ids_by_host = {str(h): int(i) for h, i in argv["ids_by_host"].items()}
    host_of = {i: h for h, i in ids_by_host.items()}
    if operation == log_dir_moves.OPERATION:
        return _log_dirs(named, answer, ids_by_host, host_of, argv)
    # A decommission's brokers leave (OP-05); a scale-out's take replicas (OP-06).
    ids, problem = named_ids(named, argv, f"kafka_broker_{operation}_hosts",
                             "OP-05" if operation == "decommission" else "OP-06")
    if problem:
        return BrokerMoves(operation, problem=problem)
    if operation == "decommission" and not ids:  # refused with the names, before any read
        return BrokerMoves(operation, problem=(
            f"no broker named: set kafka_broker_decommission_hosts to the hosts to remove "
            f"({cite('OP-05')})"))
    starting_ids = {ids_by_host[h] for h in starting
                    if h in ids_by_host and operation == "scale_out"}
    if answer is None:
        leaving = ids if operation == "decommission" else []
        spared = {*leaving, *starting_ids}
        # The brokers' gate: a dedicated controller is no broker registration (the gate after
        # the moves, and the brokers' roll, name brokers alone too).
        gated = [i for i in broker_hosts(argv).values() if i not in spared]
        catching = in_flight_targets(taken_as_done, gated)
        return BrokerMoves(operation, leaving=[host_of[i] for i in leaving],
                           health_argv=_health(argv, gated, catching),
                           gate_note=_gate_note(taken_as_done, catching))
    answer = settled(answer, taken_as_done, {i: str(argv.get("brokers", {}).get(str(i), ""))
                                             for i in sorted(starting_ids)})
    partitions = placement(answer)
    racks: dict[int, str | None] = {int(b["id"]): b.get("rack") for b in answer.get("brokers", [])}
    live = sorted(racks)
    holding = {r for p in partitions for r in p.replicas}
    if operation == "decommission":
        moves = _decommission(ids, partitions, racks, live, holding, host_of, argv)
    else:
        moves = _scale_out(ids, partitions, racks, live, holding, host_of, argv)
    if moves.problem:
        return moves
    moved = {(str(p["topic"]), int(p["partition"])): list(p["replicas"])
             for p in moves.reassignment["partitions"]}
    named_in = {int(b): 0 for replicas in moved.values() for b in replicas}
    moves = replace(moves, **_cordons(operation, ids, moves, racks, answer, argv,
                                      {**named_in, **receiving(answer, moved)}))
    if starting_ids:  # a dry run started none of them: the gate after spares them too
        moves = replace(moves, health_argv=_health(argv, [b for b in live
                                                          if b not in starting_ids]))
    problems, warning = disk_problems(answer, moved)
    astray = [] if moved else led_astray(partitions)
    return replace(moves, problem="; ".join(problems), warning=warning,
                   reassignment=moves.reassignment if not problems else {},
                   summary=moves.summary + _where(answer, moved) + (
                       f"; {len(astray)} partition(s) led by another replica than their "
                       f"preferred one ({', '.join(astray[:3])}{', ...' if astray[3:] else ''}):"
                       " a preferred-replica election follows" if astray else ""),
                   moved=[] if problems else _moved(answer, moved),
                   elect=not problems and bool(moved or astray))


def led_astray(partitions: Sequence[Partition]) -> list[str]:
    """The partitions (topic-number) whose leader is not their preferred replica (the first)
    while that replica is in sync, so that an election would give it back."""
    return [f"{p.topic}-{p.partition}" for p in partitions
            if p.replicas and p.replicas[0] in p.isr and p.leader not in (-1, p.replicas[0])]


def settled(answer: Mapping[str, Any], done: Sequence[Mapping[str, Any]],
            started: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The placement ``answer`` once the moves ``done`` (Kafka's reassignment format's
    partitions) are done, each such partition on its new replicas, all in sync; with the brokers
    ``started`` (id: rack) registered, holding nothing, disks unknown. What a dry run decides
    from: it neither waits for moves nor starts brokers."""
    targets = {(str(p["topic"]), int(p["partition"])): [int(r) for r in p["replicas"]]
               for p in done}
    parts = [{**p, "replicas": targets[key], "isr": targets[key]}
             if (key := (str(p["topic"]), int(p["partition"]))) in targets else dict(p)
             for p in answer.get("partitions", [])]
    known = {int(b["id"]) for b in answer.get("brokers", [])}
    brokers = [dict(b) for b in answer.get("brokers", [])] + [
        {"id": i, "rack": rack or None, "total": None, "usable": None}
        for i, rack in sorted((started or {}).items()) if i not in known]
    return {**answer, "partitions": parts, "brokers": sorted(brokers, key=lambda b: int(b["id"]))}


def receiving(answer: Mapping[str, Any],
              moves: Mapping[tuple[str, int], list[int]]) -> dict[int, int]:
    """The brokers the ``moves`` give a replica they do not hold now: how many each takes."""
    before = {(str(p["topic"]), int(p["partition"])): {int(r) for r in p["replicas"]}
              for p in answer.get("partitions", [])}
    taken: dict[int, int] = {}
    for key, replicas in moves.items():
        for broker in {int(r) for r in replicas} - before.get(key, set()):
            taken[broker] = taken.get(broker, 0) + 1
    return taken


def _where(answer: Mapping[str, Any], moves: Mapping[tuple[str, int], list[int]]) -> str:
    """Where the moves put new replicas: ", brokers 4 (3 new replicas), 1 (2)" ("" for none)."""
    taken = receiving(answer, moves)
    return (": new replicas on broker(s) " + ", ".join(
        f"{b} ({n})" for b, n in sorted(taken.items()))) if taken else ""


def _moved(answer: Mapping[str, Any], moves: Mapping[tuple[str, int], list[int]]) -> list[str]:
    before = {(str(p["topic"]), int(p["partition"])): list(p["replicas"])
              for p in answer.get("partitions", [])}
    return [f"{topic}-{number}: {','.join(map(str, before.get((topic, number), [])))} -> "
            f"{','.join(map(str, replicas))}"
            for (topic, number), replicas in sorted(moves.items())]


def _log_dirs(named: Sequence[str], answer: Mapping[str, Any] | None,
              ids_by_host: Mapping[str, int], host_of: Mapping[int, str],
              argv: Mapping[str, Any]) -> BrokerMoves:
    """Replicas moved off the log directories ``named`` (plans.log_dir_moves, OP-11)."""
    brokers = broker_hosts(argv)
    operation, health = log_dir_moves.OPERATION, _health(argv, list(brokers.values()))
    problem = log_dir_moves.named_problem(named, brokers, ids_by_host)
    if problem:
        return BrokerMoves(operation, problem=problem)
    if answer is None:
        return BrokerMoves(operation, health_argv=health)
    reassignment, summary, problem = log_dir_moves.empty_log_dirs(named, answer, host_of)
    return BrokerMoves(operation, problem=problem, reassignment=reassignment, summary=summary,
                       health_argv=health,
                       moved=log_dir_moves.said_moves(reassignment, answer),
                       elect=bool(not problem and reassignment.get("partitions")))


def disk_problems(answer: Mapping[str, Any],
                  moves: Mapping[tuple[str, int], list[int]]) -> tuple[list[str], str]:
    """Whether the new replicas fit the disks of the brokers they go to, each keeping
    DISK_FREE_MIN of its disks free (a log directory that fills goes offline, and with the
    metadata's, the broker): the problems, and a warning naming the brokers that did not say
    how much they have free."""
    before = {(str(p["topic"]), int(p["partition"])): (set(p["replicas"]), int(p.get("size", 0)))
              for p in answer.get("partitions", [])}
    incoming: dict[int, int] = {}
    for key, replicas in moves.items():
        held, size = before[key]
        for broker in set(replicas) - held:
            incoming[broker] = incoming.get(broker, 0) + size
    disks = {int(b["id"]): b for b in answer.get("brokers", [])}
    problems, unknown = [], []
    for broker, size in sorted(incoming.items()):
        total, usable = disks.get(broker, {}).get("total"), disks.get(broker, {}).get("usable")
        if total is None or usable is None:
            unknown.append(str(broker))
        elif usable - size < DISK_FREE_MIN * total:
            problems.append(
                f"broker {broker} would take {size / 2**20:.0f} MiB of new replicas with "
                f"{usable / 2**20:.0f} MiB free of {total / 2**20:.0f} MiB, leaving less than "
                f"{DISK_FREE_MIN:.0%} free ({cite('OP-07')}). Add disk or brokers first, or "
                "shorten the retention of the largest topics")
    warning = (f"broker(s) {', '.join(unknown)} did not say how much disk they have free: the "
               f"moves onto them are not checked against it ({cite('OP-07')})") if unknown else ""
    return problems, warning


def _cordons(operation: str, ids: list[int], moves: BrokerMoves, racks: Mapping[int, Any],
             answer: Mapping[str, Any], argv: Mapping[str, Any],
             taking: Mapping[int, int]) -> dict[str, Any]:
    """The cordons' command lines and notes (OP-08), decided by plans.cordon: the brokers a
    decommission empties are cordoned, and every broker a move names (``taking``: how many new
    replicas each gets) is uncordoned."""
    host_id = {str(h): int(i) for h, i in argv["ids_by_host"].items()}
    plan = cordon(str(argv.get("metadata_mode", "")), str(argv.get("release", "")),
                  answer.get("metadata_level"), ids, racks)
    if plan.reason:
        return {"cordon_note": plan.reason if operation == "decommission" else ""}
    joining = [host_id[h] for h in moves.joining if h in host_id]
    lift = uncordon_receiving(taking, joining, ids if operation == "decommission" else [],
                              racks)
    found = {"uncordon_receiving_argv": _with_ids(argv["uncordon"], lift.ids),
             "uncordon_note": lift.reason}
    if operation == "decommission":
        found.update(cordon_argv=_with_ids(argv["cordon"], plan.ids),
                     uncordon_leaving_argv=_with_ids(argv["uncordon"], ids))
    return found


def _with_ids(argv: Sequence[str], ids: Sequence[int]) -> list[str]:
    return [*argv, "--ids", ",".join(map(str, ids))] if argv and ids else []


def _health(argv: Mapping[str, Any], ids: Sequence[int],
            catching_up: Sequence[int] = ()) -> list[str]:
    return [*argv["health"], "--ids", ",".join(map(str, sorted(ids))), *argv["health_tail"],
            *(["--catching-up", ",".join(map(str, catching_up))] if catching_up else [])]


def in_flight_targets(in_flight: Sequence[Mapping[str, Any]], gated: Sequence[int]) -> list[int]:
    """The brokers of ``gated`` that the moves ``in_flight`` (Kafka's reassignment format's
    partitions, left by an interrupted run) copy replicas to: until those moves are done, their
    replicas of the partitions moving may be out of sync."""
    return sorted({int(r) for p in in_flight for r in p.get("replicas", [])} & set(gated))


def _gate_note(in_flight: Sequence[Mapping[str, Any]], catching: Sequence[int]) -> str:
    if not in_flight:
        return ""
    return (f"{len(in_flight)} partition move(s) an interrupted run left are still in flight: "
            "until they are done, the gate takes replicas out of sync on broker(s) "
            f"{', '.join(map(str, catching)) or 'none'} (where they copy to) for the moves', "
            "while every broker must be registered, a controller active and no partition "
            f"offline; the full gate runs once they are done ({cite('OP-06')})")


def _decommission(ids: list[int], partitions: Sequence[Partition],
                  racks: Mapping[int, str | None], live: list[int], holding: set[int],
                  host_of: Mapping[int, str], argv: Mapping[str, Any]) -> BrokerMoves:
    leaving = [host_of[i] for i in ids]
    # A broker already stopped and unregistered holds nothing (a run that ended after its stop):
    # only one that is gone while it still holds replicas cannot be emptied.
    lost = sorted(i for i in ids if i not in racks and i in holding)
    if lost:
        return BrokerMoves("decommission", leaving=leaving, problem=(
            f"broker(s) {', '.join(map(str, lost))} hold replicas but are not running, so their "
            f"replicas cannot move off ({cite('OP-05')}). Start them again and run again, or "
            "replace the host keeping its broker id"))
    everyone = {**racks, **{i: None for i in ids if i not in racks}}
    problems = decommission_problems(ids, everyone, _topics(partitions, racks))
    if problems:
        return BrokerMoves("decommission", leaving=leaving, problem="; ".join(problems))
    moves = moves_off(partitions, ids, live, racks)
    staying = [b for b in live if b not in ids]
    return BrokerMoves(
        "decommission", reassignment=_reassignment(moves), leaving=leaving,
        summary=(f"{len(moves)} partition(s) move off broker(s) {', '.join(map(str, ids))}; "
                 f"{len(staying)} broker(s) stay"),
        health_argv=_health(argv, staying),
        unregister_argv=[*argv["unregister"], "--ids", ",".join(map(str, ids))]
        if argv["unregister"] else [])


def _scale_out(ids: list[int], partitions: Sequence[Partition],
               racks: Mapping[int, str | None], live: list[int], holding: set[int],
               host_of: Mapping[int, str], argv: Mapping[str, Any]) -> BrokerMoves:
    joining = ids or [b for b in live if b not in holding and b in host_of]
    stopped = [i for i in joining if i not in racks]
    if stopped:
        return BrokerMoves("scale_out", joining=[host_of[i] for i in joining], problem=(
            f"broker(s) {', '.join(map(str, stopped))} are not running, so no replica can move "
            f"to them ({cite('OP-06')}). Converge them first (playbooks/kafka.yml)"))
    moves = moves_onto(partitions, joining, [b for b in live if b not in joining], racks)
    return BrokerMoves(
        "scale_out", reassignment=_reassignment(moves),
        joining=[host_of[i] for i in joining],
        summary=(f"{len(moves)} partition(s) move a replica onto broker(s) "
                 f"{', '.join(map(str, joining))}" if joining else
                 "no broker to fill: every running broker holds replicas, so nothing moves "
                 "(name brokers in kafka_broker_scale_out_hosts to give them a fair share)"),
        health_argv=_health(argv, live))


def broker_moves_vars(named: Sequence[str], operation: str, answer: Mapping[str, Any] | None,
                      argv: Mapping[str, Any],
                      taken_as_done: Sequence[Mapping[str, Any]] | None = None,
                      starting: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`broker_moves` for the roles (the broker_moves filter); ``named`` may be the
    comma-separated string ``-e name=a,b`` gives."""
    return broker_moves(operation, named_hosts(named), answer, argv, taken_as_done or (),
                        starting or ()).as_vars()


def named_hosts(named: Sequence[str] | str) -> list[str]:
    """The hosts an operation names: a list, or a comma-separated string (as ``-e`` gives)."""
    if isinstance(named, str):
        return [name.strip() for name in named.split(",") if name.strip()]
    return [str(name) for name in named]
