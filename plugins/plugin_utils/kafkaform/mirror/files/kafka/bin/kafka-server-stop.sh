#!/usr/bin/env bash
# Like the release's script: SIGTERM every kafka.Kafka JVM on this host.
pids=$(pgrep -f 'java.*kafka\.Kafka' || true)
if [ -z "$pids" ]; then echo "No kafka server to stop"; exit 1; fi
# shellcheck disable=SC2086
kill -s TERM $pids
