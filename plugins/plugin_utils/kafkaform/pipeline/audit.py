"""The exactly-once audit, and the end-to-end latency report.

    kafkaform-pipeline audit [--wait 120] [--expect N] [--json]
    kafkaform-pipeline latency --since-ms EPOCH_MS [--json]

The audit takes the range the pipeline has consumed (per partition, the end offsets of the newest
committed micro-batch, read from the query's checkpoint) and checks that every
(topic, partition, offset) Kafka holds in that range appears exactly once across the two outputs,
events and quarantine. It prints expected, found, missing, duplicated and unexpected counts and
exits 1 on any mismatch (or when ``--expect`` is not the number of records in the range), 2 when it
cannot run. ``--wait`` first waits until the pipeline has consumed everything in the topic.
The outputs are read as readers see them: the batches landed whole (kafkaform.pipeline.sinks).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from kafkaform.pipeline.checkpoint import (
    Offsets,
    caught_up,
    committed_end_offsets,
    common_range,
)
from kafkaform.pipeline.config import QUERY, PipelineConfig, checkpoints_dir
from kafkaform.pipeline.legacy_sinks import FLOORS_FILE
from kafkaform.pipeline.sinks import read_output


def consumed_range(config: PipelineConfig) -> Offsets:
    """What the query has landed; before its first batch on outputs carried over from the
    two-query job, what that job had landed in both."""
    ends = committed_end_offsets(Path(config.checkpoint_dir(QUERY)), config.topic)
    floors = Path(checkpoints_dir(config.data_dir), FLOORS_FILE)
    if ends or not floors.is_file():
        return ends
    carried = json.loads(floors.read_text(encoding="utf-8"))
    return common_range([{int(p): int(o) for p, o in f.items()} for f in carried.values()])


def wait_until_caught_up(spark: Any, config: PipelineConfig, timeout: float) -> Offsets:
    """The consumed range once it reaches the topic's latest offsets; an error after timeout."""
    from kafkaform.pipeline.session import topic_offsets

    latest = topic_offsets(spark, config, "latest")
    deadline = time.monotonic() + timeout
    while True:
        consumed = consumed_range(config)
        if caught_up(consumed, latest):
            return consumed
        if time.monotonic() > deadline:
            behind = sum(max(0, end - consumed.get(p, 0)) for p, end in latest.items())
            raise TimeoutError(f"the pipeline is still {behind} records behind {config.topic} "
                               f"after {timeout:.0f} s: is kafkaform-pipeline running? "
                               "(systemctl status kafkaform-pipeline; journalctl -u it)")
        time.sleep(2)


def sink(spark: Any, path: str, name: str) -> Any:
    """(topic, partition, offset, sink) of an output; empty before its first landed batch."""
    from pyspark.sql import functions as F

    rows = read_output(spark, path, {"topic": "STRING", "partition": "INT", "offset": "BIGINT"})
    return rows.withColumn("sink", F.lit(name))


def audit(spark: Any, config: PipelineConfig, consumed: Offsets) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from kafkaform.pipeline.session import topic_offsets

    earliest = topic_offsets(spark, config, "earliest")
    starts = {p: min(earliest.get(p, 0), end) for p, end in consumed.items()}
    ranges = spark.createDataFrame([(p, starts[p], end) for p, end in consumed.items()],
                                   "partition INT, start LONG, end LONG")
    expected_total = sum(end - starts[p] for p, end in consumed.items())
    if expected_total:
        topic = json.dumps({config.topic: {str(p): o for p, o in starts.items()}})
        until = json.dumps({config.topic: {str(p): o for p, o in consumed.items()}})
        expected = (
            spark.read.format("kafka")
            .options(**config.kafka_options("audit"))
            .option("kafka.bootstrap.servers", config.bootstrap_servers)
            .option("subscribe", config.topic)
            .option("startingOffsets", topic).option("endingOffsets", until)
            .option("kafka.isolation.level", "read_committed")
            .option("failOnDataLoss", "true")
            .load().select("partition", "offset")
            .cache()  # counted, then joined twice: read Kafka once
        )
    else:
        expected = spark.createDataFrame([], "partition INT, offset LONG")
    landed = (
        sink(spark, config.events_dir, "events").unionByName(
            sink(spark, config.quarantine_dir, "quarantine"))
        .where(F.col("topic") == config.topic)
        .join(ranges, "partition")
        .where((F.col("offset") >= F.col("start")) & (F.col("offset") < F.col("end")))
        .cache()  # counted per sink and grouped per offset: read the Parquet once
    )
    copies = landed.groupBy("partition", "offset").agg(F.count("*").alias("copies")).cache()
    by_sink = {r["sink"]: r["count"] for r in landed.groupBy("sink").count().collect()}
    expected_rows = expected.count()
    result = {
        "topic": config.topic,
        "partitions": len(consumed),
        "consumed_range": {str(p): [starts[p], end] for p, end in consumed.items()},
        "expected": expected_rows,
        "found": copies.count(),
        "events": int(by_sink.get("events", 0)),
        "quarantine": int(by_sink.get("quarantine", 0)),
        "missing": expected.join(copies, ["partition", "offset"], "left_anti").count(),
        "duplicated": copies.where(F.col("copies") > 1).count(),
        "unexpected": copies.join(expected, ["partition", "offset"], "left_anti").count(),
    }
    result["exactly_once"] = (
        result["missing"] == 0 and result["duplicated"] == 0 and result["unexpected"] == 0
        and result["found"] == expected_rows
    )
    return result


