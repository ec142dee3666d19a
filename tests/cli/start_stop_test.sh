#!/usr/bin/env bash
# Integration tests of `tfctl start` and `tfctl stop` with real tfd daemons on
# loopback: pid files that outlive their process, a pid the system gave to
# another program since, and a daemon that exited under a parent that never
# reaps it (a container whose pid 1 does not) must each be told apart from a
# running task. Output is TAP, for meson.
#
#   TFCTL=build/cli/tfctl TFD=build/daemon/tfd SRC_ROOT=. bash tests/cli/start_stop_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
TFD=${TFD:?set TFD to the tfd binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
source "$SRC/scripts/cluster-lib.sh"
work=$(mktemp -d)
cluster_spec ps=1
others=()  # processes this script started besides the daemons
cleanup() {
  "$TFCTL" stop --cluster "$spec" --run-dir "$work" >/dev/null 2>&1
  [[ ${#others[@]} -eq 0 ]] || kill "${others[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

source "$SRC/tests/cli/tfctl_tap.sh"

# tfctl ARGS...: runs the binary; sets $out (stdout and stderr) and $rc.
tfctl() {
  out=$("$TFCTL" "$@" --cluster "$spec" --run-dir "$work" --timeout 5 2>&1 </dev/null)
  rc=$?
}
# alive PID: the process exists and is not a zombie (the state after the
# command name in /proc/PID/stat).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $(sed -E 's/.*\) (.).*/\1/' <<<"$stat") != Z ]]
}
pid_file="$work/ps-0.pid"

tfctl start --tfd "$TFD"
check "start starts the task" 0 '^started /job:ps/replica:0/task:0 pid [0-9]+'
first=$(cat "$pid_file")
tfctl start --tfd "$TFD"
check "a second start finds it running" 0 "already running \\(pid $first\\)"
tfctl stop
check "stop stops it" 0 "^stopped /job:ps/replica:0/task:0 \\(pid $first\\)"
if [[ ! -e $pid_file ]] && ! alive "$first"; then pass "its pid file and process are gone"
else fail "its pid file and process are gone"; fi
tfctl stop
check "a second stop finds nothing to stop" 0 'not running'

# A pid file left behind (a reboot, a kill -9) whose pid now names another
# program: start must not take it for the task, stop must not signal it.
sleep 300 &
stranger=$!
others+=("$stranger")
echo "$stranger" >"$pid_file"
tfctl stop
check "stop ignores a pid file naming another program" 0 'not running'
if alive "$stranger"; then pass "and leaves that program running"; else fail "and leaves that program running"; fi
echo "$stranger" >"$pid_file"
tfctl start --tfd "$TFD"
check "start starts the task over such a pid file" 0 '^started /job:ps'
tfctl stop
check "and stop stops what it started" 0 '^stopped /job:ps'
if alive "$stranger"; then pass "the other program still runs"; else fail "the other program still runs"; fi

# A tfd whose parent never reaps it: after SIGTERM it stays a zombie, which
# kill(pid, 0) still finds. The parent is a shell that starts the tfd and
# becomes a sleep, which never waits for it. Twice, since the first stop could
# hide what a second one meets.
for round in 1 2; do
  rm -f "$pid_file" "$work/ps-0.log"
  bash -c '"$0" --cluster "$1" --job ps --task 0 >"$2" 2>&1 </dev/null & echo $! >"$3"; exec sleep 300' \
    "$TFD" "$spec" "$work/ps-0.log" "$pid_file" &
  parent=$!
  others+=("$parent")
  for _ in $(seq 1 100); do grep -qs 'listening on' "$work/ps-0.log" && break; sleep 0.1; done
  daemon=$(cat "$pid_file")
  tfctl start --tfd "$TFD"
  check "round $round: start finds the daemon of a parent that never reaps" 0 "already running \\(pid $daemon\\)"
  tfctl stop
  check "round $round: stop sees it exit though nothing reaps it" 0 "^stopped /job:ps/replica:0/task:0 \\(pid $daemon\\)"
  kill "$parent" 2>/dev/null
  wait "$parent" 2>/dev/null
done

tap_done
