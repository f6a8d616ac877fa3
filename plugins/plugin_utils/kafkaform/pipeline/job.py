"""The streaming job: Kafka to Parquet, exactly once, malformed records to quarantine.

Run by the ``kafkaform-pipeline`` systemd unit on the driver host (client mode, submitted to the
standalone master)::

    spark-submit .../kafkaform/pipeline/job.py --config /etc/kafkaform-pipeline/pipeline.properties

One streaming query reads the topic and writes each micro-batch, read and parsed once, to two
Parquet outputs: ``events`` (parsed, partitioned by event_date) and ``quarantine`` (everything
else, with topic, partition, offset and the reason). The checkpoint records each batch's offsets
before it runs, and each output lands a batch whole and only once (kafkaform.pipeline.sinks), so a
stop or crash at any point replays the batch without landing a record twice (SP-02, CL-12).
Nothing is ever dropped: a record is either an event or in quarantine, and the audit checks
exactly that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kafkaform.pipeline import legacy_sinks
from kafkaform.pipeline.checkpoint import Offsets
from kafkaform.pipeline.config import QUERY, PipelineConfig, checkpoints_dir
from kafkaform.pipeline.events import CORRUPT_COLUMN, REQUIRED_FIELDS, SCHEMA_DDL
from kafkaform.pipeline.sinks import BatchLanding, Output, landed_batches

#: How long a broker may hold a fetch that finds no new record (Kafka's default: 500 ms). Spark
#: reuses a consumer per partition across micro-batches; the fetch the consumer sent ahead at the
#: end of one task must return before the next task's seek can fetch, so each task of a batch
#: waited the whole default on a quiet topic: 2.5 s of a 3 s batch of 1,500 records, mostly
#: idle (BENCHMARKS.md). A consumer polls only inside a task, so a short wait costs nothing
#: between batches.
FETCH_MAX_WAIT_MS = 50


def kafka_source(spark: Any, config: PipelineConfig, starting: dict[int, int] | None = None) -> Any:
    """The topic as a stream, failing (never skipping) on lost data. A new checkpoint starts at
    the earliest offset, or at ``starting`` (partition -> offset) when given."""
    options = reader_options(config)
    if starting:
        options["startingOffsets"] = json.dumps(
            {config.topic: {str(p): o for p, o in sorted(starting.items())}})
    return (
        spark.readStream.format("kafka").options(**options)
        .option("failOnDataLoss", "true")  # offsets gone before they were read stop the job
        .option("maxOffsetsPerTrigger", config.max_offsets_per_trigger)
        .load()
    )


def kafka_batch(spark: Any, config: PipelineConfig) -> Any:
    """Everything the topic holds now, read once as a batch with the stream's client settings
    (the throughput benchmark warms an application with it)."""
    return (spark.read.format("kafka").options(**reader_options(config))
            .option("endingOffsets", "latest").load())


def reader_options(config: PipelineConfig) -> dict[str, str]:
    """How the job's Kafka reader connects and what it reads, stream or batch."""
    return {
        **config.kafka_options("job"),  # SASL_SSL as the job's own user, SE-03
        "kafka.bootstrap.servers": config.bootstrap_servers,  # CL-08: several brokers
        "subscribe": config.topic,
        "startingOffsets": "earliest",  # CL-09, SP-05: a new checkpoint reads it all
        "kafka.isolation.level": "read_committed",  # CL-05
        "kafka.fetch.max.wait.ms": str(FETCH_MAX_WAIT_MS),
    }


