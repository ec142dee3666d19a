#!/usr/bin/env bash
# Issue 40's figures on a lent host with 16 cores and a GPU, on binaries
# built here and packed by bench/device_bundle.sh into DIR (bin/: tfd,
# train_bench, kernel_bench, allreduce_bench, allreduce_train,
# gpu_kernels_test; libs/),
# beside the torch counterparts in bench/, run by the host's python3:
#
#   meson setup build-dev -Dcpu=x86-64-v3 -Dgpu_archs=90 -Dcuda=enabled
#   ninja -C build-dev daemon/tfd bench/train_bench bench/kernel_bench \
#     bench/allreduce_bench bench/allreduce_train tests/gpu/gpu_kernels_test
#   bench/device_bundle.sh build-dev devbundle/big daemon/tfd bench/train_bench \
#     bench/kernel_bench bench/allreduce_bench bench/allreduce_train tests/gpu/gpu_kernels_test
#   bench/big_host_check.sh DIR OUT [SECONDS]    # on the lent host
#   PARTS="gpu_tests pageable" bench/big_host_check.sh DIR OUT   # only these
#
# In order of importance, each part with its own deadline, none started
# once SECONDS (default 230) have passed, so a short lease still brings
# back the first ones:
# 1. the 5.8 M-parameter model, 2 ps + 1 and + 2 workers, every process on
#    3 CPUs of its own, tfd (train_bench, with one process on the worker's
#    CPUs: the overlap target) beside torch's RPC parameter server
#    (bench/torch_ps_mlp.py) with the same CPUs per process;
# 2. MatMul 2048^3 on 1, 2, 4, 8 threads;
# 3. the same race with the workers computing on the GPU;
# 4. all-reduce of 1-256 MiB among 4 processes, tfd beside gloo; then
#    training the same model without a ps, tfd's all-reduce beside torch's
#    DDP over gloo; then the CPU race again over UCX shared memory;
# 5. torch's step in one process on 3 CPUs; the GPU copy and training
#    tests; the GPU race again with pageable host buffers.
# Everything lands in OUT/results.tgz (re-made after each part) and the
# figures on stdout. PARTS names the parts to run (host cpu matmul gpu
# allreduce ddp shm local gpu_tests pageable; default all).
set -u
dir=${1:?usage: big_host_check.sh DIR OUT [SECONDS]}
out=${2:?usage: big_host_check.sh DIR OUT [SECONDS]}
budget=${3:-230}
res=$(mktemp -d)
python=${PYTHON:-python3}
start=$SECONDS
# tfd's binaries get the bundle's libraries; torch keeps the host's.
# OPENBLAS_CORETYPE is tfd's own choice from the CPU (kernels/math/openblas.h)
# unless set here; kernel_bench's header says which kernels were loaded.
tfd_env() { LD_LIBRARY_PATH="$dir/libs" UCX_MODULE_DIR="$dir/libs/ucx" "$@"; }
torch_env() { OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 "$@"; }
parts=" ${PARTS:-host cpu matmul gpu allreduce ddp shm local gpu_tests pageable} "
# part KEY TITLE: false when PARTS leaves KEY out or the budget is spent.
part() {
  local key=$1
  shift
  tar -C "$res" -czf "$out/results.tgz" . 2>/dev/null
  [[ $parts == *" $key "* ]] || return 1
  if (( SECONDS - start > budget )); then echo "== skipped: $* (budget spent)"; return 1; fi
  echo; echo "== $* (+$(( SECONDS - start )) s)"
}
report() { sed -n '/repetitions of/,$p' "$1" | grep -v '^$' | head -"${2:-40}"; }

train() {  # LOG DEVICE [FLAGS...]
  local log=$1 device=$2
  shift 2
  tfd_env timeout 80 "$dir/bin/train_bench" --tfd "$dir/bin/tfd" --model large --workers 2 \
    --cpus-per-task 3 --worker-device "$device" --steps 20 --reps 2 --warmup 3 --traced 3 \
    --unpinned 0 --hosted 0 --json "$res/${log%.txt}.json" "$@" >"$res/$log" 2>&1
  local rc=$?
  echo "rc=$rc"
  report "$res/$log"
  (( rc == 0 )) || tail -3 "$res/$log"
}
torch_ps() {  # WORKERS DEVICE
  torch_env timeout 50 "$python" bench/torch_ps_mlp.py --ps 2 --workers "$1" --cpus-per-process 3 \
    --device "$2" --tp uv --steps 60 --warmup 10 --timeout 45 2>&1 | tee -a "$res/torch_ps.jsonl" |
    tail -2
}

