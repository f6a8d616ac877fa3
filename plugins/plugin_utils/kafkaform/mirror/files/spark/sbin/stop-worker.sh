#!/usr/bin/env bash
export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
exec "$SPARK_HOME/sbin/spark-daemon.sh" stop org.apache.spark.deploy.worker.Worker 1
