#!/usr/bin/env bash
# The main command: installs dependencies, builds tfd (release, in build/),
# fetches MNIST into data/mnist, starts a local cluster of 1 ps and 2
# workers with `tfctl start`, trains on both workers (between-graph, the same
# graph file submitted to each), prints the test accuracy and stops the
# cluster.
#
#   ./scripts/train-mnist.sh                       # strong model, 3 epochs, async
#   ./scripts/train-mnist.sh --model classic --epochs 20
#   ./scripts/train-mnist.sh --sync                # synchronous replicas
#   ./scripts/train-mnist.sh --epochs 6 --resume   # continue from the checkpoints
#   ./scripts/train-mnist.sh --no-shard            # every worker reads all the data
#
# Logs, pid files, the graph and the checkpoints stay in run/mnist/. The
# checkpoints hold each worker's input position in its shard, so --resume
# wants the --workers and --no-shard of the run that saved them.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

model=strong epochs=3 workers=2 sync="" shard="" resume=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --sync) sync="--sync"; shift ;;
    --no-shard) shard="--no-shard"; shift ;;
    --resume) resume=true; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "train-mnist: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

./scripts/install-deps.sh
[[ -f build/build.ninja ]] || meson setup build --buildtype=release
ninja -C build -j "${TFD_JOBS:-2}" cli/tfctl daemon/tfd examples/mnist-graph
./scripts/get-mnist.sh data/mnist

tfctl="$root/build/cli/tfctl"
run_dir="$root/run/mnist"
mkdir -p "$run_dir"
# The sharding the checkpoints' input positions belong to.
sharding="workers=$workers${shard:+ $shard}"
if $resume && [[ -f $run_dir/checkpoints/sharding && $(<"$run_dir/checkpoints/sharding") != "$sharding" ]]; then
  echo "train-mnist: --resume: the checkpoints were saved with $(<"$run_dir/checkpoints/sharding"), not" \
    "$sharding; their input positions are per shard (run without --resume to start anew)" >&2
  exit 2
fi
$resume || rm -rf "$run_dir/checkpoints"
mkdir -p "$run_dir/checkpoints"
echo "$sharding" >"$run_dir/checkpoints/sharding"
source scripts/cluster-lib.sh
cluster_spec ps=1 worker="$workers"

stop() { "$tfctl" stop --cluster "$spec" --run-dir "$run_dir" || true; }
trap stop EXIT
echo "cluster: $spec (logs in run/mnist/)"
"$tfctl" start --cluster "$spec" --run-dir "$run_dir" --tfd "$root/build/daemon/tfd" \
  --tfd-flag="--data-dir=$root/data/mnist" --tfd-flag="--checkpoint-dir=$run_dir/checkpoints"

./build/examples/mnist-graph --model "$model" --workers "$workers" --epochs "$epochs" $sync $shard \
  -o "$run_dir/mnist.capnp"

# Every worker trains; worker 0 (the chief) initializes, or finds the
# variables restored from the checkpoints, and checkpoints every 30 s.
started_ns=$(date +%s%N)
pids=()
for ((i = 1; i < workers; i++)); do
  "$tfctl" train "$run_dir/mnist.capnp" --target "$(address worker "$i")" \
    >"$run_dir/train-worker-$i.out" 2>"$run_dir/train-worker-$i.err" &
  pids+=($!)
done
status=0
"$tfctl" train "$run_dir/mnist.capnp" --target "$(address worker 0)" --checkpoint-secs 30 \
  || status=$?
for ((i = 1; i < workers; i++)); do
  if ! wait "${pids[$((i - 1))]}"; then
    status=1
    cat "$run_dir/train-worker-$i.err" >&2
  fi
  cat "$run_dir/train-worker-$i.out"
done
[[ $status -eq 0 ]] || exit "$status"
ms=$(( ($(date +%s%N) - started_ns) / 1000000 ))
# The parameters every worker left behind, on the whole test set.
accuracy=$("$tfctl" submit "$run_dir/mnist.capnp" --target "$(address worker 0)" \
  --fetch eval/accuracy --output json | sed -E 's/.*"values": ([0-9.e+-]+).*/\1/')
printf 'trained the %s model on %s workers%s for %s epochs in %d.%01d s; test accuracy %s\n' \
  "$model" "$workers" "${sync:+ (sync)}${shard:+ (unsharded)}" "$epochs" $((ms / 1000)) $((ms % 1000 / 100)) "$accuracy"
