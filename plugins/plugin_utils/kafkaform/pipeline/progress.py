"""The streaming queries' progress, written to a file for the host's monitoring (MO-09).

Spark keeps each query's progress (its rates, its batch's duration, and for the Kafka source how
many offsets the batch ended behind the topic's end) in the driver's memory only. A listener on
the driver writes the latest figures of every query to one JSON file after each progress or idle
event; the monitoring role's kafkaform-process-metrics turns them into metrics for node exporter.
The file lives in the pipeline unit's runtime directory, which systemd removes when the job
stops: a stopped job reports nothing rather than its last figures.

The file holds, for each query by name::

    {"events": {"updated": 1732590000.5, "batch_id": 12, "input_rows_per_second": 410.0,
                "processed_rows_per_second": 2000.0, "batch_duration_seconds": 1.2,
                "offsets_behind_latest": 0}}

``updated`` is when the driver last heard of the query (its start, a finished batch or an idle
trigger): a query whose batch never ends stops updating it. The other figures come with the first
batch that finishes.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

#: What the Kafka source reports in each progress event (KafkaMicroBatchStream.metrics).
OFFSETS_BEHIND = "maxOffsetsBehindLatest"


def figures(progress: Mapping[str, Any], now: float) -> dict[str, float]:
    """The figures of one progress event (``StreamingQueryProgress.json`` as a dict)."""
    behind = [float(source["metrics"][OFFSETS_BEHIND]) for source in progress.get("sources", ())
              if OFFSETS_BEHIND in (source.get("metrics") or {})]
    found = {
        "updated": now,
        "batch_id": float(progress["batchId"]),
        "input_rows_per_second": float(progress.get("inputRowsPerSecond") or 0.0),
        "processed_rows_per_second": float(progress.get("processedRowsPerSecond") or 0.0),
        "batch_duration_seconds":
            float((progress.get("durationMs") or {}).get("triggerExecution", 0)) / 1000,
    }
    if behind:
        found["offsets_behind_latest"] = max(behind)
    return found


class ProgressFile:
    """The latest figures of every query, rewritten whole (write, then rename) on each event."""

    def __init__(self, path: str, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self.queries: dict[str, dict[str, float]] = {}
        self.names: dict[str, str] = {}  # query id -> name: idle events carry no name
        self.lock = threading.Lock()

    def started(self, query_id: str, name: str | None) -> None:
        """A query started: it reports from now on, with no batch finished yet."""
        with self.lock:
            self.names[query_id] = name or query_id
            self.queries[name or query_id] = {"updated": self.clock()}
            self._write()

    def progress(self, progress: Mapping[str, Any]) -> None:
        name = str(progress.get("name") or progress["id"])
        with self.lock:
            self.names[str(progress["id"])] = name
            self.queries[name] = figures(progress, self.clock())
            self._write()

    def idle(self, query_id: str) -> None:
        """An idle trigger: the query is alive and has nothing to read."""
        with self.lock:
            name = self.names.get(query_id)
            if name is None:
                return  # started before the listener: its first batch names it
            self.queries.setdefault(name, {})["updated"] = self.clock()
            self._write()

    def _write(self) -> None:
        directory = os.path.dirname(self.path) or "."
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".progress-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(self.queries, out, sort_keys=True)
            os.chmod(temporary, 0o644)  # read by root's kafkaform-process-metrics
            os.replace(temporary, self.path)
        except BaseException:
            os.unlink(temporary)
            raise


def listen(spark: Any, path: str) -> ProgressFile:
    """Register a listener on ``spark`` that keeps ``path`` up to date; an unwritable file is
    reported on stderr once and never stops the job."""
    from pyspark.sql.streaming import StreamingQueryListener

    target = ProgressFile(path)
    failed: list[str] = []

    def guarded(update: Callable[[], None]) -> None:
        try:
            update()
        except OSError as error:
            if not failed:
                failed.append(str(error))
                print(f"kafkaform-pipeline: cannot write the progress file {path}: {error}",
                      flush=True)

    class Listener(StreamingQueryListener):  # type: ignore[misc]  # untyped base
        def onQueryStarted(self, event: Any) -> None:  # Spark's names
            guarded(lambda: target.started(str(event.id), event.name))

        def onQueryProgress(self, event: Any) -> None:
            progress = json.loads(event.progress.json)
            guarded(lambda: target.progress(progress))

        def onQueryIdle(self, event: Any) -> None:
            guarded(lambda: target.idle(str(event.id)))

        def onQueryTerminated(self, event: Any) -> None:
            pass

    spark.streams.addListener(Listener())
    return target