def latency(spark: Any, config: PipelineConfig, since_ms: int) -> dict[str, Any]:
    """Kafka append time → Parquet file written, for events appended since ``since_ms``."""
    from pyspark.sql import functions as F

    frame = (
        spark.read.parquet(config.events_dir)
        .where(F.col("topic") == config.topic)
        .where(F.col("kafka_timestamp") >= F.timestamp_millis(F.lit(since_ms)))
        .select(((F.unix_millis(F.col("_metadata.file_modification_time"))
                  - F.unix_millis(F.col("kafka_timestamp")))).alias("latency_ms"))
    )
    row = frame.agg(
        F.count("*").alias("records"),
        F.percentile_approx("latency_ms", 0.5, 10000).alias("p50"),
        F.percentile_approx("latency_ms", 0.99, 10000).alias("p99"),
        F.max("latency_ms").alias("max"),
    ).collect()[0]
    return {"topic": config.topic, "since_ms": since_ms, "records": row["records"],
            "p50_ms": row["p50"], "p99_ms": row["p99"], "max_ms": row["max"]}


def print_audit(result: dict[str, Any]) -> None:
    verdict = "exactly once" if result["exactly_once"] else "MISMATCH"
    print(f"audit {result['topic']}: {result['partitions']} partitions, consumed range "
          f"{result['consumed_range']}")
    for key in ("expected", "found", "missing", "duplicated", "unexpected"):
        extra = (f"  (events {result['events']}, quarantine {result['quarantine']})"
                 if key == "found" else "")
        print(f"  {key:<11}{result[key]:>10}{extra}")
    print(f"audit: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("audit", "latency"))
    parser.add_argument("--config", required=True)
    parser.add_argument("--wait", type=float, default=0,
                        help="seconds to wait for the pipeline to consume the whole topic")
    parser.add_argument("--expect", type=int, help="records the consumed range must hold")
    parser.add_argument("--since-ms", type=int, default=0, help="latency: Kafka timestamp floor")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    config = PipelineConfig.load(args.config)

    from kafkaform.pipeline.session import local_session

    spark = local_session(f"kafkaform-{args.command}")
    try:
        if args.command == "latency":
            report = latency(spark, config, args.since_ms)
            print(json.dumps(report) if args.json else
                  f"latency {report['topic']}: {report['records']} events since "
                  f"{report['since_ms']}: p50 {report['p50_ms']} ms, p99 {report['p99_ms']} ms, "
                  f"max {report['max_ms']} ms")
            return 0
        try:
            consumed = (wait_until_caught_up(spark, config, args.wait) if args.wait
                        else consumed_range(config))
        except TimeoutError as error:
            print(f"audit: {error}", file=sys.stderr)
            return 2
        result = audit(spark, config, consumed)
        if args.expect is not None:
            result["expected_by_caller"] = args.expect
            result["exactly_once"] = result["exactly_once"] and result["expected"] == args.expect
        if args.json:
            print(json.dumps(result, sort_keys=True))
        else:
            print_audit(result)
            if args.expect is not None and result["expected"] != args.expect:
                print(f"audit: the consumed range holds {result['expected']} records, "
                      f"not the {args.expect} expected")
        return 0 if result["exactly_once"] else 1
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