def classify(records: Any) -> Any:
    """Kafka records with their parsed event and, for a record that is not one, the reason.

    Each record is parsed once. A parse in a projection would be copied by Spark's optimizer into
    every condition of the filters below (they are pushed under the projection, their columns
    replaced by the expressions that make them), and ``from_json`` runs interpreted, with no
    common subexpression shared: ten parses per record, most of each query's time
    (BENCHMARKS.md). A generator's output is where that pushing stops, so the parse is the one
    element of an exploded array: one row out per record, a null event included.
    """
    from pyspark.sql import functions as F

    text = F.col("value").cast("string")
    event = F.from_json(text, SCHEMA_DDL, {"mode": "PERMISSIVE",
                                           "columnNameOfCorruptRecord": CORRUPT_COLUMN})
    parsed = records.select(
        "topic", "partition", "offset", F.col("timestamp").alias("kafka_timestamp"),
        F.col("key").cast("string").alias("key"), text.alias("raw"),
        F.explode(F.array(event)).alias("event"),
    )
    reason = F.when(F.col("raw").isNull(), F.lit("empty value"))
    reason = reason.when(F.col("event").isNull(), F.lit("not a JSON object"))
    reason = reason.when(F.col(f"event.{CORRUPT_COLUMN}").isNotNull(),
                         F.lit("does not match the event schema"))
    for field in REQUIRED_FIELDS:
        reason = reason.when(F.col(f"event.{field}").isNull(), F.lit(f"missing {field}"))
    reason = reason.when(F.col("key").isNull() | (F.col("key") != F.col("event.entity_id")),
                         F.lit("Kafka key is not the event's entity_id"))
    return parsed.withColumn("reason", reason)


#: Which classified records are events, and which go to quarantine (SQL, on ``reason``).
EVENT = "reason IS NULL"
QUARANTINED = "reason IS NOT NULL"


def events(classified: Any) -> Any:
    from pyspark.sql import functions as F

    return classified.where(EVENT).select(
        "topic", "partition", "offset", "kafka_timestamp",
        "event.event_id", "event.entity_id", "event.event_type", "event.amount",
        "event.event_time", F.to_date("event.event_time").alias("event_date"),  # UTC session
    )


def quarantine(classified: Any) -> Any:
    from pyspark.sql import functions as F

    return classified.where(QUARANTINED).select(
        "topic", "partition", "offset", "kafka_timestamp", "key", "raw", "reason",
        F.current_timestamp().alias("quarantined_at"),
    )


def outputs(config: PipelineConfig, floors: dict[str, Offsets]) -> tuple[Output, ...]:
    """The job's two outputs; ``floors``: what an earlier job already landed in each."""
    return (
        Output("events", config.events_dir, EVENT, events, ("event_date",),
               floors.get("events", {})),
        Output("quarantine", config.quarantine_dir, QUARANTINED, quarantine, (),
               floors.get("quarantine", {})),
    )


def legacy_outputs(config: PipelineConfig) -> list[legacy_sinks.LegacyOutput]:
    """The two-query job's outputs, each with the checkpoint of the query that wrote it."""
    return [legacy_sinks.LegacyOutput(name, Path(path), Path(config.checkpoint_dir(name)))
            for name, path in (("events", config.events_dir),
                               ("quarantine", config.quarantine_dir))]


def has_offsets(checkpoint: str) -> bool:
    offsets = Path(checkpoint, "offsets")
    return offsets.is_dir() and any(p.name.isdigit() for p in offsets.iterdir())


def fresh_start_problem(config: PipelineConfig, floors: dict[str, Offsets]) -> str:
    """Why the query must not start on a new checkpoint: outputs holding batches a job landed
    before would get the topic again from its earliest offset, every record twice."""
    if floors or has_offsets(config.checkpoint_dir(QUERY)):
        return ""
    landed = {path: [b for b in landed_batches(path) if b.isdigit()]
              for path in (config.events_dir, config.quarantine_dir)}
    if not any(landed.values()):
        return ""
    where = ", ".join(f"{path} ({len(b)} batches)" for path, b in landed.items() if b)
    return (f"kafkaform-pipeline: the checkpoint {config.checkpoint_dir(QUERY)} is new, but "
            f"{where} already hold what a job landed: reading {config.topic} again from its "
            "earliest offset would land every record twice. Move the checkpoints aside with "
            f"both outputs (all of {config.data_dir}) to start afresh, or restore the "
            "checkpoint (SP-12).")


