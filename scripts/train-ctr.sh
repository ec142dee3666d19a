#!/usr/bin/env bash
# The wide & deep CTR example on a local cluster: builds tfd, writes
# synthetic Criteo-format click data into data/ctr (with the peer benchmark's
# generator, ../shared/peers/torch_peers_bench.py ctr_data, when
# /usr/bin/python3 can import torch; else with scripts/ctr-synth.py), starts
# 2 ps tasks and 2 workers with `tfctl start`, trains on both workers
# (between-graph: one graph file for all), prints the held-out AUC and stops
# the cluster.
#
#   ./scripts/train-ctr.sh                         # async, 200000 examples, 1 epoch
#   ./scripts/train-ctr.sh --sync --steps 300      # synchronous replicas
#   ./scripts/train-ctr.sh --ps 1 --workers 1 --examples 50000
#   ./scripts/train-ctr.sh --train day_0 --eval day_1_head --eval-examples 32768
#                                                  # your own Criteo files, in data/ctr
#
# --vocab (default 2^20, the peer's) sets the rows of both tables: 64 MiB of
# embeddings and as much again of Adagrad sums, split over the ps tasks; a
# step moves only the rows its batch touches, whatever the vocabulary.
# Logs, pid files and the graph stay in run/ctr/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

ps=2 workers=2 sync="" steps=0 epochs=1 vocab=1048576 examples=200000 eval_examples=32768
batch=512 train="" eval=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ps) ps="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --sync) sync="--sync"; shift ;;
    --steps) steps="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --vocab) vocab="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    --examples) examples="$2"; shift 2 ;;
    --train) train="$2"; shift 2 ;;
    --eval) eval="$2"; shift 2 ;;
    --eval-examples) eval_examples="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "train-ctr: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -n $sync && $steps -eq 0 ]]; then
  echo "train-ctr: --sync needs --steps N (synchronous replicas end at a global step)" >&2
  exit 2
fi

./scripts/install-deps.sh
[[ -f build/build.ninja ]] || meson setup build --buildtype=release
ninja -C build -j "${TFD_JOBS:-2}" cli/tfctl daemon/tfd examples/ctr-graph

data="$root/data/ctr"
mkdir -p "$data"
if [[ -z $train ]]; then
  # Generated data, kept per generator, size and vocabulary: the hidden
  # model differs between the generators and depends on the vocabulary.
  peers="${PEERS_DIR:-$root/../shared/peers}/torch_peers_bench.py"
  gen=synth
  [[ -f $peers ]] && /usr/bin/python3 -c "import torch" 2>/dev/null && gen=peer
  train="$gen-$vocab-$examples-train.tsv" eval="$gen-$vocab-eval.tsv"
  for file in "$train" "$eval"; do
    [[ -s $data/$file ]] && continue
    n=$examples seed=1
    [[ $file == "$eval" ]] && n=$eval_examples seed=999
    if [[ $gen == peer ]]; then
      PEERS_RESULTS="$data/peers-results.jsonl" /usr/bin/python3 "$peers" ctr_data --n "$n" \
        --seed "$seed" --vocab "$vocab" --out "$data/$file.tmp"
    else
      python3 scripts/ctr-synth.py --n "$n" --seed "$seed" --vocab "$vocab" --out "$data/$file.tmp"
    fi
    mv "$data/$file.tmp" "$data/$file"
  done
  eval_examples=$(wc -l <"$data/$eval")
elif [[ -z $eval ]]; then
  echo "train-ctr: --train needs --eval (a held-out file in data/ctr)" >&2
  exit 2
fi

tfctl="$root/build/cli/tfctl"
run_dir="$root/run/ctr"
mkdir -p "$run_dir"
source scripts/cluster-lib.sh
cluster_spec ps="$ps" worker="$workers"
stop() { "$tfctl" stop --cluster "$spec" --run-dir "$run_dir" || true; }
trap stop EXIT
echo "cluster: $spec (logs in run/ctr/)"
"$tfctl" start --cluster "$spec" --run-dir "$run_dir" --tfd "$root/build/daemon/tfd" \
  --tfd-flag="--data-dir=$data"

./build/examples/ctr-graph --ps-tasks "$ps" --workers "$workers" $sync --steps "$steps" \
  --epochs "$epochs" --vocab "$vocab" --batch-size "$batch" --train "$train" --eval "$eval" \
  --eval-examples "$eval_examples" -o "$run_dir/ctr.capnp"

# Every worker trains; worker 0 (the chief) initializes and reports the AUC.
pids=()
for ((i = 1; i < workers; i++)); do
  "$tfctl" train "$run_dir/ctr.capnp" --target "$(address worker "$i")" \
    >"$run_dir/train-worker-$i.out" 2>"$run_dir/train-worker-$i.err" &
  pids+=($!)
done
status=0
"$tfctl" train "$run_dir/ctr.capnp" --target "$(address worker 0)" || status=$?
for ((i = 1; i < workers; i++)); do
  if ! wait "${pids[$((i - 1))]}"; then
    status=1
    cat "$run_dir/train-worker-$i.err" >&2
  fi
  cat "$run_dir/train-worker-$i.out"
done
exit "$status"
