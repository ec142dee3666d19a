#!/usr/bin/env bash
# Synchronous replicas against torch DDP, in one sitting: issue 12's "sync 2
# workers >= torch DDP per process". Each round starts 1 ps + 2 workers with
# `tfctl start`, trains the classic model (784-100-10 sigmoid, batch 100 per
# replica, SGD) with `tfctl train` on both workers for --steps global steps
# (both replicas' gradients averaged into each), then runs the peers' DDP
# (2 processes over gloo, the same layers and batch, 1000 steps). Nothing is
# pinned, on either side. Prints each round's steps/s per process.
#
#   bench/sync_bench.sh [--steps N] [--rounds R]     # after a build in build/
#
# Needs build/{daemon/tfd,cli/tfctl,examples/mnist-graph}, MNIST in data/mnist
# (fetched by scripts/get-mnist.sh when missing) and ../shared/peers/run.sh
# with torch (PEERS=DIR names another peers folder). KEEP=1 keeps the run's
# folder (graph, trainers' output) under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
steps=3000 rounds=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sync_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
peers=${PEERS:-$root/../shared/peers}
tfctl=$root/build/cli/tfctl
for f in "$tfctl" build/daemon/tfd build/examples/mnist-graph "$peers/run.sh"; do
  [[ -x $f ]] || { echo "sync_bench: $f is missing (build first)" >&2; exit 1; }
done
./scripts/get-mnist.sh data/mnist >/dev/null

run_dir=$(mktemp -d /tmp/tfd-sync-bench.XXXXXX)
source scripts/cluster-lib.sh
stop() { [[ -n ${spec:-} ]] && "$tfctl" stop --cluster "$spec" --run-dir "$run_dir" >/dev/null 2>&1 || true; }
trap 'stop; [[ -n ${KEEP:-} ]] || rm -rf "$run_dir"' EXIT

# Far more epochs than the steps need: the run ends at --steps.
build/examples/mnist-graph --model classic --workers 2 --sync --epochs 1000 -o "$run_dir/mnist.capnp"

# One figure from a JSON line: field $1 of the lines of file $2 matching $3.
field() { /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[2]):
    line = line.strip()
    if line.startswith("{") and sys.argv[3] in line:
        print(json.loads(line)[sys.argv[1]])' "$@"; }

echo "sync 2 workers (tfd, tfctl train, $steps global steps) and torch DDP(gloo), steps/s per process"
printf '%-6s %12s %12s %12s %12s %8s\n' round "tfd w0" "tfd w1" "DDP rank0" "DDP rank1" ratio
for r in $(seq 1 "$rounds"); do
  cluster_spec ps=1 worker=2
  "$tfctl" start --cluster "$spec" --run-dir "$run_dir" --tfd "$root/build/daemon/tfd" \
    --tfd-flag="--data-dir=$root/data/mnist" >/dev/null
  pids=()
  for w in 1 0; do
    "$tfctl" train "$run_dir/mnist.capnp" --target "$(address worker $w)" --steps "$steps" \
      --no-eval --checkpoint-secs 0 --progress-every 3600 --output json \
      >"$run_dir/train-$w.json" 2>"$run_dir/train-$w.err" &
    pids+=($!)
  done
  for w in 0 1; do
    wait "${pids[$w]}" || { echo "sync_bench: a trainer failed:" >&2; cat "$run_dir"/train-*.err >&2; exit 1; }
  done
  stop
  t0=$(field mean_steps_per_second "$run_dir/train-0.json" '"event": "done"')
  t1=$(field mean_steps_per_second "$run_dir/train-1.json" '"event": "done"')
  rm -f "$run_dir/peers.jsonl"
  PEERS_RESULTS="$run_dir/peers.jsonl" "$peers/run.sh" ddp >/dev/null
  d0=$(field steps_per_s "$run_dir/peers.jsonl" '"rank": 0')
  d1=$(field steps_per_s "$run_dir/peers.jsonl" '"rank": 1')
  ratio=$(/usr/bin/python3 -c "print(f'{min($t0, $t1) / max($d0, $d1):.2f}')")
  printf '%-6s %12.1f %12.1f %12.1f %12.1f %8s\n' "$r" "$t0" "$t1" "$d0" "$d1" "$ratio"
done
echo "ratio: the slower tfd worker over the faster DDP process; target >= 1.0"
