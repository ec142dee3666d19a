#!/usr/bin/env bash
# Walkthrough 2: pinning ops to jobs and tasks; the trace shows where each ran.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=2 worker=3
start_cluster
out=$("$TFCTL" submit "$here/02_pinning.txt" --target "$(address worker 0)" \
      --init init --fetch c --trace)
echo "$out"
expect "$out" "4"
expect "$out" "/job:ps/replica:0/task:0/device:CPU:0"
expect "$out" "/job:worker/replica:0/task:1/device:CPU:0"
json=$("$TFCTL" submit "$here/02_pinning.txt" --target "$(address worker 0)" --fetch c --output json)
expect "$json" '"values": 4.0'
