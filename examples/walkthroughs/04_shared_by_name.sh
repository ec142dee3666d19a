#!/usr/bin/env bash
# Walkthrough 4: each process builds its own graph; a variable of the same
# name on the same task (both graphs pin it to worker 0) is one variable, and
# sessions on two different tasks see each other's assignments through it.
# Unpinned, each session would get its own: a node with no device runs on the
# session's own task, as in TensorFlow 1.x.
source "$(dirname "$0")/lib.sh"
cluster_spec worker=2
start_cluster
"$TFCTL" submit "$here/04_writer.txt" --target "$(address worker 0)" --run set >/dev/null
out=$("$TFCTL" submit "$here/04_reader.txt" --target "$(address worker 1)" --fetch read --trace)
echo "$out"
expect "$out" "42"
expect "$out" "/job:worker/replica:0/task:0/device:CPU:0"   # where 'shared' lives
