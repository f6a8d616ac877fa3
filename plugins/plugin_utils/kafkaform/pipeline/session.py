"""What the generator and the audit share: a local Spark session and Kafka's admin client.

Both run on the driver host in local mode, beside the streaming job, so they never take executor
cores from it. Kafka is reached with the connector's own kafka-clients (on the class path through
spark-defaults.conf), driven over py4j: no second Kafka client to install or keep in step.
"""

from __future__ import annotations

from typing import Any

from kafkaform.pipeline.checkpoint import Offsets
from kafkaform.pipeline.config import PipelineConfig


def local_session(name: str) -> Any:
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]").appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.eventLog.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )


def topic_offsets(spark: Any, config: PipelineConfig, which: str,
                  identity: str = "audit") -> Offsets:
    """``earliest`` or ``latest`` (read-committed: the last stable offset) offset of every
    partition of the pipeline's topic, from Kafka's Admin API, as one of the pipeline's users
    (the audit's unless told)."""
    topic = config.topic
    jvm = spark.sparkContext._jvm
    admin_pkg = jvm.org.apache.kafka.clients.admin
    props = jvm.java.util.Properties()
    for key, value in config.kafka_client(identity).items():
        props.put(key, value)
    props.put("bootstrap.servers", config.bootstrap_servers)
    props.put("request.timeout.ms", "15000")
    admin = admin_pkg.Admin.create(props)
    try:
        topics = jvm.java.util.Collections.singletonList(topic)
        description = admin.describeTopics(topics).allTopicNames().get().get(topic)
        spec = admin_pkg.OffsetSpec.earliest() if which == "earliest" else \
            admin_pkg.OffsetSpec.latest()
        request = jvm.java.util.HashMap()
        for info in description.partitions():
            request.put(jvm.org.apache.kafka.common.TopicPartition(topic, info.partition()), spec)
        options = admin_pkg.ListOffsetsOptions(
            jvm.org.apache.kafka.common.IsolationLevel.READ_COMMITTED)
        answer = admin.listOffsets(request, options).all().get()
        return {int(tp.partition()): int(answer.get(tp).offset()) for tp in answer.keySet()}
    finally:
        admin.close()
