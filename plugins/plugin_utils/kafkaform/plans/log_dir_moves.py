"""Replicas moved between a broker's own log directories (OP-11), decided once for both engines
from the admin helper's placement, which lists each broker's log directories with their bytes and
replicas: the ``empty_log_dirs`` operation of plans.broker_moves.

Emptying a log directory moves every replica in it to the broker's other log directories, each
to the one with the most room left, under the log-directory throttle; refused when a broker has
no other directory, or when a directory would keep less than DISK_FREE_MIN of its disk free
(OP-07). Once empty, the disk can leave os_tuning_data_disks: the run that drops it from
log.dirs finds nothing there (OP-10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import cite
from ..sizing import DISK_FREE_MIN

OPERATION = "empty_log_dirs"


def _named(item: str, host_of: Mapping[int, str], broker: int, log_dir: str) -> bool:
    """Whether ``item`` (``DIR`` or ``HOST:DIR``, DIR a log directory or the mount it is on)
    names ``log_dir`` of ``broker``."""
    host, directory = item.rpartition(":")[::2]
    if host and host_of.get(broker) != host:
        return False
    directory = directory.rstrip("/")
    return log_dir.rstrip("/") == directory or log_dir.startswith(directory + "/")


def unknown_hosts(named: Sequence[str], ids_by_host: Mapping[str, int]) -> list[str]:
    """The ``HOST:DIR`` items whose host is not one of ``ids_by_host``."""
    return [item for item in named if item.rpartition(":")[0]
            and item.rpartition(":")[0] not in ids_by_host]


def named_problem(named: Sequence[str], brokers: Mapping[str, int],
                  nodes: Mapping[str, int]) -> str:
    """Why the log directories ``named`` are refused before any host is touched ("" when they
    are not), naming the items, the setting and the fix: none named, a ``HOST:DIR`` whose host
    is no node of the inventory, or a KRaft controller (in ``nodes``, every Kafka node's id by
    host, not in ``brokers``): a controller holds no replica to move."""
    setting = f"kafka_broker_{OPERATION}"
    fix = (f"set {setting} to the log directories (or their mounts) to empty, DIR or HOST:DIR "
           f"({cite('OP-11')})")
    if not named:
        return f"no log directory named: {fix}"
    controllers = [item for item in unknown_hosts(named, brokers)
                   if item.rpartition(":")[0] in nodes]
    unknown = [item for item in unknown_hosts(named, brokers) if item not in controllers]
    problems = [f"{', '.join(unknown)}: not a broker of the inventory: {fix}"] if unknown else []
    if controllers:
        problems.append(
            f"{', '.join(controllers)}: a KRaft controller, not a broker, so {setting} cannot "
            f"name it: a controller holds no replica ({cite('OP-11')}). Name log directories "
            "of hosts of the kafka_broker group (HOST:DIR), or DIR for every broker")
    return "; ".join(problems)


def said_moves(reassignment: Mapping[str, Any], answer: Mapping[str, Any]) -> list[str]:
    """Each replica the ``reassignment`` moves, in words: "topic-partition: broker B FROM ->
    TO", FROM the log directory of ``answer`` (the placement) that holds it now."""
    held = {(int(b["id"]), name): directory for b in answer.get("brokers", [])
            for directory, info in (b.get("log_dirs") or {}).items()
            for name in info.get("replicas", {})}
    said = []
    for p in reassignment.get("partitions", []):
        name = f"{p['topic']}-{p['partition']}"
        for broker, target in zip(p["replicas"], p["log_dirs"], strict=True):
            if target != "any":
                said.append(f"{name}: broker {broker} {held[(int(broker), name)]} -> {target}")
    return said


def empty_log_dirs(named: Sequence[str], answer: Mapping[str, Any],
                   host_of: Mapping[int, str]) -> tuple[dict[str, Any], str, str]:
    """The reassignment (Kafka's format, with ``log_dirs``) that empties the log directories
    ``named``, a summary, and the problem that refuses it ("" when none)."""
    current = {(str(p["topic"]), int(p["partition"])): [int(r) for r in p["replicas"]]
               for p in answer.get("partitions", [])}
    targets: dict[tuple[str, int], dict[int, str]] = {}
    problems: list[str] = []
    reported: set[str] = set()
    matched: set[str] = set()
    moved, total = 0, 0
    for broker in answer.get("brokers", []):
        bid, dirs = int(broker["id"]), broker.get("log_dirs") or {}
        reported.update(dirs)
        hits = {d: {n for n in named if _named(n, host_of, bid, d)} for d in dirs}
        matched.update(*hits.values())
        emptied = [d for d, names in hits.items() if names]
        kept = {d: dict(info) for d, info in dirs.items() if d not in emptied}
        replicas = sorted(((size, name) for d in emptied
                           for name, size in dirs[d]["replicas"].items()), reverse=True)
        if replicas and not kept:
            problems.append(f"broker {bid}: every log directory it has is named "
                            f"({', '.join(emptied)}), so its replicas have nowhere to go "
                            f"({cite('OP-11')}). Add a disk first (os_tuning_data_disks)")
            continue
        # Bytes free in each directory that stays, as the moves fill it (None: it did not say).
        room: dict[str, int | None] = {
            d: None if info.get("usable") is None else int(info["usable"])
            for d, info in kept.items()}
        for size, name in replicas:
            topic, number = name.rpartition("-")[::2]
            key = (topic, int(number))
            if key not in current:
                continue  # a topic deleted since the read
            target = max(kept, key=lambda d: (room[d] if room[d] is not None else -1, d))
            free, whole = room[target], kept[target].get("total")
            if free is not None and whole is not None and free - size < DISK_FREE_MIN * whole:
                problems.append(
                    f"broker {bid}: {name} ({size / 2**20:.0f} MiB) fits in none of "
                    f"{', '.join(kept)} keeping {DISK_FREE_MIN:.0%} free ({cite('OP-07')}). "
                    "Add a disk, or shorten the retention of the largest topics")
                break
            if free is not None:
                room[target] = free - size
            targets.setdefault(key, {})[bid] = target
            moved, total = moved + 1, total + size
    # A name that matches no directory would move nothing and say so as if done.
    unmatched = [n for n in named if n not in matched]
    if unmatched:
        problems.insert(0, (
            f"{', '.join(unmatched)}: names no log directory the running brokers report "
            f"({', '.join(sorted(reported)) or 'none'}) ({cite('OP-11')}). "
            f"Set kafka_broker_{OPERATION} to directories of log.dirs or their mounts, DIR or "
            "HOST:DIR"))
    partitions = [{"topic": topic, "partition": number, "replicas": current[(topic, number)],
                   "log_dirs": [moves.get(r, "any") for r in current[(topic, number)]]}
                  for (topic, number), moves in sorted(targets.items())]
    summary = (f"{moved} replica(s), {total / 2**20:.1f} MiB, move off log director"
               f"{'y' if len(named) == 1 else 'ies'} {', '.join(named)} to the brokers' other "
               "log directories")
    return ({"version": 1, "partitions": partitions if not problems else []}, summary,
            "; ".join(problems))
