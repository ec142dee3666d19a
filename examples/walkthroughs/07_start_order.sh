#!/usr/bin/env bash
# Walkthrough 7: start order does not matter. A run that needs a task that
# is not up yet waits for it and completes once it joins; a task that never
# starts fails the run with UNAVAILABLE naming it at the step's deadline —
# never a hang.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=2 worker=1
start_cluster --job worker   # the ps tasks are not up
w0=$(address worker 0)

# ps task 0 joins 3 s after the run has started waiting for it.
start_ps0_later() {
  sleep 3
  "$TFCTL" start --cluster "$spec" --run-dir "$run_dir" --job ps --task 0 >/dev/null
}
background start_ps0_later
began=$SECONDS
capture "$TFCTL" submit "$here/07_start_order.txt" --target "$w0" --fetch q0 --step-timeout 30
echo "$out"
[ "$status" -eq 0 ] || { echo "FAILED: the run did not complete once ps 0 joined: $err" >&2; exit 1; }
expect "$out" "3"
waited=$((SECONDS - began))
[ "$waited" -ge 2 ] || { echo "FAILED: the run ended after ${waited} s, before ps 0 was up" >&2; exit 1; }
echo "the run waited ${waited} s for /job:ps/task:0 and completed once it joined"

# ps task 1 never starts: the run fails at its 2 s deadline, naming the task.
began=$SECONDS
capture "$TFCTL" submit "$here/07_start_order.txt" --target "$w0" --fetch q1 --step-timeout 2
took=$((SECONDS - began))
echo "$err"
[ "$status" -eq 1 ] || { echo "FAILED: expected exit status 1, got $status" >&2; exit 1; }
expect "$err" "error: UNAVAILABLE"
expect "$err" "/job:ps/replica:0/task:1"
[ "$took" -le 10 ] || { echo "FAILED: the run took ${took} s with a 2 s deadline" >&2; exit 1; }
echo "a task that never starts: UNAVAILABLE after ${took} s"
