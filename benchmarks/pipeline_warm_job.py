"""The pipeline job's `--available-now` run, in an application that has done the same work once.

Not run on the control node: ``benchmarks/pipeline.py`` copies it to the Spark master and submits
it there, beside the job's own modules::

    spark-submit pipeline_warm_job.py <pipeline.properties> <scratch directory> [runs]

A streaming job that has run for a while has its executors' code compiled, its classes loaded and
a Kafka consumer per partition connected over TLS; a freshly submitted one spends its first
micro-batch on all of that (about 10 s on the lab). To measure what a running job sustains, this
first reads the whole topic once as a batch, classifies it and writes both outputs to the scratch
directory, as a micro-batch would, then runs the job's query over the topic (with its own
checkpoint and outputs, as ``job.py --available-now`` does) ``runs`` times, each on a checkpoint
and outputs of its own, and prints their summaries as JSON (``{"runs": [...]}``).
"""

from __future__ import annotations

import dataclasses
import json
import sys

from kafkaform.pipeline import job
from kafkaform.pipeline.config import PipelineConfig


def main(config_path: str, scratch: str, runs: str = "1") -> int:
    from pyspark.sql import SparkSession

    config = PipelineConfig.load(config_path)
    spark = SparkSession.builder.appName(f"kafkaform-pipeline-{config.name}-warm").getOrCreate()
    records = job.classify(job.kafka_batch(spark, config))
    job.events(records).write.partitionBy("event_date").parquet(f"{scratch}/events")
    job.quarantine(records).write.parquet(f"{scratch}/quarantine")
    summaries = [job.run_available_now(
        spark, dataclasses.replace(config, data_dir=f"{config.data_dir}/run-{run}"))
        for run in range(int(runs))]
    print(json.dumps({"runs": summaries}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
