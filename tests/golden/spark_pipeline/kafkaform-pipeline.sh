#!/bin/sh
# Managed by kafkaform (templates/spark_pipeline/kafkaform-pipeline.sh.j2); local changes are overwritten.
# The pipeline's tools, run as spark in local mode beside the streaming job
# (a later --config FILE points one at other settings):
#   kafkaform-pipeline generate --count N [--rate R] [--malformed K]
#   kafkaform-pipeline audit [--wait SECONDS] [--expect N] [--json]
#   kafkaform-pipeline latency --since-ms EPOCH_MS [--json]
set -eu
case "${1:-}" in
  generate) module=generate; shift ;;
  audit|latency) module=audit ;;
  *) echo "usage: kafkaform-pipeline generate|audit|latency [options] (--help for each)" >&2; exit 2 ;;
esac
cd /var/lib/spark
exec runuser -u spark -- env \
  SPARK_CONF_DIR=/etc/spark PYTHONPATH=/opt/kafkaform/pipeline \
  /opt/kafkaform/spark/bin/spark-submit --master 'local[2]' \
  --driver-memory 512m \
  --conf 'spark.driver.defaultJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' \
  /opt/kafkaform/pipeline/kafkaform/pipeline/$module.py --config /etc/kafkaform-pipeline/pipeline.properties "$@"
