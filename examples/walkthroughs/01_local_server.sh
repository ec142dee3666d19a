#!/usr/bin/env bash
# Walkthrough 1: a local server — a one-task cluster evaluates a constant.
source "$(dirname "$0")/lib.sh"
cluster_spec local=1
start_cluster
out=$("$TFCTL" submit "$here/01_local_server.txt" --target "$(address local 0)" --fetch hello)
echo "$out"
expect "$out" "Hello, distributed tfd!"
