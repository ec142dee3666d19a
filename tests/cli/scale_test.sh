#!/usr/bin/env bash
# The CI-sized scale test (issue 39): 16 tasks (2 ps, 14 workers) on loopback
# started and stopped with tfctl, a step that fans out to every task, the
# init barrier, a cluster checkpoint, and one worker stopped with SIGSTOP:
# another worker keeps stepping, and a step that needs the stopped one fails
# within its deadline naming it, whether its session had registered there
# before the stop or not, and the chief's barriers end by their deadlines;
# the cluster's checkpoint and restore leave out the stopped worker, which
# holds nothing, but fail at their deadline naming a stopped ps.
# No timing is asserted. Output is TAP, for meson.
#
#   TFCTL=build/cli/tfctl TFD=build/daemon/tfd SRC_ROOT=. bash tests/cli/scale_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
TFD=${TFD:?set TFD to the tfd binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
source "$SRC/scripts/cluster-lib.sh"
source "$SRC/tests/cli/tfctl_tap.sh"
readonly PS=2 WORKERS=14
work=$(mktemp -d)
cluster_spec ps=$PS worker=$WORKERS
stopped=""     # the pid under SIGSTOP, until SIGCONT
submitter=""   # the background tfctl submit, while it runs
cleanup() {
  [[ -n $stopped ]] && kill -CONT "$stopped" 2>/dev/null
  [[ -n $submitter ]] && kill "$submitter" 2>/dev/null
  "$TFCTL" stop --cluster "$spec" --run-dir "$work/run" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# tfctl ARGS...: runs the binary; sets $out (stdout and stderr) and $rc.
tfctl() {
  out=$("$TFCTL" "$@" 2>&1 </dev/null)
  rc=$?
}
# lines PATTERN: how many lines of $out match the extended regex.
lines() { grep -Ec "$1" <<<"$out"; }
# served N: how many partitions worker N has run for masters so far.
served() {
  "$TFCTL" status --cluster "$spec" --output json 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tasks"]:
    if t["task"] == "/job:worker/replica:0/task:" + sys.argv[1]:
        print(t.get("data_plane", {}).get("steps_served", 0))' "$1"
}
# alive PID: the process exists and is not a zombie (the state after the
# command name in /proc/PID/stat).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $(sed -E 's/.*\) (.).*/\1/' <<<"$stat") != Z ]]
}
# until_true SECONDS CMD...: polls CMD every 0.1 s until it succeeds; false
# when SECONDS pass first.
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# The graph: a NoOp on every task, all of them control inputs of `fan_out`
# on worker 0; a counter on each ps with its initializer and an increment.
graph="$work/scale.txt"
{
  echo "( nodes = ["
  deps=""
  for job in ps worker; do
    n=$PS; [[ $job == worker ]] && n=$WORKERS
    for ((i = 0; i < n; i++)); do
      echo "  ( name = \"noop_${job}_$i\", op = \"NoOp\", device = \"/job:$job/task:$i\" ),"
      deps="$deps${deps:+, }\"^noop_${job}_$i\""
    done
  done
  echo "  ( name = \"fan_out\", op = \"NoOp\", device = \"/job:worker/task:0\", inputs = [$deps] ),"
  int32='(name = "dtype", value = (type = int32))'
  inits=""
  for ((i = 0; i < PS; i++)); do
    d="/job:ps/task:$i"
    echo "  ( name = \"counter_$i\", op = \"VariableV2\", device = \"$d\","
    echo "    attrs = [$int32, (name = \"shape\", value = (shape = (dims = [])))] ),"
    for v in 0 1; do
      echo "  ( name = \"c${v}_$i\", op = \"Const\", device = \"$d\", attrs = [$int32,"
      echo "    (name = \"value\", value = (tensor = (dtype = int32, shape = [], int32Val = [$v])))] ),"
    done
    echo "  ( name = \"init_$i\", op = \"Assign\", device = \"$d\", inputs = [\"counter_$i\", \"c0_$i\"] ),"
    echo "  ( name = \"increment_$i\", op = \"AssignAdd\", device = \"$d\", inputs = [\"counter_$i\", \"c1_$i\"] ),"
    inits="$inits${inits:+, }\"^init_$i\""
  done
  echo "  ( name = \"init\", op = \"NoOp\", device = \"/job:worker/task:0\", inputs = [$inits] )"
  echo "] )"
} >"$graph"
chief=$(address worker 0)
tasks=$((PS + WORKERS))

tfctl start --cluster "$spec" --run-dir "$work/run" --tfd "$TFD" \
  --tfd-flag=--checkpoint-dir="$work/checkpoints" --timeout 60
if [[ $rc -eq 0 && $(lines '^started /job:') -eq $tasks ]]; then pass "start starts all $tasks tasks"
else fail "start starts all $tasks tasks"; fi
tfctl wait cluster --target "$chief" --timeout 60
check "every task answers the chief" 0 'cluster ready'

tfctl submit "$graph" --target "$chief" --run init --timeout 60
check "the chief initializes the counters on both ps" 0 ''
tfctl wait init --target "$(address worker 5)" --timeout 60
check "the init barrier passes on another worker" 0 'variables initialized'

tfctl submit "$graph" --target "$chief" --run fan_out --trace --timeout 60
if [[ $rc -eq 0 && $(lines '^  /job:[a-z]+/replica:0/task:[0-9]+/device:CPU:0$') -eq $tasks ]]; then
  pass "a fan-out step runs a partition on each of the $tasks tasks"
else fail "a fan-out step runs a partition on each of the $tasks tasks"; fi

tfctl checkpoint save --target "$chief" --timeout 60
if [[ $rc -eq 0 && $(lines '^  /job:ps/.*ckpt-0\.tfdckpt \(1 variables') -eq $PS &&
      $(lines '^  /job:.*ckpt-0\.tfdckpt') -eq $tasks ]]; then
  pass "a checkpoint covers every task, a counter on each ps"
else fail "a checkpoint covers every task, a counter on each ps"; fi

# A session that has run fan-out steps, registered on worker 1, meets it
# stopped: its step fails at its deadline, naming worker 1.
"$TFCTL" submit "$graph" --target "$chief" --run fan_out --steps 100000000 --step-timeout 2 \
  --timeout 60 >"$work/submit.out" 2>&1 </dev/null &
submitter=$!
victim=$(cat "$work/run/worker-1.pid")
if until_true 60 test "$(served 1)" -gt 0; then
  kill -STOP "$victim"
  stopped=$victim
  if until_true 30 eval '! alive $submitter'; then
    wait "$submitter"
    rc=$?
    submitter=""
    out=$(cat "$work/submit.out")
    check "a running fan-out fails naming the stopped worker" 1 \
      'DEADLINE_EXCEEDED: .*/job:worker/replica:0/task:1: .*(stopped|answer)'
  else
    out=$(cat "$work/submit.out") rc=running
    fail "a running fan-out fails naming the stopped worker"
  fi
else
  out=$(cat "$work/submit.out") rc=none
  fail "worker 1 serves the fan-out steps before it is stopped"
fi

tfctl submit "$graph" --target "$(address worker 2)" --fetch increment_0 --steps 20 \
  --step-timeout 5 --timeout 60
check "another worker keeps stepping against the ps meanwhile" 0 'increment_0 = int32\[\] 20'
tfctl submit "$graph" --target "$chief" --run fan_out --step-timeout 2 --timeout 60
check "a new fan-out session fails naming the stopped worker" 1 \
  'DEADLINE_EXCEEDED: .*/job:worker/replica:0/task:1: .*(stopped|answer)'
# The chief is connected to the stopped worker (the fan-out): its barriers
# must not wait on that connection past their deadlines.
tfctl wait init --target "$chief" --var counter_0 --timeout 20
check "the init barrier on a ps variable passes meanwhile" 0 'variables initialized'
tfctl wait cluster --target "$chief" --timeout 2
check "waitCluster fails at its deadline naming the stopped worker" 3 \
  'DEADLINE_EXCEEDED: cluster not ready: /job:worker/replica:0/task:1: '

# Worker 1 held nothing to save at the first checkpoint: the cluster's
# checkpoints go on without it, and say so.
w1='/job:worker/replica:0/task:1'
tfctl checkpoint save --target "$chief" --timeout 30
if [[ $rc -eq 0 && $(lines '^  /job:ps/.*ckpt-0\.tfdckpt \(1 variables') -eq $PS &&
      $(lines "^  $w1 +left out: .*(stopped|answer|deadline)") -eq 1 ]]; then
  pass "a checkpoint saves with a worker holding nothing stopped, leaving it out"
else fail "a checkpoint saves with a worker holding nothing stopped, leaving it out"; fi
tfctl checkpoint restore --target "$chief" --timeout 30
if [[ $rc -eq 0 && $(lines '^  /job:ps/.*ckpt-0\.tfdckpt \(1 variables') -eq $PS &&
      $(lines "^  $w1 +left out: ") -eq 1 ]]; then
  pass "a restore passes with a worker holding nothing stopped, leaving it out"
else fail "a restore passes with a worker holding nothing stopped, leaving it out"; fi

kill -CONT "$victim"
stopped=""
tfctl submit "$graph" --target "$chief" --run fan_out --step-timeout 30 --timeout 60
check "after SIGCONT the fan-out step runs again" 0 ''

# A ps holds a counter: stopped, it fails the checkpoint at its deadline,
# named; so does a restore.
ps1=$(cat "$work/run/ps-1.pid")
kill -STOP "$ps1"
stopped=$ps1
tfctl checkpoint save --target "$chief" --timeout 3
check "a checkpoint fails at its deadline naming a stopped ps" 1 \
  'DEADLINE_EXCEEDED: .*/job:ps/replica:0/task:1: '
tfctl checkpoint restore --target "$chief" --timeout 3
check "a restore fails at its deadline naming a stopped ps" 1 \
  'DEADLINE_EXCEEDED: .*/job:ps/replica:0/task:1: '
kill -CONT "$ps1"
stopped=""
tfctl checkpoint save --target "$chief" --timeout 30
check "after SIGCONT the ps saves again" 0 '^  /job:ps/replica:0/task:1 .*ckpt-0\.tfdckpt \(1 variables'

pids=$(cat "$work"/run/*.pid)
tfctl stop --cluster "$spec" --run-dir "$work/run" --timeout 60
left=0
for pid in $pids; do
  if alive "$pid"; then left=$((left + 1)); fi
done
if [[ $rc -eq 0 && $(lines '^stopped /job:') -eq $tasks && $left -eq 0 ]]; then
  pass "stop stops all $tasks tasks"
else fail "stop stops all $tasks tasks ($left still running)"; fi

tap_done
