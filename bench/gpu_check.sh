#!/usr/bin/env bash
# The GPU checks, run on a machine with a GPU from the repository root, on
# binaries built elsewhere and brought along in DIR (bin/: gpu_kernels_test,
# gpu_bench, tfd, tfctl, mnist-graph; libs/: the shared libraries they need
# that the machine may lack; mnist/: the MNIST files):
#
#   meson setup build-gpu -Dcpu=portable -Dgpu_archs=90
#   ninja -C build-gpu tests/gpu/gpu_kernels_test bench/gpu_bench daemon/tfd \
#     cli/tfctl examples/mnist-graph
#   bench/gpu_check.sh DIR OUT        # OUT: where the figures go
#
# 1. every GPU kernel against its CPU kernel (tests/gpu, TAP);
# 2. the MNIST models in one process, tfd on CPU and GPU (bench/gpu_bench)
#    and torch on the same CPU and GPU (bench/torch_gpu_mlp.py);
# 3. the classic model trained by a cluster on loopback, ps on the CPU and
#    the worker computing on its CPU, then on its GPU (mnist-graph --device
#    gpu): steps/s and test accuracy of each.
# Each part has its own deadline; one failing does not stop the others.
set -u
dir=${1:?usage: gpu_check.sh DIR OUT}
out=${2:?usage: gpu_check.sh DIR OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$dir/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UCX_MODULE_DIR="$dir/libs/ucx"
python=${PYTHON:-python3}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

echo "== GPU kernels against CPU kernels"
timeout 300 "$dir/bin/gpu_kernels_test" -r tap >"$out/gpu_kernels_test.tap" 2>&1
echo "rc=$? $(grep -c '^ok' "$out/gpu_kernels_test.tap") ok, $(grep -c '^not ok' "$out/gpu_kernels_test.tap") not ok"
grep -m 20 -A 3 '^not ok' "$out/gpu_kernels_test.tap"
head -3 "$out/gpu_kernels_test.tap"

echo "== one process: tfd and torch, CPU and GPU"
for run in "classic 2000" "large 200"; do
  set -- $run
  timeout 240 "$dir/bin/gpu_bench" --model "$1" --steps "$2" 2>&1 | tee -a "$out/bench.jsonl"
  timeout 240 "$python" bench/torch_gpu_mlp.py --model "$1" --steps "$2" 2>&1 | tee -a "$out/bench.jsonl"
done

echo "== a cluster: ps on the CPU, the worker on its CPU, then on its GPU"
source scripts/cluster-lib.sh
tfctl="$dir/bin/tfctl"
for device in cpu gpu; do
  cluster_spec ps=1 worker=1
  run="$out/cluster-$device"
  mkdir -p "$run"
  "$tfctl" start --cluster "$spec" --run-dir "$run" --tfd "$dir/bin/tfd" \
    --tfd-flag="--data-dir=$dir/mnist" --tfd-flag=--allow-soft-placement \
    --tfd-flag=--log-device-placement
  "$tfctl" status --cluster "$spec" --output json >"$run/status.json"
  grep -o '"devices": \[[^]]*\]' "$run/status.json"
  "$dir/bin/mnist-graph" --device "$device" --workers 1 --epochs 2 -o "$run/mnist.capnp"
  start=$(date +%s%N)
  timeout 240 "$tfctl" train "$run/mnist.capnp" --target "$(address worker 0)" >"$run/train.out"
  rc=$?
  tail -3 "$run/train.out"
  echo "$device: train rc=$rc in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  timeout 60 "$tfctl" submit "$run/mnist.capnp" --target "$(address worker 0)" \
    --fetch eval/accuracy --output json
  echo "$device: nodes placed on GPU:0: $(grep -c 'placement: .* -> .*device:GPU:0' "$run"/worker-0.log)"
  "$tfctl" stop --cluster "$spec" --run-dir "$run"
done
