#!/usr/bin/env bash
. "$(dirname "$0")/zkEnv.sh"
# shellcheck disable=SC2086
exec "$JAVA" $CLIENT_JVMFLAGS $JVMFLAGS -cp "$CLASSPATH" org.apache.zookeeper.ZooKeeperMain "$@"
