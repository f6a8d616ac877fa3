"""The event generator: keyed JSON events into the pipeline's topic, at a bounded count and rate.

    kafkaform-pipeline generate --count 20000 --rate 2000 [--malformed 4] [--entities 100]

Kafka's own producer writes them (Spark's Kafka sink, in local mode): idempotent, acks=all (CL-01,
CL-03), keyed by entity (CL-07). Records go out in chunks of about one second each; a chunk that
fails stops the run with an error, so what is reported as sent was acknowledged by every in-sync
replica. Local mode never retries a task, so no chunk is sent twice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from typing import Any

from kafkaform.pipeline.config import PipelineConfig
from kafkaform.pipeline.events import EVENT_TYPES, MALFORMED_VALUES

#: Upper bounds: the generator is a test tool, never a load that could swamp a cluster.
MAX_COUNT = 10_000_000
MAX_RATE = 200_000


def producer_options(config: PipelineConfig) -> dict[str, str]:
    return {
        # SASL_SSL as the generator's own user (SE-03); a sink has no consumer group.
        **{k: v for k, v in config.kafka_options("generator").items() if k.startswith("kafka.")},
        "kafka.bootstrap.servers": config.bootstrap_servers,
        "topic": config.topic,
        "kafka.enable.idempotence": "true",
        "kafka.acks": "all",
        "kafka.max.in.flight.requests.per.connection": "5",
        "kafka.linger.ms": "5",
        "kafka.compression.type": "lz4",
    }


def event_frame(spark: Any, run_id: str, first: int, count: int, entities: int) -> Any:
    """``count`` events numbered from ``first``: (key, value) rows for the Kafka sink."""
    from pyspark.sql import functions as F

    types = F.array(*[F.lit(t) for t in EVENT_TYPES])
    entity = F.concat(F.lit("entity-"), (F.col("id") % entities).cast("string"))
    value = F.to_json(F.struct(
        F.concat(F.lit(f"{run_id}-"), F.col("id").cast("string")).alias("event_id"),
        entity.alias("entity_id"),
        F.element_at(types, (F.col("id") % len(EVENT_TYPES) + 1).cast("int")).alias("event_type"),
        F.round((F.col("id") * 7919 % 100000) / 100.0, 2).alias("amount"),
        F.date_format(F.current_timestamp(), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX").alias("event_time"),
    ))
    return spark.range(first, first + count).select(entity.alias("key"), value.alias("value"))


def malformed_frame(spark: Any, count: int) -> Any:
    rows = [("entity-0", MALFORMED_VALUES[i % len(MALFORMED_VALUES)]) for i in range(count)]
    return spark.createDataFrame(rows, "key STRING, value STRING")


def send(frame: Any, options: dict[str, str]) -> None:
    writer = frame.write.format("kafka")
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--count", type=int, required=True, help=f"events, 1..{MAX_COUNT}")
    parser.add_argument("--rate", type=int, default=1000, help=f"events/s, 1..{MAX_RATE}")
    parser.add_argument("--malformed", type=int, default=0,
                        help="also send this many records that are not valid events")
    parser.add_argument("--entities", type=int, default=100, help="distinct keys")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.count <= MAX_COUNT or not 1 <= args.rate <= MAX_RATE:
        parser.error(f"--count must be 1..{MAX_COUNT} and --rate 1..{MAX_RATE}")
    if args.malformed < 0 or args.entities < 1:
        parser.error("--malformed must be >= 0 and --entities >= 1")
    config = PipelineConfig.load(args.config)

    from kafkaform.pipeline.session import local_session

    spark = local_session("kafkaform-generate")
    options = producer_options(config)
    run_id = uuid.uuid4().hex[:12]
    started = time.monotonic()
    sent = 0
    if args.malformed:
        send(malformed_frame(spark, args.malformed), options)
    while sent < args.count:
        chunk = min(args.rate, args.count - sent)
        send(event_frame(spark, run_id, sent, chunk, args.entities), options)
        sent += chunk
        # Hold the rate: the next chunk leaves no earlier than its share of the schedule.
        ahead = started + sent / args.rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        print(f"generate: {sent}/{args.count} events sent", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started
    summary = {"topic": config.topic, "run_id": run_id, "events": sent,
               "malformed": args.malformed, "seconds": round(elapsed, 2),
               "rate": round(sent / elapsed, 1) if elapsed else None}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"generate: {sent} events and {args.malformed} malformed records to {config.topic} "
              f"in {elapsed:.1f} s ({summary['rate']}/s); all acknowledged (acks=all, idempotent)")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
