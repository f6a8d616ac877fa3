#!/usr/bin/env bash
# Minimal zkServer.sh: start-foreground [zoo.cfg] (services run the JVM directly).
. "$(dirname "$0")/zkEnv.sh"
case "${1:-}" in
  start-foreground)
    cfg=${2:-$ZOOCFGDIR/$ZOOCFG}
    # shellcheck disable=SC2086
    exec "$JAVA" -Dzookeeper.log.dir="$ZOO_LOG_DIR" $SERVER_JVMFLAGS $JVMFLAGS \
      -cp "$CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg" ;;
  *)
    echo "Usage: $0 start-foreground [zoo.cfg]" >&2; exit 2 ;;
esac
