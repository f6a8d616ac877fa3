"""A Kafka node's log directories: the first (where meta.properties lives), what each holds, read
with the node (plans.kafka_broker), and the refusal to drop one that still holds replicas from
log.dirs (OP-10), and a failed data disk (OP-13).

A node restarted without a log directory that holds replicas no longer serves them: Kafka
re-creates them empty elsewhere and copies them again from their leaders, and a replica that was
the only copy in sync (replication factor 1, or the others behind) is lost. The run refuses
before it changes the node; the data stays on its disk.

A data disk that fails under a running broker (I/O errors) is taken offline by Kafka at the first
error: the broker goes on serving its other log directories, the replicas on the failed one are
served no more and their partitions run under-replicated (those whose only in-sync replica was
there go offline). The broker keeps the failed filesystem open until it stops, so the disk can
only be replaced with the broker stopped; on its next start, with the new disk formatted, Kafka
creates the replicas that were there again and copies them from their leaders. The run stops at
a failed disk, naming it and those steps, and changes nothing (OP-13).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..rules import cite
from . import hostread

LABEL = "log_dirs"
#: A log directory's state as the node's read finds it: ``formatted`` (meta.properties there),
#: ``blank`` (no meta.properties: a new or replaced disk, formatted by the run, KR-07) or
#: ``failed`` (reading it fails with an I/O error: a failed disk, OP-13).
FORMATTED, BLANK, FAILED = "formatted", "blank", "failed"


def first(cluster: Mapping[str, Any], host: str) -> str:
    """Where the node's meta.properties lives: a broker's first log directory, a dedicated
    controller's metadata directory."""
    broker = cluster.get("brokers_by_host", {}).get(host)
    if broker:
        return str((broker.get("log_dirs") or [""])[0])
    controller = cluster.get("controllers_by_host", {}).get(host) or {}
    return str(controller.get("metadata_dir") or "")


def question(config: str) -> hostread.Question:
    """Each log directory of the server.properties at ``config`` (the one the node runs with), its
    state and how many partition replicas it holds, ``DIR=STATE:COUNT`` separated by spaces. The
    state is :data:`FAILED` when listing the directory fails with an I/O error (a failed disk,
    whatever else it holds), else :data:`FORMATTED` or :data:`BLANK`; the replicas are the
    directories named ``<topic>-<partition>`` (not those Kafka marks -delete, -future or -stray)."""
    q, failed = shlex.quote(config), hostread.io_error('"$d"')
    return hostread.ask(LABEL, (
        f"for d in $(sed -n 's/^log[.]dirs=//p' {q} 2>/dev/null | tr ',' ' '); do "
        f"if {failed}; then s={FAILED}; "
        f"elif [ -e \"$d/meta.properties\" ]; then s={FORMATTED}; else s={BLANK}; fi; "
        "printf '%s=%s:%s ' \"$d\" \"$s\" \"$(find \"$d\" -mindepth 1 -maxdepth 1 -type d "
        "-regextype posix-extended -regex '.*-[0-9]+' 2>/dev/null | wc -l)\"; done"))


class Answered(NamedTuple):
    """One log directory in :func:`question`'s answer."""

    directory: str
    state: str
    replicas: str


def _items(answer: str) -> list[Answered]:
    """:func:`question`'s answer, one entry per log directory."""
    found = []
    for item in answer.split():
        directory, held = item.rpartition("=")[::2]
        state, count = held.partition(":")[::2]
        if directory:
            found.append(Answered(directory, state, count))
    return found


def parse_states(answer: str) -> dict[str, str]:
    """:func:`question`'s answer: log directory to its state."""
    return {i.directory: i.state for i in _items(answer) if i.state in (FORMATTED, BLANK, FAILED)}


def failed_refusal(host: str, failed: Sequence[str]) -> str:
    """Why ``host`` must not be changed while the log directories (or, for the os_tuning role,
    the data disks) ``failed`` are on failed disks, with what to do; "" when none is."""
    if not failed:
        return ""
    return (f"{host}: {', '.join(failed)} fails with I/O errors: a failed data disk. Kafka took "
            "the log directory on it offline at the first error: the broker serves its other log "
            "directories, the replicas that were there are served no more, their partitions are "
            "under-replicated, and those whose only in-sync replica was there are offline "
            f"({cite('OP-13')}). Fix: stop the broker (systemctl stop kafka on {host}: it keeps "
            "the failed filesystem open until it stops), replace the disk with an empty one under"
            " the same device name, and run site.yml again: it formats and mounts the new disk, "
            "formats the log directory with the cluster id, starts the broker, which copies the "
            "replicas that were there back from their leaders, and waits until every partition is"
            " in sync. A partition left offline (kafka-topics --describe --unavailable-"
            "partitions) lost its only copy: it comes back only empty, by an unclean leader "
            "election (kafka-leader-election --election-type unclean), which gives up what it "
            "held. Nothing was changed on the node.")


def parse(answer: str) -> dict[str, int]:
    """:func:`question`'s answer: log directory to the replicas it holds."""
    return {i.directory: int(i.replicas) for i in _items(answer) if i.replicas.isdigit()}


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
