"""What the two-query job left, taken over by the one-query job without landing a record twice.

Before the job read each micro-batch once for both outputs, it ran two queries, ``events`` and
``quarantine``, each with its own checkpoint and a file sink whose ``_spark_metadata`` log names
the Parquet files it committed. A pipeline that ran that way is carried over once, before the new
query starts:

1. For each output, the newest batch its sink log holds and that batch's end offsets in the
   output's old checkpoint: everything below them is in the output (the floor). The log, not the
   commits, decides: a batch can land in the sink and stop before its commit.
2. The floors are written to ``carried-over.json`` beside the checkpoints, before anything
   moves; from then on that file is the answer.
3. The files each sink log names move under ``batch=legacy/``, keeping their paths (an event's
   ``event_date``); files no log names (a batch's attempt that never committed) move under
   ``_orphaned/``, out of readers' sight.
4. The sink log is renamed ``_spark_metadata.carried-over``: readers then list the directory
   instead of the log.

Every step can be interrupted and run again. The new query starts, on its first run, at the lower
of the two floors of each partition, and each output skips the records below its own floor.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from .checkpoint import Offsets, batch_end_offsets
from .sinks import batch_dir

#: The file sink's commit log in an output directory (Spark's FileStreamSink).
SINK_LOG = "_spark_metadata"
#: What the sink log is renamed to once its files have moved.
SINK_LOG_DONE = f"{SINK_LOG}.carried-over"
#: The files a sink log does not name.
ORPHANED = "_orphaned"
#: The batch the two-query job's files land in.
LEGACY_BATCH = "legacy"
#: Beside the checkpoints: the floor of each output, once taken.
FLOORS_FILE = "carried-over.json"


@dataclass(frozen=True)
class LegacyOutput:
    name: str
    path: Path
    checkpoint: Path


def _log_entries(log: Path) -> list[tuple[int, Path]]:
    """The sink log's files by batch: ``<batch>`` or ``<batch>.compact`` (hidden .crc skipped)."""
    found = []
    for entry in log.iterdir():
        stem = entry.name.removesuffix(".compact")
        if stem.isdigit():
            found.append((int(stem), entry))
    return sorted(found)


def newest_landed_batch(log: Path) -> int | None:
    entries = _log_entries(log)
    return entries[-1][0] if entries else None


def committed_files(log: Path) -> set[Path]:
    """Every file the sink log names as added and not deleted (a compacted file repeats the
    entries before it, so the set is taken over all)."""
    added: set[Path] = set()
    deleted: set[Path] = set()
    for _batch, entry in _log_entries(log):
        lines = entry.read_text(encoding="utf-8").splitlines()
        if not lines or not lines[0].startswith("v"):
            raise ValueError(f"{entry}: not a file sink log entry")
        for line in lines[1:]:
            if not line.strip():
                continue
            record = json.loads(line)
            path = Path(unquote(urlparse(record["path"]).path))
            (deleted if record.get("action") == "delete" else added).add(path)
    return added - deleted


def floor(output: LegacyOutput, topic: str) -> Offsets:
    """The offsets below which the old job landed every record of ``output``."""
    batch = newest_landed_batch(output.path / SINK_LOG)
    return {} if batch is None else batch_end_offsets(output.checkpoint, batch, topic)


def pending(outputs: Iterable[LegacyOutput]) -> list[LegacyOutput]:
    """The outputs still holding a sink log to carry over."""
    return [o for o in outputs if (o.path / SINK_LOG).is_dir()]


def take_floors(outputs: list[LegacyOutput], topic: str, checkpoints: Path) -> dict[str, Offsets]:
    """The floors of every output: read from ``FLOORS_FILE`` once it exists, else taken from the
    sink logs and checkpoints and written there (atomically) before any file moves."""
    written = checkpoints / FLOORS_FILE
    if written.is_file():
        data = json.loads(written.read_text(encoding="utf-8"))
        return {name: {int(p): int(o) for p, o in ends.items()} for name, ends in data.items()}
    floors = {o.name: floor(o, topic) for o in outputs}
    checkpoints.mkdir(parents=True, exist_ok=True)
    temporary = written.with_suffix(".part")
    temporary.write_text(json.dumps({n: {str(p): o for p, o in f.items()}
                                     for n, f in floors.items()}, sort_keys=True),
                         encoding="utf-8")
    os.replace(temporary, written)
    return floors


def _data_files(root: Path) -> Iterable[Path]:
    """The files under ``root`` a reader would see (no name starting with ``_`` or ``.``), outside
    the batch directories the new job writes."""
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        subdirectories[:] = [d for d in subdirectories if not d.startswith(("_", "."))
                             and not (here == root and d.startswith("batch="))]
        for name in files:
            if not name.startswith(("_", ".")):
                yield here / name


def move_files(output: LegacyOutput) -> tuple[int, int]:
    """Move the sink log's files into the legacy batch, every other data file to ``_orphaned``,
    then retire the log. How many files went each way."""
    log = output.path / SINK_LOG
    committed = {p.resolve() for p in committed_files(log)}
    kept = orphaned = 0
    legacy = batch_dir(output.path, LEGACY_BATCH)
    for source in list(_data_files(output.path)):
        relative = source.relative_to(output.path)
        if source.resolve() in committed:
            target, kept = legacy / relative, kept + 1
        else:
            target, orphaned = output.path / ORPHANED / relative, orphaned + 1
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        checksum = source.with_name(f".{source.name}.crc")  # Hadoop's local checksum file
        if checksum.is_file():
            os.replace(checksum, target.with_name(f".{target.name}.crc"))
    for walked in sorted(os.walk(output.path), reverse=True):
        here = Path(walked[0])
        if here != output.path and not any(part.startswith(("_", "batch="))
                                           for part in here.relative_to(output.path).parts):
            with contextlib.suppress(OSError):  # one still holding a file stays
                here.rmdir()  # an emptied event_date= directory of the old layout
    os.replace(log, output.path / SINK_LOG_DONE)
    return kept, orphaned


def starting_offsets(floors: dict[str, Offsets], partitions: Iterable[int]) -> dict[int, int]:
    """Where the new query starts in each partition: the lower floor of the outputs; Kafka's
    earliest (-2) where an output has none."""
    return {p: min(f.get(p, -2) for f in floors.values()) if floors else -2
            for p in sorted(partitions)}


def carry_over(outputs: list[LegacyOutput], topic: str, checkpoints: Path) -> dict[str, Offsets]:
    """Carry the two-query job's outputs over (see the module's steps); the floors of each
    output, empty when there is nothing to carry over."""
    if not pending(outputs) and not (checkpoints / FLOORS_FILE).is_file():
        return {}
    floors = take_floors(outputs, topic, checkpoints)
    for output in pending(outputs):
        kept, orphaned = move_files(output)
        print(f"kafkaform-pipeline: carried over {output.path}: {kept} files of the old job's "
              f"sink into {LEGACY_BATCH}, {orphaned} it never committed into {ORPHANED}",
              flush=True)
    return floors
