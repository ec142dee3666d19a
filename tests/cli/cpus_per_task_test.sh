#!/usr/bin/env bash
# Integration test of `tfctl start --cpus-per-task`: two real tfd daemons on
# loopback, each pinned to its own CPU of tfctl's allowed set (in start
# order) and so running one compute thread; a request for more CPUs than
# there are is a usage error naming both counts. Output is TAP, for meson.
#
#   TFCTL=build/cli/tfctl TFD=build/daemon/tfd SRC_ROOT=. bash tests/cli/cpus_per_task_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
TFD=${TFD:?set TFD to the tfd binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
source "$SRC/scripts/cluster-lib.sh"
work=$(mktemp -d)
cluster_spec ps=1 worker=1
cleanup() {
  "$TFCTL" stop --cluster "$spec" --run-dir "$work" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

source "$SRC/tests/cli/tfctl_tap.sh"

tfctl() {
  out=$("$TFCTL" "$@" --cluster "$spec" --run-dir "$work" --timeout 10 2>&1 </dev/null)
  rc=$?
}
# The CPUs this shell may use (and so tfctl), one per line, from the
# kernel's list ("0-3,6").
allowed_cpus() {
  local part
  for part in $(sed -nE 's/^Cpus_allowed_list:\s*//p' /proc/self/status | tr ',' ' '); do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}
mapfile -t cpus < <(allowed_cpus)
n=${#cpus[@]}

# Too many CPUs asked for: nothing starts, and the error says why.
tfctl start --tfd "$TFD" --cpus-per-task "$n"
check "asking each of 2 tasks for all $n CPUs is a usage error" 2 \
  "^error: INVALID_ARGUMENT: --cpus-per-task $n needs $((2 * n)) CPUs for the 2 tasks on this host \\($n each\\), but this process may use only $n"
if ! ls "$work"/*.pid >/dev/null 2>&1; then pass "and starts no task"; else fail "and starts no task"; fi

if (( n < 2 )); then
  why="only $n CPU allowed to this test; pinning 2 tasks needs 2"
  for name in "start pins 2 tasks, a CPU each" "ps 0 runs on allowed CPU 0" \
              "worker 0 runs on allowed CPU 1" "each reports one compute thread" "stop stops both"; do
    skip "$name" "$why"
  done
else
  tfctl start --tfd "$TFD" --cpus-per-task 1
  check "start pins 2 tasks, a CPU each" 0 "^started /job:ps/replica:0/task:0 pid [0-9]+ .* on CPUs ${cpus[0]}\$"
  for k in 0 1; do
    job=$([[ $k -eq 0 ]] && echo ps || echo worker)
    pid=$(cat "$work/$job-0.pid" 2>/dev/null)
    list=$(sed -nE 's/^Cpus_allowed_list:\s*//p' "/proc/$pid/status" 2>/dev/null)
    if [[ -n $pid && $list == "${cpus[$k]}" ]]; then pass "$job 0 runs on allowed CPU $k (${cpus[$k]})"
    else out="pid '$pid' Cpus_allowed_list '$list'"; fail "$job 0 runs on allowed CPU $k (${cpus[$k]})"; fi
  done
  if grep -q ', 1 compute threads' "$work/ps-0.log" && grep -q ', 1 compute threads' "$work/worker-0.log"
  then pass "each reports one compute thread"
  else out=$(cat "$work"/*.log); fail "each reports one compute thread"; fi
  tfctl stop
  check "stop stops both" 0 "^stopped /job:worker/replica:0/task:0"
fi

tap_done
