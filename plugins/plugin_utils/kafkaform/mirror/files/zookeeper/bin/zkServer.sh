#!/usr/bin/env bash
# zkServer.sh {start|start-foreground|stop|restart|status|version|print-cmd} [cfg]: the everyday
# commands of the release's script, without its JMX and cygwin options:
# https://github.com/apache/zookeeper/blob/master/bin/zkServer.sh
# kafkaform's services run the JVM directly (roles/zookeeper/templates/etc/systemd/system/).
# shellcheck source=zkEnv.sh source-path=SCRIPTDIR
. "$(dirname "$0")/zkEnv.sh"

# A second argument names the config: a file of ZOOCFGDIR, or a path when it has a slash.
cfg=$ZOOCFGDIR/$ZOOCFG
case ${2:-} in
  '') ;;
  */*) cfg=$2 ;;
  *) cfg=$ZOOCFGDIR/$2 ;;
esac

# cfg_value KEY [FILE]: KEY's value in the config (the last one wins, as in java.util.Properties).
cfg_value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*[=:][[:space:]]*//p" "${2:-$cfg}" 2>/dev/null |
    tail -n 1 | sed 's/[[:space:]]*$//'
}

# alive PID: whether PID runs (a zombie, which an init that does not reap leaves, does not).
alive() {
  kill -0 "$1" 2>/dev/null && ! grep -qs '^[0-9]* (.*) Z ' "/proc/$1/stat"
}

# pid_file: the server's pid file, ZOOPIDFILE or zookeeper_server.pid in the config's dataDir.
pid_file() {
  local data
  data=$(cfg_value dataDir)
  pidfile=${ZOOPIDFILE:-${data:+$data/zookeeper_server.pid}}
  [ -n "$pidfile" ] || { echo "no dataDir in $cfg and no ZOOPIDFILE" >&2; exit 1; }
  pid=$(cat "$pidfile" 2>/dev/null)
  [[ $pid =~ ^[0-9]+$ ]] || pid=
}

# The JVM that start-foreground execs and start runs in the background.
# shellcheck disable=SC2206
server=("$JAVA" -Dzookeeper.log.dir="$ZOO_LOG_DIR" $SERVER_JVMFLAGS $JVMFLAGS
  -cp "$CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "$cfg")

start() {
  pid_file
  printf 'Starting zookeeper ... '
  if [ -n "$pid" ] && alive "$pid"; then echo "already running as process $pid."; return 1; fi
  mkdir -p "$ZOO_LOG_DIR" "$(dirname "$pidfile")" || return 1
  nohup "${server[@]}" >"$ZOO_LOG_DIR/zookeeper-${USER:-$(id -un)}-server-$HOSTNAME.out" 2>&1 \
    </dev/null &
  pid=$!
  printf '%s' "$pid" >"$pidfile" || { echo FAILED TO WRITE PID; kill "$pid"; return 1; }
  sleep 1
  if alive "$pid"; then echo STARTED; else echo FAILED TO START; rm -f "$pidfile"; return 1; fi
}

stop() {
  pid_file
  printf 'Stopping zookeeper ... '
  # The release's script says so and exits 0: stopping a stopped server is no error.
  if [ ! -f "$pidfile" ]; then
    echo "no zookeeper to stop (could not find file $pidfile)"
    return
  fi
  if [ -n "$pid" ] && alive "$pid"; then
    kill "$pid" || return 1
    for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then echo "FAILED TO STOP: process $pid still runs after 30 s"; return 1; fi
  fi
  rm -f "$pidfile"
  echo STOPPED
}

# Where clients connect, as the release's script finds it: clientPort, else the `;[address:]port`
# of this member's server.N line (N in dataDir/myid; zoo.cfg or its dynamicConfigFile), else
# secureClientPort over TLS; on clientPortAddress, else localhost.
status() {
  local host port ssl=false myid member answer
  host=$(cfg_value clientPortAddress)
  port=$(cfg_value clientPort)
  if [ -z "$port" ] && myid=$(cat "$(cfg_value dataDir)/myid" 2>/dev/null); then
    member=$(cfg_value "server.$myid")
    member=${member:-$(cfg_value "server.$myid" "$(cfg_value dynamicConfigFile)")}
    case $member in
      *\;*:*) member=${member##*;}; port=${member##*:}; host=${member%:*} ;;
      *\;*) port=${member##*;} ;;
    esac
  fi
  if [ -z "$port" ]; then port=$(cfg_value secureClientPort); ssl=true; fi
  if [ -z "$port" ]; then echo "Unable to find either secure or unsecure client port."; return 1; fi
  echo "Client port found: $port. Client address: ${host:=localhost}. Client SSL: $ssl."
  # shellcheck disable=SC2086
  answer=$("$JAVA" -cp "$CLASSPATH" $CLIENT_JVMFLAGS $JVMFLAGS \
    org.apache.zookeeper.client.FourLetterWordMain "$host" "$port" srvr "$ssl" 2>/dev/null |
    grep '^Mode: ')
  if [ -z "$answer" ]; then
    [ "$ssl" = false ] || echo "TLS to secureClientPort failed: its settings go in CLIENT_JVMFLAGS."
    echo "Error contacting service. It is probably not running."
    return 1
  fi
  echo "$answer"
}

using_config() {
  echo "Using config: $cfg" >&2
  [ -r "$cfg" ] || { echo "Cannot read $cfg" >&2; exit 1; }
}

case ${1:-} in
  start|stop|status) using_config; "$1" ;;
  restart) using_config; stop; start ;;
  start-foreground) exec "${server[@]}" ;;
  print-cmd) printf '%q ' "${server[@]}"; echo ;;
  version) "$JAVA" -cp "$CLASSPATH" org.apache.zookeeper.version.VersionInfoMain 2>/dev/null ;;
  *)
    echo "Usage: $0 {start|start-foreground|stop|restart|status|version|print-cmd} [cfg]" >&2
    exit 2 ;;
esac
