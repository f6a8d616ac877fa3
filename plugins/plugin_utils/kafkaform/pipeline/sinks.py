"""The pipeline's two Parquet outputs, both written from one read of each micro-batch, exactly once.

One streaming query reads the topic; ``foreachBatch`` hands each micro-batch to ``BatchLanding``,
which writes the events and the quarantine from that one read. Each output of a batch lands in
``<output>/batch=<id>/``: written under ``<output>/_staging/`` first, then renamed into place
whole, so a reader sees a batch entirely or not at all. A batch that runs again after a stop or a
crash (Spark records a batch's offsets in the checkpoint before it runs, so it reads the same
records again) finds its directory in place and writes nothing twice (SP-02).

What readers see is plain Hive-partitioned Parquet: a ``batch`` column, and ``event_date`` for
the events. Spark, Trino and pyarrow skip the names starting with ``_``.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checkpoint import Offsets

#: Where a batch is written before it is renamed into place (one directory per output).
STAGING = "_staging"

#: Name of a landed batch's directory: a Hive-style partition, so readers get a ``batch`` column.
BATCH_PREFIX = "batch="


def batch_dir(output: str | Path, batch_id: int | str) -> Path:
    return Path(output) / f"{BATCH_PREFIX}{batch_id}"


def landed_batches(output: str | Path) -> list[str]:
    """The names of the batches landed in ``output`` (``batch=`` directories), sorted."""
    root = Path(output)
    if not root.is_dir():
        return []
    return sorted(p.name[len(BATCH_PREFIX):] for p in root.iterdir()
                  if p.name.startswith(BATCH_PREFIX) and p.is_dir())


def below_floor(floor: Offsets) -> str:
    """A SQL condition on Kafka's ``partition`` and ``offset``: the records of ``floor`` an
    earlier job had already landed (every offset below the partition's floor); ``false`` for
    none."""
    clauses = [f"(partition = {int(p)} AND offset < {int(o)})"
               for p, o in sorted(floor.items()) if int(o) > 0]
    return " OR ".join(clauses) if clauses else "false"


@dataclass(frozen=True)
class Output:
    """One of the job's Parquet outputs: which classified records go there and how they look."""

    name: str
    path: str
    #: SQL condition on a classified record: whether it belongs here
    keep: str
    #: the classified batch -> this output's rows (kafkaform.pipeline.job.events / quarantine)
    select: Callable[[Any], Any]
    partition_by: tuple[str, ...] = ()
    #: offsets below which an earlier job already landed this output's records (legacy_sinks)
    floor: Offsets = field(default_factory=dict)

    def condition(self) -> str:
        """The records of a batch this output lands: its own, less what is below its floor."""
        return f"({self.keep}) AND NOT ({below_floor(self.floor)})"


def land(output: Output, batch_id: int, write: Callable[[str], bool]) -> bool:
    """Land batch ``batch_id`` of ``output`` unless it is there; True if it landed now.

    ``write(path)`` writes the batch's Parquet to ``path`` (replacing what a failed attempt
    left) and says whether to keep it: a batch with no row for this output gets no directory.
    """
    target = batch_dir(output.path, batch_id)
    if target.is_dir():
        return False  # landed before the batch ran again
    staging = batch_dir(Path(output.path, STAGING), batch_id)
    shutil.rmtree(staging, ignore_errors=True)
    if not write(str(staging)):
        shutil.rmtree(staging, ignore_errors=True)
        return False
    os.replace(staging, target)
    return True


class BatchLanding:
    """``foreachBatch``'s function: one micro-batch of classified records into every output.

    The first output still to land is written in one pass over the batch that also counts each
    output's records (an observation, reported with that write); an output counted empty is not
    written at all. So a batch is read from Kafka and parsed once when every record is an event
    (the rule; a batch holding malformed records is read once more for the quarantine), and
    nothing is cached: caching the parsed batch cost more than the second read it saved
    (BENCHMARKS.md).
    """

    def __init__(self, outputs: tuple[Output, ...]) -> None:
        self.outputs = outputs

    def __call__(self, batch: Any, batch_id: int) -> None:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        pending = [o for o in self.outputs if not batch_dir(o.path, batch_id).is_dir()]
        if not pending:
            return
        observation = Observation(f"batch-{batch_id}")
        counted = batch.observe(observation, *(
            F.count(F.when(F.expr(o.condition()), 1)).alias(o.name) for o in pending))
        first, *rest = pending
        land(first, batch_id,
             lambda path: self._write(first, counted, path) and observation.get[first.name] > 0)
        for output in rest:
            if observation.get[output.name] > 0:
                land(output, batch_id, functools.partial(self._write, output, batch))

    @staticmethod
    def _write(output: Output, batch: Any, path: str) -> bool:
        writer = output.select(batch.where(output.condition())).write.mode("overwrite")
        if output.partition_by:
            writer = writer.partitionBy(*output.partition_by)
        writer.parquet(path)
        return True


def read_output(spark: Any, path: str, columns: Mapping[str, str]) -> Any:
    """An output's rows (``columns``: name -> type), empty before its first landed batch."""
    if not landed_batches(path):
        schema = ", ".join(f"`{name}` {kind}" for name, kind in columns.items())
        return spark.createDataFrame([], schema)
    return spark.read.parquet(path).select(*columns)
