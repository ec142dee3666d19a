#!/usr/bin/env bash
# Walkthrough 3: parameters placed round-robin over the ps tasks (v1, v2, v3
# on ps 0, 1, 0, as replica_device_setter does), s = v1 + v2 on worker 0,
# p1 = 2s on /task:1, p2 = 3s on /task:1/cpu:0; --log-device-placement on
# the master shows it.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=2 worker=2
start_cluster --tfd-flag=--log-device-placement
w0=$(address worker 0)
out=$("$TFCTL" submit "$here/03_round_robin.txt" --target "$w0" --init init --fetch p1 --fetch p2)
echo "$out"
expect "$out" "6"
expect "$out" "9"
log=$(cat "$run_dir/worker-0.log")
expect "$log" "placement: v1 (VariableV2) -> /job:ps/replica:0/task:0/device:CPU:0"
expect "$log" "placement: v2 (VariableV2) -> /job:ps/replica:0/task:1/device:CPU:0"
expect "$log" "placement: v3 (VariableV2) -> /job:ps/replica:0/task:0/device:CPU:0"
expect "$log" "placement: s (Add) -> /job:worker/replica:0/task:0/device:CPU:0"
expect "$log" "placement: p1 (Mul) -> /job:worker/replica:0/task:1/device:CPU:0"
expect "$log" "placement: p2 (Mul) -> /job:worker/replica:0/task:1/device:CPU:0"
echo "placement as logged by the master:"
grep "placement:" "$run_dir/worker-0.log" | sed 's/.*placement: /  /' | sort -u