def start(spark: Any, config: PipelineConfig, available_now: bool = False) -> Any:
    """Start the query; it writes both outputs from one read of each micro-batch.

    ``available_now`` processes what the topic holds when the query starts, in batches of at
    most ``max_offsets_per_trigger``, and then stops it (a backfill, or a benchmark run).
    """
    floors = legacy_sinks.carry_over(legacy_outputs(config), config.topic,
                                     Path(checkpoints_dir(config.data_dir)))
    problem = fresh_start_problem(config, floors)
    if problem:
        raise SystemExit(problem)
    starting = None
    if floors and not has_offsets(config.checkpoint_dir(QUERY)):
        from kafkaform.pipeline.session import topic_offsets

        partitions = topic_offsets(spark, config, "latest", identity="job")
        starting = legacy_sinks.starting_offsets(floors, partitions)
    writer = (
        classify(kafka_source(spark, config, starting)).writeStream.queryName(QUERY)
        .foreachBatch(BatchLanding(outputs(config, floors)))
        .option("checkpointLocation", config.checkpoint_dir(QUERY))
    )
    writer = (writer.trigger(availableNow=True) if available_now
              else writer.trigger(processingTime=config.trigger_interval))
    query = writer.start()
    record_release(spark, config)
    return query


def record_release(spark: Any, config: PipelineConfig) -> None:
    """Name the release that now writes the checkpoints beside them: before a Spark node changes
    release, the run checks the new one resumes what this one wrote (SP-12)."""
    Path(config.release_file).write_text(f"{spark.version}\n", encoding="utf-8")


def progress_summary(progress: list[dict[str, Any]]) -> dict[str, Any]:
    """Records read and wall time over the micro-batches of all queries (``recentProgress``), and
    where each query's batches spent their time: the sum of each phase of ``durationMs``
    (``addBatch`` reads, parses and writes; ``latestOffset`` asks Kafka for the end; ``walCommit``
    and ``commitOffsets`` write the checkpoint)."""
    from datetime import datetime

    def instant(text: str) -> float:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    batches = [p for p in progress if p.get("numInputRows", 0) > 0]
    if not batches:
        return {"batches": 0, "records": 0, "seconds": 0.0, "phases_ms": {}}
    starts = [instant(p["timestamp"]) for p in batches]
    ends = [instant(p["timestamp"]) + p["durationMs"]["triggerExecution"] / 1000 for p in batches]
    by_query: dict[str, int] = {}
    phases: dict[str, dict[str, int]] = {}
    for p in batches:
        by_query[p["name"]] = by_query.get(p["name"], 0) + int(p["numInputRows"])
        spent = phases.setdefault(p["name"], {})
        for phase, ms in p["durationMs"].items():
            spent[phase] = spent.get(phase, 0) + int(ms)
    return {"batches": len(batches), "records": max(by_query.values()),
            "records_by_query": by_query, "seconds": round(max(ends) - min(starts), 3),
            "phases_ms": phases}


def run_available_now(spark: Any, config: PipelineConfig) -> dict[str, Any]:
    """The query over what the topic holds now, then stopped; its ``progress_summary``."""
    query = start(spark, config, available_now=True)
    query.awaitTermination()
    return progress_summary([json.loads(p.json) if hasattr(p, "json") else dict(p)
                             for p in query.recentProgress])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the role's pipeline.properties")
    parser.add_argument("--available-now", action="store_true",
                        help="process what the topic holds, print a JSON summary, and stop")
    args = parser.parse_args(argv)
    config = PipelineConfig.load(args.config)

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"kafkaform-pipeline-{config.name}").getOrCreate()
    if args.available_now:
        print(json.dumps(run_available_now(spark, config)), flush=True)
        spark.stop()
        return 0
    if config.progress_file:
        from kafkaform.pipeline.progress import listen

        listen(spark, config.progress_file)  # MO-09
    start(spark, config)
    # The query failing ends the application with an error; systemd starts it again and it
    # resumes from its checkpoint.
    spark.streams.awaitAnyTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
