#!/usr/bin/env bash
# Issue 40's figures on a lent host with 16 cores and a GPU, on binaries
# built here and packed by bench/device_bundle.sh into DIR (bin/: tfd,
# train_bench, kernel_bench, allreduce_bench, gpu_kernels_test; libs/),
# with the torch counterparts of bench/ run by the host's python3:
#
#   meson setup build-dev -Dcpu=x86-64-v3 -Dgpu_archs=90 -Dcuda=enabled
#   ninja -C build-dev daemon/tfd bench/train_bench bench/kernel_bench \
#     bench/allreduce_bench tests/gpu/gpu_kernels_test
#   bench/device_bundle.sh build-dev devbundle/big daemon/tfd bench/train_bench \
#     bench/kernel_bench bench/allreduce_bench tests/gpu/gpu_kernels_test
#   bench/big_host_check.sh DIR OUT      # on the lent host; figures in OUT
#
# 1. MatMul 2048x2048x2048 on 1, 2, 4, 8 threads (scaling);
# 2. the 5.8 M-parameter model on 2 ps + 1 and + 2 workers, each process on
#    CPUs of its own (4 and 3 each), beside torch's RPC parameter server
#    with the same CPUs and threads per process, and one process on the
#    worker's CPUs (the overlap target);
# 3. the same with the workers computing on the GPU, beside torch's;
# 4. all-reduce of 1-256 MiB among 4 processes, beside gloo's;
# 5. every GPU kernel against its CPU kernel.
# Each part has its own deadline; one failing does not stop the others.
set -u
dir=${1:?usage: big_host_check.sh DIR OUT}
out=${2:?usage: big_host_check.sh DIR OUT}
mkdir -p "$out"
python=${PYTHON:-python3}
# tfd's binaries get the bundle's libraries; torch keeps the host's.
tfd_env() { LD_LIBRARY_PATH="$dir/libs" UCX_MODULE_DIR="$dir/libs/ucx" "$@"; }
torch_env() { OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 "$@"; }
part() { echo; echo "== $* ($(date -u +%T))"; }

part host
{
  nproc
  grep -m1 'model name' /proc/cpuinfo
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$out/host.txt"

part "MatMul scaling"
tfd_env timeout 90 "$dir/bin/kernel_bench" --matmul-scaling 2048 --json "$out/matmul_scaling.json" \
  2>&1 | tee "$out/matmul_scaling.txt" | tail -15

cpu_race() {  # WORKERS CPUS_PER_PROCESS DEVICE
  local w=$1 n=$2 device=$3
  part "2 ps + $w worker(s), $n CPUs per process, workers on $device: tfd"
  tfd_env timeout 150 "$dir/bin/train_bench" --tfd "$dir/bin/tfd" --model large --workers "$w" \
    --cpus-per-task "$n" --worker-device "$device" --steps 40 --reps 3 --warmup 5 --traced 5 \
    --unpinned 0 --hosted 0 --json "$out/train_${device}_w$w.json" >"$out/train_${device}_w$w.txt" 2>&1
  echo "rc=$?"
  sed -n '/repetitions of/,$p' "$out/train_${device}_w$w.txt" | head -40
  part "2 ps + $w worker(s), $n CPUs per process, workers on $device: torch"
  torch_env timeout 120 "$python" bench/torch_ps_mlp.py --ps 2 --workers "$w" --threads "$n" \
    --cpus-per-process "$n" --device "$device" --steps 100 --warmup 10 2>&1 |
    tee -a "$out/torch_ps.jsonl" | tail -3
}
cpu_race 1 4 cpu
cpu_race 2 3 cpu
part "torch, one process on 4 CPUs"
torch_env taskset -c 0-3 timeout 60 "$python" bench/torch_ps_mlp.py --model local --threads 4 \
  --steps 100 --warmup 10 2>&1 | tee -a "$out/torch_ps.jsonl" | tail -2
cpu_race 1 4 gpu
cpu_race 2 3 gpu
part "GPU workers, host buffers pageable (TFD_PIN_HOST_BUFFERS=0), 1 worker"
TFD_PIN_HOST_BUFFERS=0 tfd_env timeout 120 "$dir/bin/train_bench" --tfd "$dir/bin/tfd" --model large \
  --workers 1 --cpus-per-task 4 --worker-device gpu --steps 40 --reps 3 --warmup 5 --traced 0 \
  --unpinned 0 --hosted 0 >"$out/train_gpu_w1_pageable.txt" 2>&1
echo "rc=$?"
sed -n '/repetitions of/,/^$/p' "$out/train_gpu_w1_pageable.txt" | head -12

part "all-reduce among 4 processes: tfd"
tfd_env timeout 150 "$dir/bin/allreduce_bench" --tfd "$dir/bin/tfd" --workers 4 \
  --sizes 1,4,16,64,256 --json "$out/allreduce.json" 2>&1 | tee "$out/allreduce.txt" | tail -12
part "all-reduce among 4 processes: gloo"
torch_env timeout 120 "$python" bench/torch_allreduce.py --workers 4 --sizes 1,4,16,64,256 2>&1 |
  tee "$out/gloo_allreduce.jsonl" | tail -6

part "GPU kernels against CPU kernels"
tfd_env timeout 150 "$dir/bin/gpu_kernels_test" -r tap >"$out/gpu_kernels_test.tap" 2>&1
echo "rc=$? $(grep -c '^ok' "$out/gpu_kernels_test.tap") ok, $(grep -c '^not ok' "$out/gpu_kernels_test.tap") not ok"
grep -m 10 -A 3 '^not ok' "$out/gpu_kernels_test.tap"
part done
