"""The streaming job: Kafka to Parquet, exactly once, malformed records to quarantine.

Run by the ``kafkaform-pipeline`` systemd unit on the driver host (client mode, submitted to the
standalone master)::

    spark-submit .../kafkaform/pipeline/job.py --config /etc/kafkaform-pipeline/pipeline.properties

Two queries read the topic, each with its own checkpoint and Parquet sink: ``events`` (parsed,
partitioned by event_date) and ``quarantine`` (everything else, with topic, partition, offset and
the reason). A file sink commits each micro-batch through its ``_spark_metadata`` log and the
checkpoint records the offsets it covers, so a stop or crash at any point replays the batch without
landing a record twice (SP-02, CL-12). Nothing is ever dropped: a record is either an event or in
quarantine, and the audit checks exactly that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kafkaform.pipeline.config import PipelineConfig
from kafkaform.pipeline.events import CORRUPT_COLUMN, REQUIRED_FIELDS, SCHEMA_DDL

#: How long a broker may hold a fetch that finds no new record (Kafka's default: 500 ms). Spark
#: reuses a consumer per partition across micro-batches; the fetch the consumer sent ahead at the
#: end of one task must return before the next task's seek can fetch, so each task of a batch
#: waited the whole default on a quiet topic: 2.5 s of a 3 s batch of 1,500 records, mostly
#: idle (BENCHMARKS.md). A consumer polls only inside a task, so a short wait costs nothing
#: between batches.
FETCH_MAX_WAIT_MS = 50


def kafka_source(spark: Any, config: PipelineConfig) -> Any:
    """The topic as a stream: from the earliest offset, failing (never skipping) on lost data."""
    return (
        spark.readStream.format("kafka").options(**reader_options(config))
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


def events(classified: Any) -> Any:
    from pyspark.sql import functions as F

    return classified.where(F.col("reason").isNull()).select(
        "topic", "partition", "offset", "kafka_timestamp",
        "event.event_id", "event.entity_id", "event.event_type", "event.amount",
        "event.event_time", F.to_date("event.event_time").alias("event_date"),  # UTC session
    )


def quarantine(classified: Any) -> Any:
    from pyspark.sql import functions as F

    return classified.where(F.col("reason").isNotNull()).select(
        "topic", "partition", "offset", "kafka_timestamp", "key", "raw", "reason",
        F.current_timestamp().alias("quarantined_at"),
    )


def start(spark: Any, config: PipelineConfig, available_now: bool = False) -> list[Any]:
    """Start both queries; each writes Parquet with its own checkpoint.

    ``available_now`` processes what the topic holds when the queries start, in batches of at
    most ``max_offsets_per_trigger``, and then stops them (a backfill, or a benchmark run).
    """
    classified = classify(kafka_source(spark, config))
    outputs: tuple[tuple[str, Any, str, list[str]], ...] = (
        ("events", events(classified), config.events_dir, ["event_date"]),
        ("quarantine", quarantine(classified), config.quarantine_dir, []),
    )
    queries = []
    for name, frame, path, partitions in outputs:
        writer = (
            frame.writeStream.queryName(name).format("parquet").outputMode("append")
            .option("path", path).option("checkpointLocation", config.checkpoint_dir(name))
        )
        writer = (writer.trigger(availableNow=True) if available_now
                  else writer.trigger(processingTime=config.trigger_interval))
        if partitions:
            writer = writer.partitionBy(*partitions)
        queries.append(writer.start())
    record_release(spark, config)
    return queries


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
    """Both queries over what the topic holds now, then stopped; their ``progress_summary``."""
    queries = start(spark, config, available_now=True)
    for query in queries:
        query.awaitTermination()
    return progress_summary([json.loads(p.json) if hasattr(p, "json") else dict(p)
                             for q in queries for p in q.recentProgress])


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
    # Either query failing ends the application with an error; systemd starts it again and both
    # resume from their checkpoints.
    spark.streams.awaitAnyTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
