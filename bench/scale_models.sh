#!/usr/bin/env bash
# Models at scale (issue 39): training of the classic MNIST model or the
# wide & deep CTR model on P ps and W workers of one host, each worker the
# master of its own session (`tfctl train` on each, between-graph), as a
# user runs it. For each (P, W) it measures, over a window once every
# worker steps:
#   - aggregate steps/s: the sum of every worker's own steps/s (each from its
#     progress reports inside the window);
#   - ps CPU per worker-step: the CPU all ps processes spent in the window
#     over the steps taken in it, and the busiest ps's share of a CPU;
#   - the host's busy share of its CPUs, which says when the machine, not tfd,
#     is the limit.
# With --sync, synchronous replicas (SyncReplicasOptimizer): also the global
# steps/s (below). With --slow, worker 1's task is
# stopped and continued on a duty cycle that leaves it 1/10 of the time
# (SIGSTOP 90 ms, SIGCONT 10 ms): the others' steps/s against a run without
# it, and worker 1's.
#
#   bench/scale_models.sh --model classic --ps 1,2 --workers 1,2,4,8,16
#   bench/scale_models.sh --model ctr --ps 1,2,4 --workers 1,4,16
#   bench/scale_models.sh --model classic --sync --ps 1 --workers 2,4,8
#   bench/scale_models.sh --model classic --sync --aggregate -1 --slow --workers 4
#
# --aggregate N: sync only, replicas_to_aggregate = W + N (N <= 0; default 0:
# every worker). The data are generated here, never downloaded: MNIST-sized
# IDX files of random pixels (the work of a step depends on sizes) and
# scripts/ctr-synth.py's Criteo-shaped lines. --json FILE appends one JSON
# object per (P, W) (bench/data/scale/models*.jsonl).
#
# For sync replicas this reports the global step's period (1 / global
# steps/s), which includes every worker's compute; the update alone (from a
# round's last gradient to the tokens handed out, from the steps' traces) is
# `build/bench/scale_bench --sync-workers LIST`'s.
#
# Needs build/{daemon/tfd,cli/tfctl,examples/mnist-graph,examples/ctr-graph}.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
model=classic ps_list=1 worker_list=1,2,4 seconds=6 json="" sync=false slow=false aggregate=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --ps) ps_list=$2; shift 2 ;;
    --workers) worker_list=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --sync) sync=true; shift ;;
    --aggregate) aggregate=$2; shift 2 ;;
    --slow) slow=true; shift ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale_models: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $model == classic || $model == ctr ]] ||
  { echo "scale_models: --model is classic or ctr, not '$model'" >&2; exit 2; }
tfctl=$root/build/cli/tfctl
for f in "$tfctl" build/daemon/tfd build/examples/mnist-graph build/examples/ctr-graph; do
  [[ -x $f ]] || { echo "scale_models: $f is missing (build first)" >&2; exit 1; }
