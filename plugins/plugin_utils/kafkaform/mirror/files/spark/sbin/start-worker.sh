#!/usr/bin/env bash
# Minimal start-worker.sh: start-worker.sh spark://HOST:PORT [worker options]
export SPARK_HOME=${SPARK_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SPARK_HOME/sbin/spark-config.sh"
. "$SPARK_HOME/bin/load-spark-env.sh"
if [ $# -lt 1 ]; then echo "Usage: $0 spark://HOST:PORT [options]" >&2; exit 1; fi
exec "$SPARK_HOME/sbin/spark-daemon.sh" start org.apache.spark.deploy.worker.Worker 1 \
  --webui-port "${SPARK_WORKER_WEBUI_PORT:-8081}" "$@"
