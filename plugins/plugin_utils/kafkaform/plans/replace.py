"""Replacing a broker's host keeping its broker id (OP-09), decided once from the cluster's live
placement for both engines (the ``broker_replace`` filter of playbooks/replace_broker.yml,
pyinfra's ``deploys.day_two.replace_broker``).

A dead broker's host is replaced by a new, empty one under the same inventory entry (so the same
broker id): the new host copies every replica the id holds back from the leaders. The run is
refused, naming the host, the setting and the fix, when a named host is not a broker of the
inventory, when the cluster does not know its id (a new broker: a scale-out), when other brokers
are down or out of sync too, and, unless the operator accepts it, when a partition's only
in-sync replicas are on the replaced broker (its data is offline already: an empty host cannot
bring it back). Otherwise the catch-up is throttled before the new host starts
(``kafka_broker_reassignment_throttle_mb_s``, as the moves of OP-06), waited for until the
broker is in the in-sync replicas of every partition it holds, the throttle cleared and
leadership given back. A broker already in sync has nothing to catch up: a rerun changes
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..rules import cite
from .broker_moves import broker_hosts, named_hosts, named_ids
from .restart_batches import Partition, placement

#: The setting that names the hosts, and the one that accepts the loss of partitions whose only
#: in-sync replicas were on them.
NAMED = "kafka_broker_replace_hosts"
ACCEPT_LOSS = "kafka_broker_replace_accept_data_loss"
#: How many partitions a refusal names before it counts the rest.
SHOWN = 5


@dataclass(frozen=True)
class BrokerReplace:
    """One replacement's decisions: refused (``problem``), or what the run does."""

    problem: str = ""
    #: The hosts replaced and their broker ids.
    replaced: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    summary: str = ""
    #: Said before anything changes: partitions whose loss the operator accepted.
    warning: str = ""
    #: Whether a broker replaced is not registered or not in sync: the catch-up is to be done.
    catch_up: bool = False
    #: The helper's calls, with the ids; empty where there is nothing to do.
    throttle_argv: list[str] = field(default_factory=list)
    wait_argv: list[str] = field(default_factory=list)
    #: Always run (and always after a failure): clears what this or an interrupted run set.
    clear_argv: list[str] = field(default_factory=list)
    elect_argv: list[str] = field(default_factory=list)
    #: The health gate once the throttle is cleared: every broker, none excused.
    health_argv: list[str] = field(default_factory=list)
    #: The hosts the converge's health check excuses while they catch up
    #: (kafka_broker_catching_up_hosts of the role).
    catching_up: list[str] = field(default_factory=list)

    def as_vars(self) -> dict[str, Any]:
        return asdict(self)


def _named(parts: Sequence[Partition]) -> str:
    shown = "; ".join(f"{p.topic}-{p.partition} (replicas {', '.join(map(str, p.replicas))}, "
                      f"in sync on {', '.join(map(str, p.isr)) or 'none'})"
                      for p in parts[:SHOWN])
    return shown + (f"; and {len(parts) - SHOWN} more" if len(parts) > SHOWN else "")


def replace_problems(ids: Sequence[int], host_of: Mapping[int, str],
                     partitions: Sequence[Partition], registered: set[int],
                     accept_loss: bool) -> tuple[list[str], str]:
    """Why the brokers ``ids`` may not be replaced now, and the warning of partitions whose loss
    was accepted."""
    def who(i: int) -> str:
        return f"broker {i} ({host_of[i]})" if i in host_of else f"broker {i}"

    holding = {r for p in partitions for r in p.replicas}
    unknown = [i for i in ids if i not in registered and i not in holding]
    if unknown:
        hosts = ",".join(host_of[i] for i in unknown)
        return [f"{', '.join(map(who, unknown))}: the cluster does not know this id (not "
                f"registered, no replica on it), so a new host under it is a new broker, not a "
                f"replacement ({cite('OP-09')}). Run playbooks/scale_out.yml -e "
                f"kafka_broker_scale_out_hosts={hosts} instead"], ""
    catching = set(ids)
    down = sorted((holding - registered) - catching)
    problems = []
    if down:
        problems.append(
            f"{', '.join(map(who, down))} hold replicas but are not running either: the cluster "
            f"is unhealthy beyond the broker(s) replaced ({cite('OP-09')}). Start them first, "
            f"or name them in {NAMED} too if their hosts are replaced as well")
    lost = [p for p in partitions if set(p.replicas) & catching and set(p.isr) <= catching]
    others = [p for p in partitions if p not in lost
              and set(p.replicas) - set(p.isr) - catching - set(down)]
    if others:
        problems.append(
            f"{len(others)} partition(s) are out of sync on brokers that are not replaced: "
            f"{_named(others)} ({cite('OP-09')}). Wait until they are back in sync and run again")
    warning = ""
    if lost and not accept_loss:
        problems.append(
            f"{len(lost)} partition(s) have no in-sync replica but on the broker(s) replaced, so "
            f"their data is offline already and an empty host under the id cannot bring it "
            f"back: {_named(lost)} ({cite('OP-09')}). Bring the old host's disks back and "
            f"start it as it was if at all possible; to give up what only those brokers held "
            f"(those partitions come back empty, or stay offline), run again with -e "
            f"{ACCEPT_LOSS}=true")
    elif lost:
        warning = (f"{ACCEPT_LOSS} is set: {len(lost)} partition(s) had no in-sync replica but "
                   f"on the broker(s) replaced and lose what only they held: {_named(lost)} "
                   f"({cite('OP-09')})")
    return problems, warning


