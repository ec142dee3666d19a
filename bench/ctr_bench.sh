#!/usr/bin/env bash
# ctr_bench: the wide & deep CTR example (examples/ctr) trained by tfd
# beside the torch peers `ctr` and `ctr_ps` (../shared/peers), in one
# sitting, on the peer's synthetic Criteo data (torch_peers_bench.py
# ctr_data: the same rows, the same hidden model, the same held-out set):
#
#  - one process: `tfctl train` hosting its single worker task itself
#    (tfd's flags after --), --threads 1, the graph with no ps task;
#  - 2 ps + 1 worker and 2 ps + 2 asynchronous workers, each task a tfd
#    daemon, each pinned to the CPUs given (--cpus);
#
# each at the vocabularies given (default 2^14 and 2^20, 100x apart, which
# should cost the same per step: only a batch's distinct rows travel). Every
# tfd run trains the same examples per worker (--examples), and the peers
# are capped at the same steps, so the held-out AUCs compare after the same
# data; the oracle AUC (the hidden logit's) is the best reachable. Per run:
# examples/s per worker (tfctl train's mean steps/s x 512, so the first
# steps' set-up counts), the worker's data-plane bytes per step (sent plus
# received, from its /metrics), and the held-out AUC. Results: one JSON
# line per run in OUT/results.jsonl, the peers' in OUT/peers.jsonl.
#
#   bench/ctr_bench.sh                                  # build/, 51200 examples
#   bench/ctr_bench.sh --examples 102400 --vocabs "16384 1048576" --peers 0
#
# Exit status: 0 when every run finished (targets are reported, not
# failed), 1 when one did not, 2 for bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

build="$root/build" examples=51200 vocabs="16384 1048576" peers=1 cpus="0,1"
out="$root/run/ctr-bench"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --examples) examples="$2"; shift 2 ;;
    --vocabs) vocabs="$2"; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    --cpus) cpus="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "ctr_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
batch=512 eval_examples=32768
if (( examples < batch || examples % batch != 0 )); then
  echo "ctr_bench: --examples must be a positive multiple of $batch, not $examples" >&2
  exit 2
fi
steps=$(( examples / batch ))
peers_py="${PEERS_DIR:-$root/../shared/peers}/torch_peers_bench.py"
if ! /usr/bin/python3 -c "import torch" 2>/dev/null || [[ ! -f $peers_py ]]; then
  echo "ctr_bench: needs $peers_py and /usr/bin/python3 with torch (the data generator)" >&2
  exit 1
fi
tfd="$build/daemon/tfd" tfctl="$build/cli/tfctl" graph="$build/examples/ctr-graph"
for b in "$tfd" "$tfctl" "$graph"; do
  [[ -x $b ]] || { echo "ctr_bench: $b is not built" >&2; exit 1; }
done
mkdir -p "$out/data"
results="$out/results.jsonl"
: >"$results"
source scripts/cluster-lib.sh

pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT

# The peer's data for vocabulary $1: 2 x --examples training lines (stream
# 1; with 2 workers each reads every other line) and the held-out set.
make_data() {
  local v="$1" file n seed
  for file in "train-$v-$examples" "eval-$v"; do
    [[ -s $out/data/$file.tsv ]] && continue
    n=$(( 2 * examples )) seed=1
    [[ $file == eval-* ]] && n=$eval_examples seed=999
    PEERS_RESULTS=/dev/null /usr/bin/python3 "$peers_py" ctr_data --n "$n" --seed "$seed" \
      --vocab "$v" --out "$out/data/$file.tmp" >/dev/null
    mv "$out/data/$file.tmp" "$out/data/$file.tsv"
  done
}

# The graph for vocabulary $1 over $2 ps tasks and $3 workers.
write_graph() {
  "$graph" --ps-tasks "$2" --workers "$3" --vocab "$1" --train "train-$1-$examples.tsv" \
    --eval "eval-$1.tsv" --eval-examples "$eval_examples" -o "$out/ctr-$1-$2-$3.capnp"
}

# Sum of the data plane's sent and received bytes on the /metrics page at $1.
plane_bytes() {
  curl -sf --max-time 10 "http://$1/metrics" |
    awk '/^tfd_data_plane_(sent|received)_bytes_total/ { s += $NF } END { printf "%.0f", s }'
}

# A free port for a task's /metrics that is none of the cluster's (which
# are not bound yet) nor another task's.
http_port() {
  local port
  while :; do
    port=$(free_port)
    [[ $spec != *":$port\""* && " ${http[*]} " != *":$port "* ]] && break
  done
  echo "$port"
}

# Waits (30 s at most) until the /healthz at $1 answers.
wait_healthy() {
  local i
  for i in $(seq 1 300); do
    curl -sf --max-time 1 "http://$1/healthz" >/dev/null && return 0
    sleep 0.1
  done
  echo "ctr_bench: no tfd answered at $1 within 30 s" >&2
  return 1
}

