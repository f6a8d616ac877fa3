#!/usr/bin/env bash
# Minimal start-master.sh (pyspark ships no start scripts): a master via spark-daemon.sh.
export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SPARK_HOME/sbin/spark-config.sh"
. "$SPARK_HOME/bin/load-spark-env.sh"
SPARK_MASTER_PORT=${SPARK_MASTER_PORT:-7077}
SPARK_MASTER_WEBUI_PORT=${SPARK_MASTER_WEBUI_PORT:-8080}
SPARK_MASTER_HOST=${SPARK_MASTER_HOST:-$(hostname -f)}
exec "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.master.Master 1 \
  --host "$SPARK_MASTER_HOST" --port "$SPARK_MASTER_PORT" \
  --webui-port "$SPARK_MASTER_WEBUI_PORT" "$@"
