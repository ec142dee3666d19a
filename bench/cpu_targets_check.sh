#!/usr/bin/env bash
# The classic and the large model on a bigger host than this project's CI
# machine, with tfd built for two CPU targets, beside the peers of
# ../shared/peers measured in the same run. Made for a lent machine (16
# cores) that has torch but not tfd's libraries: binaries built elsewhere are
# brought along in DIR:
#
#   DIR/x86-64-v3/{tfd,train_bench}   meson setup B -Dcpu=x86-64-v3 -Dtests=false
#   DIR/portable/{tfd,train_bench}    meson setup B -Dcpu=portable -Dtests=false
#                                     (ninja -C B daemon/tfd bench/train_bench)
#   DIR/libs/                         the shared libraries ldd lists that the host
#                                     may lack, UCX's modules in DIR/libs/ucx
#   DIR/peers/                        a copy of ../shared/peers
#   DIR/mlp_eigen                     peers/mlp_eigen.cc built -march=x86-64-v3
#
#   bench/cpu_targets_check.sh DIR OUT    # the figures go to OUT
#
# Each part has its own deadline, so one that fails or hangs leaves the rest.
set -u
dir=${1:?usage: cpu_targets_check.sh DIR OUT}
out=${2:?usage: cpu_targets_check.sh DIR OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$dir/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UCX_MODULE_DIR="$dir/libs/ucx"
python=${PYTHON:-python3}

{
  nproc
  grep -m1 'model name' /proc/cpuinfo
  grep -m1 -o -w -E 'avx2|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' '
  echo
  "$python" -c 'import torch; print("torch", torch.__version__, torch.get_num_threads(), "threads")'
} 2>&1 | tee "$out/host.txt"

# The peers as ../shared/peers/run.sh runs them (one BLAS thread each), with
# the python that has torch here.
peers() {
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 timeout 120 \
    "$python" "$dir/peers/torch_peers_bench.py" "$@" --port $((29500 + RANDOM % 2000)) 2>&1 |
    grep '^{' | tee -a "$out/peers.jsonl"
}
echo "== peers"
peers mlp_local --threads 1
peers ps_mlp --workers 1 --steps 1000
peers ps_mlp --workers 2 --steps 1000
PEERS_LAYERS=784,2048,2048,10 peers ps_mlp --workers 1 --steps 100
PEERS_LAYERS=784,2048,2048,10 peers ps_mlp --workers 2 --steps 100
timeout 60 "$dir/mlp_eigen" 1 4 2>&1 | tee -a "$out/peers.jsonl"

bench() {
  local target=$1 log=$2
  shift 2
  echo "== $target: train_bench $*"
  timeout 200 "$dir/$target/train_bench" --tfd "$dir/$target/tfd" "$@" >"$out/$log" 2>&1
  echo "rc=$?"
  sed -n '/repetitions of/,$p' "$out/$log" | head -60
}
bench x86-64-v3 v3-classic.txt --steps 1000 --reps 3 --warmup 50 --workers 2 --unpinned 0 --traced 30
bench x86-64-v3 v3-large.txt --model large --steps 30 --reps 3 --warmup 5 --traced 5 --unpinned 0
bench portable portable-classic.txt --steps 1000 --reps 3 --warmup 50 --workers 1 --unpinned 0 \
  --hosted 0 --traced 10
bench portable portable-large.txt --model large --steps 15 --reps 2 --warmup 3 --traced 3 \
  --workers 1 --unpinned 0 --hosted 0
echo "== peers again"
peers ps_mlp --workers 1 --steps 1000
TFD_SPIN_WAIT_US=150 bench x86-64-v3 v3-classic-polling.txt --steps 1000 --reps 3 --warmup 50 \
  --workers 2 --unpinned 0 --traced 30
