#!/usr/bin/env bash
# A small ResNet on CIFAR-10 on a local cluster: builds tfd, starts 1 ps and
# 2 workers with `tfctl start`, trains on both workers (between-graph, one
# graph file for all, each worker reading its own shard), prints the test
# accuracy and stops the cluster.
#
#   ./scripts/train-cifar.sh --data ~/cifar-10-batches-bin      # the real files
#   ./scripts/train-cifar.sh                                    # generated data in data/cifar
#   ./scripts/train-cifar.sh --blocks 3 --epochs 30 --workers 1 # ResNet-20
#
# --data names a directory holding data_batch_1.bin .. data_batch_5.bin and
# test_batch.bin (the "binary version" from https://www.cs.toronto.edu/~kriz/cifar.html).
# Without it, scripts/cifar-synth.py writes generated files of that format
# into data/cifar (coloured shapes with noise; see its --help).
# Logs, pid files and the graph stay in run/cifar/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

data="" blocks=1 epochs=3 workers=2 batch=128
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) data="$(cd "$2" && pwd)"; shift 2 ;;
    --blocks) blocks="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "train-cifar: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

./scripts/install-deps.sh
[[ -f build/build.ninja ]] || meson setup build --buildtype=release
ninja -C build -j "${TFD_JOBS:-2}" cli/tfctl daemon/tfd examples/cifar-graph
if [[ -z $data ]]; then
  data="$root/data/cifar"
  [[ -s $data/test_batch.bin ]] || python3 scripts/cifar-synth.py --out "$data"
fi
for f in data_batch_{1..5}.bin test_batch.bin; do
  [[ -f $data/$f ]] || { echo "train-cifar: $data has no $f" >&2; exit 2; }
done
test_records=$(( $(stat -c %s "$data/test_batch.bin") / 3073 ))

tfctl="$root/build/cli/tfctl"
run_dir="$root/run/cifar"
mkdir -p "$run_dir"
source scripts/cluster-lib.sh
cluster_spec ps=1 worker="$workers"
stop() { "$tfctl" stop --cluster "$spec" --run-dir "$run_dir" || true; }
trap stop EXIT
echo "cluster: $spec (logs in run/cifar/)"
"$tfctl" start --cluster "$spec" --run-dir "$run_dir" --tfd "$root/build/daemon/tfd" \
  --tfd-flag="--data-dir=$data"

./build/examples/cifar-graph --blocks "$blocks" --workers "$workers" --epochs "$epochs" \
  --batch-size "$batch" --test-batch "$test_records" -o "$run_dir/cifar.capnp"

# Every worker trains; worker 0 (the chief) initializes and reports the accuracy.
pids=()
for ((i = 1; i < workers; i++)); do
  "$tfctl" train "$run_dir/cifar.capnp" --target "$(address worker "$i")" \
    >"$run_dir/train-worker-$i.out" 2>"$run_dir/train-worker-$i.err" &
  pids+=($!)
done
status=0
"$tfctl" train "$run_dir/cifar.capnp" --target "$(address worker 0)" || status=$?
for ((i = 1; i < workers; i++)); do
  if ! wait "${pids[$((i - 1))]}"; then
    status=1
    cat "$run_dir/train-worker-$i.err" >&2
  fi
  cat "$run_dir/train-worker-$i.out"
done
exit "$status"
