#!/usr/bin/env bash
# Integration tests of `tfctl start` and `tfctl stop` with real tfd daemons on
# loopback: pid files that outlive their process, a pid the system gave to
# another program since, and a daemon that exited under a parent that never
# reaps it (a container whose pid 1 does not) must each be told apart from a
# running task, as must a pid file copied from another cluster's run
# directory. Start must fail, saying why, when its tfd exits or another
# process serves the task's address, and must leave no daemon behind when it
# cannot write the pid file; stop's failure is an error on stderr; timeouts
# and task indexes out of range are usage errors. Output is TAP, for meson.
#
#   TFCTL=build/cli/tfctl TFD=build/daemon/tfd SRC_ROOT=. bash tests/cli/start_stop_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
TFD=${TFD:?set TFD to the tfd binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
source "$SRC/scripts/cluster-lib.sh"
work=$(mktemp -d)
cluster_spec ps=1
port=$(address ps 0) port=${port##*:}
# Clusters of their own: the same address twice, one whose pid file cannot
# be written, one whose run directory gets this cluster's pid file.
dup_port=$(free_port) pd_port=$(free_port) b_port=$(free_port)
spec_dup="{\"ps\": [\"127.0.0.1:$dup_port\", \"127.0.0.1:$dup_port\"]}"
spec_pd="{\"ps\": [\"127.0.0.1:$pd_port\"]}"
spec_b="{\"ps\": [\"127.0.0.1:$b_port\"]}"
others=()  # processes this script started besides the daemons
# on_port PORT: the pids of the processes whose command line names
# 127.0.0.1:PORT: the daemons of a spec over that port.
on_port() { pgrep -f "127\.0\.0\.1:$1([^0-9]|$)"; }
# fresh_start: kills what a failed check before may have left on the main
# task's port and removes its pid file, so that each part below tests only
# its own case (with the fixed tfctl there is nothing to kill).
fresh_start() {
  local pid
  for pid in $(on_port "$port"); do kill -CONT "$pid"; kill -KILL "$pid"; done 2>/dev/null
  for _ in $(seq 1 100); do [[ -z $(on_port "$port") ]] && break; sleep 0.1; done
  rm -f "$pid_file"
}
cleanup() {
  local pid
  for pid in $(on_port "$port") $(on_port "$b_port"); do kill -CONT "$pid" 2>/dev/null; done
  "$TFCTL" stop --cluster "$spec" --run-dir "$work" >/dev/null 2>&1
  "$TFCTL" stop --cluster "$spec_dup" --run-dir "$work/dup" >/dev/null 2>&1
  "$TFCTL" stop --cluster "$spec_b" --run-dir "$work/b" >/dev/null 2>&1
  [[ ${#others[@]} -eq 0 ]] || kill "${others[@]}" 2>/dev/null
  # What a start that failed may have left running with no pid file to find
  # it by (the defects these tests guard against).
  for pid in $(on_port "$port") $(on_port "$dup_port") $(on_port "$pd_port") $(on_port "$b_port"); do
    kill -KILL "$pid" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

source "$SRC/tests/cli/tfctl_tap.sh"

# tfctl ARGS...: runs the binary; sets $out (stdout and stderr) and $rc.
tfctl() {
  out=$("$TFCTL" "$@" --cluster "$spec" --run-dir "$work" --timeout 5 2>&1 </dev/null)
  rc=$?
}
# tfctl_in SPEC DIR ARGS...: as tfctl, for the cluster SPEC in run directory DIR.
tfctl_in() {
  local cluster=$1 dir=$2
  shift 2
  out=$("$TFCTL" "$@" --cluster "$cluster" --run-dir "$dir" --timeout 20 2>&1 </dev/null)
  rc=$?
}
# tfctl_raw ARGS...: runs the binary with exactly ARGS; sets $out (stdout and
# stderr), $stdout, $stderr and $rc.
tfctl_raw() {
  "$TFCTL" "$@" </dev/null >"$work/stdout" 2>"$work/stderr"
  rc=$?
  stdout=$(cat "$work/stdout") stderr=$(cat "$work/stderr")
  out="$stdout"$'\n'"$stderr"
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

# Out-of-range flags are usage errors before anything is launched or
# signalled.
fresh_start
tfctl_raw start --cluster "$spec" --run-dir "$work/flags" --tfd "$TFD" --timeout -1
check "start --timeout -1 is a usage error" 2 'INVALID_ARGUMENT: --timeout must be a positive'
if [[ ! -e $work/flags/ps-0.pid && -z $(on_port "$port") ]]; then pass "and launches nothing"
else fail "and launches nothing"; fi
tfctl_raw start --cluster "$spec" --run-dir "$work/flags" --tfd "$TFD" --timeout 0
check "start --timeout 0 is a usage error" 2 'INVALID_ARGUMENT: --timeout must be a positive'
tfctl_raw start --cluster "$spec" --run-dir "$work/flags" --tfd "$TFD" --task -1
check "start --task -1 is a usage error" 2 'INVALID_ARGUMENT: --task must not be negative'
if [[ ! -e $work/flags/ps-0.pid && -z $(on_port "$port") ]]; then pass "and launches nothing either"
else fail "and launches nothing either"; fi
tfctl start --tfd "$TFD"
check "start a task to stop" 0 '^started /job:ps'
first=$(cat "$pid_file")
tfctl_raw stop --cluster "$spec" --run-dir "$work" --timeout 0
check "stop --timeout 0 is a usage error" 2 'INVALID_ARGUMENT: --timeout must be a positive'
tfctl_raw stop --cluster "$spec" --run-dir "$work" --task -1
check "stop --task -1 is a usage error" 2 'INVALID_ARGUMENT: --task must not be negative'
if alive "$first"; then pass "and neither signals the task"; else fail "and neither signals the task"; fi

# A stop that fails says so on stderr, as `error: CODE: message`.
fresh_start
tfctl start --tfd "$TFD"
check "the task runs" 0 '^started /job:ps'
first=$(cat "$pid_file")
kill -STOP "$first"
tfctl_raw stop --cluster "$spec" --run-dir "$work" --timeout 2
check "stop of a stopped tfd fails with an error on stderr" 1 'did not stop'
if grep -Eq "^error: DEADLINE_EXCEEDED: /job:ps/replica:0/task:0 \(pid $first\) did not stop within 2 s" <<<"$stderr" &&
  [[ $(wc -l <<<"$stderr") -eq 1 ]] && ! grep -q 'did not stop' <<<"$stdout"; then pass "its error is one line on stderr, not stdout"
else fail "its error is one line on stderr, not stdout"; fi
kill -CONT "$first" 2>/dev/null

# A tfd that exits at once fails the start at once, with its status and the
# last line of its log; it leaves no pid file.
fresh_start
tfctl start --tfd "$TFD" --tfd-flag=--bogus-flag
check "start names a tfd's exit and its reason" 1 \
  "^error: UNAVAILABLE: /job:ps/replica:0/task:0 exited with status 2: .*--bogus-flag.*\(log: $work/ps-0.log\)"
if [[ ! -e $pid_file ]]; then pass "and leaves no pid file"; else fail "and leaves no pid file"; fi
tfctl start --tfd "$(type -P true)"
check "a --tfd that exits 0 fails the start too" 1 \
  '^error: UNAVAILABLE: /job:ps/replica:0/task:0 exited with status 0 \(log: '

# The task's address served by another process (this cluster's tfd, from
# another run directory): the tfd started cannot listen, so start fails.
fresh_start
tfctl start --tfd "$TFD"
check "start the task again" 0 '^started /job:ps'
first=$(cat "$pid_file")
tfctl_in "$spec" "$work/other" start --tfd "$TFD"
check "start fails while another tfd serves the address" 1 '^error: UNAVAILABLE: /job:ps/replica:0/task:0 '
if ! grep -q '^started' <<<"$out"; then pass "and does not say started"; else fail "and does not say started"; fi
if [[ ! -e $work/other/ps-0.pid && $(on_port "$port") == "$first" ]]; then
  pass "only the first tfd runs, and no pid file names another"
else fail "only the first tfd runs, and no pid file names another"; fi

# A pid file copied from another cluster's run directory names a live tfd of
# the same task name at another address: not this task.
mkdir -p "$work/b"
cp "$pid_file" "$work/b/"
tfctl_in "$spec_b" "$work/b" stop
check "stop ignores a pid file of another cluster's tfd" 0 'not running'
if alive "$first"; then pass "and leaves that tfd running"; else fail "and leaves that tfd running"; fi
cp "$pid_file" "$work/b/"
tfctl_in "$spec_b" "$work/b" start --tfd "$TFD"
check "start starts the task over such a pid file" 0 "^started /job:ps/replica:0/task:0 pid [0-9]+ on 127.0.0.1:$b_port"
b_pid=$(cat "$work/b/ps-0.pid")
tfctl_in "$spec_b" "$work/b" stop
check "and stop stops what it started" 0 "^stopped /job:ps/replica:0/task:0 \(pid $b_pid\)"
if alive "$first"; then pass "the other cluster's tfd still runs"; else fail "the other cluster's tfd still runs"; fi
tfctl stop
check "which stop stops" 0 "^stopped /job:ps/replica:0/task:0 \(pid $first\)"

# One address twice in the spec: only one of its tasks could listen there,
# so the spec is refused before anything starts (a usage error).
tfctl_in "$spec_dup" "$work/dup" start --tfd "$TFD"
check "start refuses a spec with one address twice" 2 \
  "^error: INVALID_ARGUMENT: --cluster: .*task 1: address '127.0.0.1:$dup_port' is also job 'ps' task 0's"
if ! grep -q '^started' <<<"$out"; then pass "and starts nothing"; else fail "and starts nothing"; fi
tfctl_in "$spec_dup" "$work/dup" stop
check "stop refuses it too" 2 '^error: INVALID_ARGUMENT: --cluster: '
if [[ -z $(on_port "$dup_port") ]]; then pass "and no tfd of that spec is left"
else fail "and no tfd of that spec is left"; fi

# A pid file that cannot be written (a directory in its place): start fails
# naming it, and stops the tfd it launched, which nothing could find.
mkdir -p "$work/pd/ps-0.pid"
tfctl_in "$spec_pd" "$work/pd" start --tfd "$TFD"
check "start fails when it cannot write the pid file" 1 \
  "^error: INVALID_ARGUMENT: cannot write pid file '$work/pd/ps-0.pid': Is a directory"
if [[ -z $(on_port "$pd_port") ]]; then pass "and leaves no tfd running"; else fail "and leaves no tfd running"; fi

tap_done
