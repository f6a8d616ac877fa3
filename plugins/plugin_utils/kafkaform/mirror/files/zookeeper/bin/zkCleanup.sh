#!/usr/bin/env bash
# zkCleanup.sh -n COUNT: purge old snapshots/logs of the dirs named in zoo.cfg (count >= 3).
. "$(dirname "$0")/zkEnv.sh"
cfg=$ZOOCFGDIR/$ZOOCFG
data=$(sed -n 's/^dataDir=//p' "$cfg")
logs=$(sed -n 's/^dataLogDir=//p' "$cfg")
exec "$JAVA" -cp "$CLASSPATH" org.apache.zookeeper.server.PurgeTxnLog "${logs:-$data}" "$data" "$@"
