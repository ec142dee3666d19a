#!/usr/bin/env bash
# Walkthrough 9: one process waits on the init barrier until another runs
# the initializer, and proceeds at once after.
source "$(dirname "$0")/lib.sh"
cluster_spec ps=1 worker=2
start_cluster
w0=$(address worker 0); w1=$(address worker 1)
# Create the variable (uninitialized): the barrier must hold.
"$TFCTL" submit "$here/02_pinning.txt" --target "$w0" --run a >/dev/null
set +e
"$TFCTL" wait init --target "$w1" --var a --timeout 0.5 2>/dev/null
early=$?
set -e
[ "$early" -eq 3 ] || { echo "FAILED: expected exit 3 at the deadline, got $early" >&2; exit 1; }
"$TFCTL" wait init --target "$w1" --var a --timeout 30 &
waiter=$!
"$TFCTL" submit "$here/02_pinning.txt" --target "$w0" --run init >/dev/null
wait "$waiter"
echo "the waiter proceeded once 'a' was initialized"
