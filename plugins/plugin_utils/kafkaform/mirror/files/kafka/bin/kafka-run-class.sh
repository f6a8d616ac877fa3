#!/usr/bin/env bash
# Minimal kafka-run-class.sh: what the release's script does for a plain Linux JVM.
# Usage: kafka-run-class.sh [-daemon] [-name NAME] CLASS [ARGS...]
set -e
base_dir=$(cd "$(dirname "$0")/.." && pwd)
CLASSPATH="$base_dir/libs/*${CLASSPATH:+:$CLASSPATH}"
KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:-"@LOGGING@"}
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:-"-Xmx256M"}
LOG_DIR=${LOG_DIR:-"$base_dir/logs"}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
daemon=""
name=""
while [ $# -gt 0 ]; do
  case "$1" in
    -daemon) daemon=1; shift ;;
    -name) name=$2; shift 2 ;;
    *) break ;;
  esac
done
# shellcheck disable=SC2086  # option strings are word-split on purpose, as upstream does
set -- $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS \
  -Dkafka.logs.dir="$LOG_DIR" $KAFKA_OPTS -cp "$CLASSPATH" "$@"
if [ -n "$daemon" ]; then
  mkdir -p "$LOG_DIR"
  nohup "$JAVA" "$@" >"$LOG_DIR/${name:-kafka}.out" 2>&1 </dev/null &
else
  exec "$JAVA" "$@"
fi
