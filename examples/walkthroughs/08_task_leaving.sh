#!/usr/bin/env bash
# Walkthrough 8: a task leaving. When the task an op is placed on dies
# (kill -9, no goodbye), the run fails with UNAVAILABLE naming it instead of
# hanging; once the task is started again, the same run succeeds — the
# master registers the graph with the new process itself.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=1 worker=1
start_cluster
w0=$(address worker 0)
submit() { capture "$TFCTL" submit "$here/08_task_leaving.txt" --target "$w0" --fetch q --step-timeout 3; }

submit
[ "$status" -eq 0 ] || { echo "FAILED: the first run failed: $err" >&2; exit 1; }
expect "$out" "10"

ps_pid=$(cat "$run_dir/ps-0.pid")
kill -9 "$ps_pid"
# Gone (or a zombie not yet reaped by whoever adopted it), within 5 s.
for _ in $(seq 1 50); do
  state=$(awk '{print $3}' "/proc/$ps_pid/stat" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = Z ] && break
  sleep 0.1
done
submit
echo "$err"
[ "$status" -eq 1 ] || { echo "FAILED: expected exit status 1 with the ps gone, got $status" >&2; exit 1; }
expect "$err" "error: UNAVAILABLE"
expect "$err" "/job:ps/replica:0/task:0"

"$TFCTL" start --cluster "$spec" --run-dir "$run_dir" --job ps --task 0 >/dev/null
submit
[ "$status" -eq 0 ] || { echo "FAILED: the run failed after the ps restarted: $err" >&2; exit 1; }
echo "$out"
expect "$out" "10"
echo "after the restart the same run succeeds"
