#!/usr/bin/env bash
# Usage: kafka-server-start.sh [-daemon] server.properties [--override property=value]*
base_dir=$(dirname "$0")
log4j="@LOGGING@"
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-$log4j}
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx1G -Xms1G"}
extra=""
if [ "$1" = "-daemon" ]; then extra="-daemon -name kafkaServer"; shift; fi
# shellcheck disable=SC2086
exec "$base_dir/kafka-run-class.sh" $extra kafka.Kafka "$@"
