#!/usr/bin/env bash
# Walkthrough 5: a counter and a queue on the ps, shared by two workers that
# run as separate processes, each submitting its own copy of the graph.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=1 worker=2
start_cluster
w0=$(address worker 0); w1=$(address worker 1)
# The chief initializes; the other worker waits on the init barrier.
"$TFCTL" submit "$here/05_counter_queue.txt" --target "$w0" --run init >/dev/null
"$TFCTL" wait init --target "$w1" --var counter --timeout 20
"$TFCTL" submit "$here/05_counter_queue.txt" --target "$w0" --run enqueue --steps 5 >/dev/null &
first=$!
"$TFCTL" submit "$here/05_counter_queue.txt" --target "$w1" --run enqueue --steps 5 >/dev/null
wait "$first"
drained=$("$TFCTL" submit "$here/05_counter_queue.txt" --target "$(address ps 0)" \
          --fetch drain --output json)
echo "$drained"
values=$(echo "$drained" | tr -dc '0-9,[]' | sed -E 's/.*\[([0-9,]+)\].*/\1/' | tr ',' '\n' | sort -n | tr '\n' ' ')
expect "$values" "1 2 3 4 5 6 7 8 9 10 "
counter=$("$TFCTL" vars get counter --target "$(address ps 0)")
echo "$counter"
expect "$counter" "10"
