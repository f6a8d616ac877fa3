"""The Kafka-to-Parquet pipeline that runs on the Spark nodes.

These modules are copied to the driver host by the spark_pipeline role and run there under
``spark-submit``; they import only the standard library, pyspark and each other, never the rest of
kafkaform (which the nodes do not have).

+ :mod:`.job`: the Structured Streaming job (the long-running service);
+ :mod:`.generate`: the event generator (idempotent producer, acks=all, bounded count and rate);
+ :mod:`.audit`: the exactly-once audit and the end-to-end latency report;
+ :mod:`.config`, :mod:`.checkpoint`, :mod:`.events`: their shared, Spark-free parts.
"""
