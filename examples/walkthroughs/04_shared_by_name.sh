#!/usr/bin/env bash
# Walkthrough 4: each process builds its own graph; a variable of the same
# name, unplaced, lands on task 0 of the master's job, and sessions on two
# different tasks see each other's assignments through it.
source "$(dirname "$0")/lib.sh"
cluster_spec worker=2
start_cluster
"$TFCTL" submit "$here/04_writer.txt" --target "$(address worker 0)" --run set >/dev/null
out=$("$TFCTL" submit "$here/04_reader.txt" --target "$(address worker 1)" --fetch read --trace)
echo "$out"
expect "$out" "42"
expect "$out" "/job:worker/replica:0/task:0/device:CPU:0"   # where 'shared' lives