# One line of results.jsonl from tfctl train's JSON (the chief's is $1).
record() {  # record CONFIG VOCAB WORKERS DONE_JSON BYTES_PER_STEP
  python3 - "$@" >>"$results" <<'EOF'
import json, sys
config, vocab, workers, done, bytes_per_step = sys.argv[1:6]
d = json.loads(done)
print(json.dumps({"test": "ctr_tfd", "config": config, "vocab": int(vocab),
                  "workers": int(workers), "steps": d["step"],
                  "examples_per_s_per_worker": round(d["mean_steps_per_second"] * 512),
                  "bytes_per_step": None if bytes_per_step == "" else int(float(bytes_per_step)),
                  "auc": d["auc"]}))
EOF
}

# One process: tfctl train hosts the only task.
run_local() {
  local v="$1" port done
  write_graph "$v" 0 1
  port=$(free_port)
  done=$(taskset -c "${cpus%%,*}" "$tfctl" train "$out/ctr-$v-0-1.capnp" --output json \
    --steps "$steps" -- --cluster "{\"worker\": [\"127.0.0.1:$port\"]}" --job worker \
    --task 0 --data-dir "$out/data" --threads 1 | tail -1)
  record local "$v" 1 "$done" ""
}

# 2 ps tasks and $2 asynchronous workers, each worker training --examples.
run_cluster() {
  local v="$1" nw="$2" job i http=() before after done cpu_list
  IFS=, read -r -a cpu_list <<<"$cpus"
  write_graph "$v" 2 "$nw"
  cluster_spec ps=2 worker="$nw"
  i=0
  for job in ps:0 ps:1 worker:0 worker:1; do
    [[ $job == worker:1 && $nw -lt 2 ]] && continue
    http+=("127.0.0.1:$(http_port)")
    taskset -c "${cpu_list[$(( i % ${#cpu_list[@]} ))]}" "$tfd" --cluster "$spec" \
      --job "${job%%:*}" --task "${job##*:}" --data-dir "$out/data" \
      --http-listen "${http[$i]}" >"$out/tfd-$v-$nw-${job/:/-}.log" 2>&1 &
    pids+=($!)
    i=$(( i + 1 ))
  done
  for i in "${!http[@]}"; do wait_healthy "${http[$i]}"; done
  before=$(plane_bytes "${http[2]}")
  local trainers=()
  for (( i = 1; i < nw; i++ )); do
    "$tfctl" train "$out/ctr-$v-2-$nw.capnp" --output json --steps $(( nw * steps )) \
      --no-eval --target "$(address worker "$i")" >"$out/train-$v-$nw-$i.json" &
    trainers+=($!)
  done
  done=$("$tfctl" train "$out/ctr-$v-2-$nw.capnp" --output json --steps $(( nw * steps )) \
    --no-eval --target "$(address worker 0)" | tail -1)
  for p in "${trainers[@]}"; do wait "$p"; done
  after=$(plane_bytes "${http[2]}")
  local local_steps per_step="" evaluated
  local_steps=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["step"])' "$done")
  (( local_steps > 0 )) && per_step=$(( (after - before) / local_steps ))
  # The AUC, outside the bytes counted: the chief again, which finds the
  # last step reached (and the variables initialized) and evaluates.
  evaluated=$("$tfctl" train "$out/ctr-$v-2-$nw.capnp" --output json --steps $(( nw * steps )) \
    --target "$(address worker 0)" | tail -1)
  done=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); e=json.loads(sys.argv[2]);
assert not e["initialized"], "the evaluating run initialized the variables again"
d["auc"]=e["auc"]; print(json.dumps(d))' "$done" "$evaluated")
  record "2ps-${nw}w" "$v" "$nw" "$done" "$per_step"
  stop_all
}

echo "ctr_bench: $(uptime)"
for v in $vocabs; do
  make_data "$v"
  run_local "$v"
  run_cluster "$v" 1
  run_cluster "$v" 2
done
cat "$results"

if [[ $peers == 1 ]]; then
  # The peers at the largest vocabulary (theirs), capped at the same
  # examples (they train 3 steps before the timed ones).
  v="${vocabs##* }"
  : >"$out/peers.jsonl"
  port=29700
  for cmd in ctr "ctr_ps --workers 1" "ctr_ps --workers 2"; do
    port=$(( port + 7 ))
    # shellcheck disable=SC2086
    PEERS_RESULTS="$out/peers.jsonl" timeout 600 /usr/bin/python3 "$peers_py" $cmd \
      --vocab "$v" --steps $(( steps - 3 )) --seconds 100000 --port "$port" >/dev/null
  done
  cat "$out/peers.jsonl"
fi
echo "ctr_bench: $(uptime)"