def broker_replace(named: Sequence[str] | str, answer: Mapping[str, Any] | None,
                   argv: Mapping[str, Any], accept_loss: bool = False) -> BrokerReplace:
    """The replacement of the hosts ``named`` (inventory hostnames, or ``-e``'s comma-separated
    string), from the helper's ``placement`` ``answer``, with the command lines of ``argv``
    (plans.broker_moves.DayTwoArgv as vars). Without an answer, only the check of the names
    before the cluster is asked (and which hosts are replaced: the calls run elsewhere)."""
    hosts = named_hosts(named)
    ids_by_host = broker_hosts(argv)
    host_of = {i: h for h, i in ids_by_host.items()}
    ids, problem = named_ids(hosts, argv, NAMED, "OP-09") if hosts else ([], (
        f"no broker named: set {NAMED} to the hosts of the kafka_broker group whose broker ids "
        f"new, empty hosts take ({cite('OP-09')})"))
    if problem or answer is None:
        return BrokerReplace(problem=problem, replaced=hosts, ids=ids)
    partitions = placement(answer)
    registered = {int(b["id"]) for b in answer.get("brokers", [])}
    problems, warning = replace_problems(ids, host_of, partitions, registered, accept_loss)
    if problems:
        return BrokerReplace(problem="; ".join(problems), replaced=hosts, ids=ids)
    catching = set(ids)
    hosted = [p for p in partitions if catching & set(p.replicas)]
    behind = [p for p in hosted if catching & set(p.replicas) - set(p.isr)]
    absent = sorted(catching - registered)
    catch_up = bool(behind or absent)
    listed = ",".join(map(str, ids))
    summary = (f"broker(s) {listed} ({', '.join(hosts)}) hold {len(hosted)} partition(s), "
               + (f"{len(behind)} not in sync; "
                  + (f"broker(s) {', '.join(map(str, absent))} not running; " if absent else "")
                  + "the catch-up is throttled before the host starts"
                  if catch_up else "every one in sync: nothing to catch up"))
    every = sorted(set(ids_by_host.values()) | registered)
    return BrokerReplace(
        replaced=hosts, ids=ids, summary=summary, warning=warning, catch_up=catch_up,
        throttle_argv=[*argv["catch_up_throttle"], "--ids", listed] if catch_up else [],
        wait_argv=[*argv["catch_up_wait"], "--ids", listed] if catch_up else [],
        clear_argv=list(argv["catch_up_clear"]),
        elect_argv=list(argv["elect"]),
        health_argv=[*argv["health"], "--ids", ",".join(map(str, every)), *argv["health_tail"]],
        catching_up=hosts)


def verify_argv(kb: Mapping[str, Any], catching_up_hosts: Sequence[str] | str | None
                ) -> list[str]:
    """The check that ends a broker's converge (a node's context ``kb``); with hosts catching up
    (the converge of a replacement, kafka_broker_catching_up_hosts), the partitions out of sync
    on them alone are no problem: the run waits for them after (OP-09)."""
    ids = [str(kb["ids_by_host"][h]) for h in named_hosts(catching_up_hosts or [])
           if h in kb["ids_by_host"]]
    return [*kb["admin_argv"], *kb["verify_args"],
            *(["--catching-up", ",".join(ids)] if ids else [])]


def broker_replace_vars(named: Sequence[str] | str, answer: Mapping[str, Any] | None,
                        argv: Mapping[str, Any], accept_loss: Any = False) -> dict[str, Any]:
    """:func:`broker_replace` for the roles (the ``broker_replace`` filter)."""
    return broker_replace(named, answer, argv, truthy(accept_loss)).as_vars()


def truthy(value: Any) -> bool:
    """A boolean as ``-e name=true`` gives it (a string), YAML or pyinfra's ``--data`` does:
    how both engines read kafka_broker_replace_accept_data_loss."""
    return value is True or str(value).strip().lower() in ("true", "yes", "1", "on")