part host host && {
  nproc
  grep -m1 'model name' /proc/cpuinfo
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c 'import torch; print("torch", torch.__version__)'
  echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(tfd chooses)}"
  sysctl net.core.rmem_max net.core.wmem_max
} 2>&1 | tee "$res/host.txt"
part cpu "CPU workers: tfd, 2 ps + 1 / + 2 workers, 3 CPUs per process" && train train_cpu.txt cpu
part cpu "CPU workers: torch, 2 ps + 1 worker, 3 CPUs per process" && torch_ps 1 cpu
part cpu "CPU workers: torch, 2 ps + 2 workers, 3 CPUs per process" && torch_ps 2 cpu
part matmul "MatMul 2048^3 by threads" &&
  tfd_env timeout 60 "$dir/bin/kernel_bench" --matmul-scaling 2048 --rounds 3 \
    --json "$res/matmul_scaling.json" >"$res/matmul_scaling.txt" 2>&1 &&
  tail -12 "$res/matmul_scaling.txt"
part gpu "GPU workers: tfd" && train train_gpu.txt gpu
part gpu "GPU workers: torch, 1 worker" && torch_ps 1 cuda
part gpu "GPU workers: torch, 2 workers" && torch_ps 2 cuda
part allreduce "all-reduce among 4 processes: tfd, 4 CPUs each" &&
  tfd_env timeout 60 "$dir/bin/allreduce_bench" --tfd "$dir/bin/tfd" --workers 4 \
    --cpus-per-task 4 --sizes 1,4,16,64,256 --reps 3 --json "$res/allreduce.json" 2>&1 |
  tee "$res/allreduce.txt" | tail -8
part allreduce "all-reduce among 4 processes: gloo" &&
  torch_env timeout 60 "$python" bench/torch_allreduce.py --workers 4 --sizes 1,4,16,64,256 \
    --reps 3 2>&1 | tee "$res/gloo_allreduce.jsonl" | tail -5
part ddp "all-reduce training, 4 workers on 3 CPUs each: tfd (AllReduceMinimize)" &&
  tfd_env timeout 90 "$dir/bin/allreduce_train" --tfd "$dir/bin/tfd" --workers 4 \
    --cpus-per-task 3 --steps 30 --warmup 3 --json "$res/allreduce_train.json" 2>&1 |
  tee "$res/allreduce_train.txt" | tail -8
part ddp "all-reduce training: torch DDP over gloo, 4 workers on 3 CPUs each" &&
  torch_env timeout 60 "$python" bench/torch_ps_mlp.py --model ddp --workers 4 \
    --cpus-per-process 3 --steps 30 --warmup 5 --timeout 55 2>&1 |
  tee -a "$res/torch_ddp.jsonl" | tail -1 | cut -c1-400
part shm "CPU workers over UCX shared memory (--data-plane-transports=shm)" &&
  TFD_DATA_PLANE_TRANSPORTS=shm train train_cpu_shm.txt cpu
part local "torch, one process on 3 CPUs" &&
  torch_env timeout 40 "$python" bench/torch_ps_mlp.py --model local --cpus-per-process 3 \
    --steps 60 --warmup 10 --timeout 35 2>&1 | tee -a "$res/torch_ps.jsonl" | tail -1
part gpu_tests "GPU copies and training steps against the CPU" && {
  tfd_env timeout 60 "$dir/bin/gpu_kernels_test" -r tap \
    "a copy to the GPU keeps*,fetched tensors come back*,training steps on the GPU*" \
    >"$res/gpu_tests.tap" 2>&1
  echo "rc=$? $(grep -c '^ok' "$res/gpu_tests.tap") ok, $(grep -c '^not ok' "$res/gpu_tests.tap") not ok"
  grep -m 5 -A 3 '^not ok' "$res/gpu_tests.tap"
}
part pageable "GPU workers, host buffers pageable (TFD_PIN_HOST_BUFFERS=0), then page-locked" && {
  TFD_PIN_HOST_BUFFERS=0 train train_gpu_pageable.txt gpu --traced 1
  train train_gpu_pinned.txt gpu --traced 1
}
[[ $parts == *" done "* ]] || parts="$parts done "
part done done
