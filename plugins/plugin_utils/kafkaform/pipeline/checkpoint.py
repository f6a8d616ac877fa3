"""What a Structured Streaming checkpoint says was processed: read without Spark.

A checkpoint holds ``offsets/<batch>`` (the end offsets planned for each micro-batch, written before
it runs) and ``commits/<batch>`` (written after its output was committed). The newest batch with a
commit is the consumed range: everything below its end offsets is in the sink, exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Partition number → end offset (exclusive) of one topic.
Offsets = dict[int, int]


def _batch_ids(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def last_committed_batch(checkpoint: Path) -> int | None:
    """The newest micro-batch whose output was committed, or None before the first one."""
    committed = _batch_ids(checkpoint / "commits")
    return committed[-1] if committed else None


def batch_end_offsets(checkpoint: Path, batch: int, topic: str) -> Offsets:
    """End offsets of ``topic`` recorded for ``batch`` (``offsets/<batch>``: a version line, the
    batch metadata, then one JSON line per source)."""
    lines = (checkpoint / "offsets" / str(batch)).read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"{checkpoint}/offsets/{batch}: not a streaming offset log entry")
    for line in lines[2:]:
        source = json.loads(line) if line.strip() and line.strip() != "-" else None
        if isinstance(source, Mapping) and topic in source:
            return {int(p): int(o) for p, o in source[topic].items()}
    raise ValueError(f"{checkpoint}/offsets/{batch}: no offsets for topic {topic}")


def committed_end_offsets(checkpoint: Path, topic: str) -> Offsets:
    """End offsets of the consumed range of one query: empty before its first committed batch."""
    batch = last_committed_batch(checkpoint)
    return {} if batch is None else batch_end_offsets(checkpoint, batch, topic)


def common_range(ends: Iterable[Offsets]) -> Offsets:
    """The offsets every query has consumed: per partition the lowest end (0 where one has none)."""
    ends = list(ends)
    partitions = set().union(*ends) if ends else set()
    return {p: min(e.get(p, 0) for e in ends) for p in sorted(partitions)}


def caught_up(consumed: Offsets, latest: Offsets) -> bool:
    """Whether the consumed range reaches the topic's latest (read-committed) offsets."""
    return all(consumed.get(p, 0) >= end for p, end in latest.items())
