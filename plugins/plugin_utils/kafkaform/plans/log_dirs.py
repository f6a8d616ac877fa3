"""A Kafka node's log directories: the first (where meta.properties lives), what each holds, read
with the node (plans.kafka_broker), and the refusal to drop one that still holds replicas from
log.dirs (OP-10).

A node restarted without a log directory that holds replicas no longer serves them: Kafka
re-creates them empty elsewhere and copies them again from their leaders, and a replica that was
the only copy in sync (replication factor 1, or the others behind) is lost. The run refuses
before it changes the node; the data stays on its disk.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ..rules import cite
from . import hostread

LABEL = "log_dir_replicas"


def first(cluster: Mapping[str, Any], host: str) -> str:
    """Where the node's meta.properties lives: a broker's first log directory, a dedicated
    controller's metadata directory."""
    broker = cluster.get("brokers_by_host", {}).get(host)
    if broker:
        return str((broker.get("log_dirs") or [""])[0])
    controller = cluster.get("controllers_by_host", {}).get(host) or {}
    return str(controller.get("metadata_dir") or "")


def question(config: str) -> hostread.Question:
    """Each log directory of the server.properties at ``config`` (the one the node runs with) and
    how many partition replicas it holds, ``DIR=COUNT`` separated by spaces: the directories named
    ``<topic>-<partition>`` (not those Kafka marks -delete, -future or -stray)."""
    q = shlex.quote(config)
    return hostread.ask(LABEL, (
        f"for d in $(sed -n 's/^log[.]dirs=//p' {q} 2>/dev/null | tr ',' ' '); do "
        "printf '%s=%s ' \"$d\" \"$(find \"$d\" -mindepth 1 -maxdepth 1 -type d "
        "-regextype posix-extended -regex '.*-[0-9]+' 2>/dev/null | wc -l)\"; done"))


def parse(answer: str) -> dict[str, int]:
    """:func:`question`'s answer: log directory to the replicas it holds."""
    found = {}
    for item in answer.split():
        directory, count = item.rpartition("=")[::2]
        if directory and count.isdigit():
            found[directory] = int(count)
    return found


def refusal(host: str, running: Mapping[str, int], planned: Sequence[str]) -> str:
    """Why ``host`` must not be restarted without a log directory it runs with, or ""."""
    dropped = {d: n for d, n in running.items() if n and d not in planned}
    if not dropped:
        return ""
    held = ", ".join(f"{d} ({n} replica(s))" for d, n in sorted(dropped.items()))
    return (f"{host}: log.dirs would lose {held}, which the node runs with and "
            "os_tuning_data_disks no longer declares; restarted without it, those replicas would "
            "be copied again from their leaders, or lost where it holds the only copy in sync "
            f"({cite('OP-10')}). Fix: declare the disk again (device, mount, purpose "
            "kafka_log_dir); to retire it, first move its replicas to the node's other log "
            "directories (kafka-reassign-partitions with log_dirs), then remove it. Nothing was "
            "changed on the node.")