done
py=/usr/bin/python3
work=$(mktemp -d /tmp/tfd-scale-models.XXXXXX)
source scripts/cluster-lib.sh
trainers=() duty=""
stop_all() {
  local p f
  [[ -n $duty ]] && { kill "$duty" 2>/dev/null; wait "$duty" 2>/dev/null || true; duty=""; }
  # SIGKILL: a trainer told to stop ends its step first, and a sync step
  # waits for its token up to the step's deadline; the cluster goes next.
  for p in "${trainers[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for p in "${trainers[@]}"; do wait "$p" 2>/dev/null || true; done
  trainers=()
  for f in "$work"/run/*.pid; do [[ -f $f ]] && kill -CONT "$(cat "$f")" 2>/dev/null || true; done
  [[ -n ${spec:-} ]] && "$tfctl" stop --cluster "$spec" --run-dir "$work/run" >/dev/null 2>&1 || true
  spec=""
}
trap 'stop_all; rm -rf "$work"' EXIT

# The data, once.
data=$work/data
mkdir -p "$data"
if [[ $model == classic ]]; then
  $py - "$data" <<'EOF'
import os, struct, sys
d = sys.argv[1]
for name, n in (("train", 60000), ("t10k", 10000)):
    with open(os.path.join(d, name + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + os.urandom(n * 784))
    with open(os.path.join(d, name + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + bytes(b % 10 for b in os.urandom(n)))
EOF
else
  $py scripts/ctr-synth.py --n 50000 --seed 1 --vocab 65536 --out "$data/ctr-train.tsv" >/dev/null
fi

# The busy and total jiffies of the host's CPUs.
host_cpu() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
# CPU seconds of each process of the pid files $@, one per line.
cpu_of() {
  local f
  for f in "$@"; do
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' \
      "/proc/$(cat "$f")/stat"
  done
}

# graph W P FILE: the model's graph for W workers over P ps.
graph() {
  local w=$1 p=$2 out=$3 s=()
  if $sync; then s=(--sync --replicas-to-aggregate $((w + aggregate))); fi
  if [[ $model == classic ]]; then
    build/examples/mnist-graph --model classic --workers "$w" --ps-tasks "$p" --epochs 1000 \
      "${s[@]}" -o "$out"
  else
    $sync && s+=(--steps 100000000)
    build/examples/ctr-graph --ps-tasks "$p" --table-shards "$p" --workers "$w" --vocab 65536 \
      --epochs 1000 --train ctr-train.tsv --eval-examples 1000 "${s[@]}" -o "$out"
  fi
}

# One (P, W): start, train on every worker, measure a window, stop.
measure() {
  local p=$1 w=$2 i
  cluster_spec ps="$p" worker="$w"
  rm -rf "$work/run" "$work/out"
  mkdir -p "$work/out"
  "$tfctl" start --cluster "$spec" --run-dir "$work/run" --tfd "$root/build/daemon/tfd" \
    --tfd-flag="--data-dir=$data" --timeout 60 >/dev/null
  graph "$w" "$p" "$work/g.capnp" >/dev/null
  for ((i = 0; i < w; i++)); do
    "$tfctl" train "$work/g.capnp" --target "$(address worker "$i")" --no-eval \
      --checkpoint-secs 0 --progress-every 0.5 --init-timeout 120 --step-timeout 60 \
      --output json >"$work/out/$i.json" 2>"$work/out/$i.err" </dev/null &
    trainers+=($!)
  done
  # Every worker steps (a progress report each), within two minutes.
  local ready=0
  for _ in $(seq 1 1200); do
    ready=0
    for ((i = 0; i < w; i++)); do
      grep -q '"progress"' "$work/out/$i.json" 2>/dev/null && ready=$((ready + 1))
    done
    ((ready == w)) && break
    sleep 0.1
  done
  if ((ready < w)); then
    echo "scale_models: $ready of $w workers stepping after 120 s (P=$p)" >&2
    cat "$work"/out/*.err >&2
    return 1
  fi
  if $slow && ((w > 1)); then
    local victim
    victim=$(cat "$work/run/worker-1.pid")
    ( while true; do kill -STOP "$victim"; sleep 0.09; kill -CONT "$victim"; sleep 0.01; done ) &
    duty=$!
  fi
  sleep 1  # past the start of the duty cycle, and the first steps' warm-up
  local t0 t1 h0 h1 c0 c1
  t0=$(date +%s.%N); h0=$(host_cpu); c0=$(cpu_of "$work"/run/ps-*.pid | tr '\n' ' ')
  sleep "$seconds"
  t1=$(date +%s.%N); h1=$(host_cpu); c1=$(cpu_of "$work"/run/ps-*.pid | tr '\n' ' ')
  # The reports as of now, with their files' times: a trainer stopped may
  # write more much later (a sync step ends at its deadline).
  rm -rf "$work/at_end"
  cp -rp "$work/out" "$work/at_end"
  stop_all
  $py - "$work/at_end" "$w" "$p" "$t0" "$t1" "$h0 $h1" "$c0" "$c1" "$model" "$sync" "$slow" \
    "$aggregate" "$json" <<'EOF'
import glob, json, os, sys, time
out, w, p, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
hb0, ht0, hb1, ht1 = map(float, sys.argv[6].split())
c0 = list(map(float, sys.argv[7].split())); c1 = list(map(float, sys.argv[8].split()))
model, sync, slow, aggregate, path = sys.argv[9], sys.argv[10] == "true", sys.argv[11] == "true", int(sys.argv[12]), sys.argv[13]
# Each worker's rate from its progress reports inside the window (their
# "seconds" count from its own start; the file's time is the last one's).
rates, globals_ = [], []
for i in range(w):
    lines = [json.loads(l) for l in open(os.path.join(out, f"{i}.json")) if '"progress"' in l]
    if len(lines) < 2:
        rates.append(0.0); continue
    end_wall = os.path.getmtime(os.path.join(out, f"{i}.json"))
    last_s = lines[-1]["seconds"]
    inside = [l for l in lines if t0 <= end_wall - (last_s - l["seconds"]) <= t1]
    if len(inside) < 2:
        rates.append(0.0); continue
    a, b = inside[0], inside[-1]
    rates.append((b["step"] - a["step"]) / (b["seconds"] - a["seconds"]))
    globals_.append((b["global_step"] - a["global_step"]) / (b["seconds"] - a["seconds"]))
window = t1 - t0
steps = sum(rates) * window
ps_cpu = [b - a for a, b in zip(c0, c1)]
row = {"model": model, "ps": p, "workers": w, "sync": sync, "slow_worker": slow,
       "steps_per_s": round(sum(rates), 1),
       "ps_cpu_us_per_worker_step": round(sum(ps_cpu) / steps * 1e6, 1) if steps else None,
       "busiest_ps_cpu_share": round(max(ps_cpu) / window, 3),
       "host_busy_share": round((hb1 - hb0) / (ht1 - ht0), 3),
       "worker_steps_per_s": [round(r, 2) for r in rates],
       "window_s": round(window, 2), "load_average": os.getloadavg()[0]}
if sync:
    row["replicas_to_aggregate"] = w + aggregate
    row["global_steps_per_s"] = round(max(globals_), 2) if globals_ else None
if slow and w > 1:
    others = [r for i, r in enumerate(rates) if i != 1]
    row["others_steps_per_s"] = round(sum(others), 1)
    row["slow_worker_steps_per_s"] = round(rates[1], 2)
print(json.dumps(row))
if path:
    with open(path, "a") as f: f.write(json.dumps(row) + "\n")
EOF
}

IFS=, read -ra ps_counts <<<"$ps_list"
IFS=, read -ra worker_counts <<<"$worker_list"
for p in "${ps_counts[@]}"; do
  for w in "${worker_counts[@]}"; do measure "$p" "$w"; done
done
