#!/usr/bin/env bash
# ctr_big_table: the wide & deep example (examples/ctr) with a table larger
# than any one ps may hold (issue 36): by default 2^26 rows x 16 float32
# (4 GiB, 8 GiB with Adagrad's accumulator) split over 4 ps tasks, each with
# --memory-budget 3G, and 1 worker, checkpoints on (--checkpoint-keep 2).
#
# Each table is cut into --shards shards (default 16: 4 per ps, 256 MiB of
# embeddings each), so that a shard's initialization, which holds its random
# values and their scaled copy at once, stays well inside the budget.
#
#  1. trains --steps steps with a checkpoint every --every steps;
#  2. saves once more by hand (timed), then kill -9 of every task (or of
#     ps:0 alone with --kill ps);
#  3. restarts them: each restores its newest checkpoint on start (timed,
#     until the cluster answers), and trains on for --more steps (the
#     trainer restores that step on every task, then steps on).
#
# Printed: per ps, RSS and budget use from /metrics after each phase; the
# checkpoint's size; save and restart seconds; steps/s and held-out AUC of
# both phases. A JSON line with the same goes to OUT/results.jsonl.
#
#   bench/ctr_big_table.sh                                  # 2^26 rows, 4 ps, 3G each
#   bench/ctr_big_table.sh --vocab 4194304 --budget 192M    # the same at 1/16 scale
#
# Needs ~18 GiB of free memory at the default scale (the 4 ps hold 8.5 GiB,
# twice that while a restore reads the checkpoint before it replaces the
# values) and ~30 GiB of disk under OUT (two checkpoints kept, a third while
# saving). The run is killed when less than --min-free GiB (default 3) of
# the machine's memory is left.
# Exit status: 0 when both phases trained, 1 when something failed, 2 for
# bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

build="$root/build" vocab=67108864 ps=4 shards=16 budget=3G steps=200 every=200 more=200 kill=all
min_free=3
out="$root/run/ctr-big-table"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --vocab) vocab="$2"; shift 2 ;;
    --ps) ps="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --every) every="$2"; shift 2 ;;
    --more) more="$2"; shift 2 ;;
    --kill) kill="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --min-free) min_free="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "ctr_big_table: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ $kill != all && $kill != ps ]]; then
  echo "ctr_big_table: --kill must be 'all' or 'ps', not '$kill'" >&2
  exit 2
fi
batch=512 eval_examples=16384
tfd="$build/daemon/tfd" tfctl="$build/cli/tfctl" graph_tool="$build/examples/ctr-graph"
for b in "$tfd" "$tfctl" "$graph_tool"; do
  [[ -x $b ]] || { echo "ctr_big_table: $b is not built" >&2; exit 1; }
done

source scripts/cluster-lib.sh
rm -rf "$out/ckpt" "$out/logs"
mkdir -p "$out/data" "$out/ckpt" "$out/logs"
train_file="train-$vocab-$(( (steps + more) * batch )).tsv" eval_file="eval-$vocab.tsv"
[[ -s $out/data/$train_file ]] || python3 scripts/ctr-synth.py --n $(( (steps + more) * batch )) \
  --seed 1 --vocab "$vocab" --out "$out/data/$train_file" >/dev/null
[[ -s $out/data/$eval_file ]] || python3 scripts/ctr-synth.py --n "$eval_examples" --seed 999 \
  --vocab "$vocab" --out "$out/data/$eval_file" >/dev/null

cluster_spec ps="$ps" worker=1
target=$(address worker 0)
declare -A pid http
tasks=(worker:0)
for ((i = 0; i < ps; i++)); do tasks+=("ps:$i"); done
for t in "${tasks[@]}"; do http[$t]="127.0.0.1:$(free_port)"; done

# start TASK...: tfd for each (job:index), in the background.
start() {
  local t
  for t in "$@"; do
    "$tfd" --cluster "$spec" --job "${t%%:*}" --task "${t##*:}" --data-dir "$out/data" \
      --checkpoint-dir "$out/ckpt" --checkpoint-keep 2 --memory-budget "$budget" \
      --http-listen "${http[$t]}" --log-level info >>"$out/logs/${t/:/-}.log" 2>&1 &
    pid[$t]=$!
  done
}
stop_all() {
  local t
  if [[ -n ${watchdog_pid:-} ]]; then kill "$watchdog_pid" 2>/dev/null || true; fi
  for t in "${tasks[@]}"; do kill "${pid[$t]}" 2>/dev/null || true; done
  for t in "${tasks[@]}"; do wait "${pid[$t]}" 2>/dev/null || true; done
}
trap stop_all EXIT
# running TASK...: fails unless each task's tfd is still running (a port
# taken since free_port looked makes tfd exit, and another process on it
# could even answer for it).
running() {
  local t
  for t in "$@"; do
    kill -0 "${pid[$t]}" 2>/dev/null && continue
    echo "ctr_big_table: $t exited: $(tail -n 1 "$out/logs/${t/:/-}.log")" >&2
    exit 1
  done
}
# A watchdog for a shared machine: when less than --min-free GiB of memory
# is left available, every task of the run is killed (-9) and the run fails.
watchdog() {
  local kb t
  while sleep 1; do
    read -r _ kb _ < <(grep MemAvailable /proc/meminfo)
    (( kb >> 20 >= min_free )) && continue
    echo "ctr_big_table: under $min_free GiB of memory left: killing the cluster" >&2
    for t in "${tasks[@]}"; do kill -9 "${pid[$t]}" 2>/dev/null || true; done
    return
  done
}
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

# metric TASK NAME: the value of one gauge on TASK's /metrics.
metric() {
  curl -s "http://${http[$1]}/metrics" | awk -v n="$2" '$1 == n { printf "%.0f", $2 }'
}
# memory LABEL: each ps's RSS and budget use, in MiB, as one JSON object.
memory() {
  local i json="" rss used
  for ((i = 0; i < ps; i++)); do
    rss=$(metric "ps:$i" process_resident_memory_bytes)
    used=$(metric "ps:$i" tfd_memory_budget_used_bytes)
    printf '  %-22s ps:%d RSS %6d MiB, budget used %6d MiB\n' "$1" "$i" \
      $(( rss >> 20 )) $(( used >> 20 )) >&2
    json="$json${json:+, }\"ps$i\": {\"rss_mib\": $(( rss >> 20 )), \"budget_mib\": $(( used >> 20 ))}"
  done
  echo "{$json}"
}
# train STEPS: tfctl train to global step STEPS; its done record.
train() {
  "$tfctl" train "$out/ctr.capnp" --target "$target" --steps "$1" --checkpoint-every "$every" \
    --output json --init-timeout 600 --step-timeout 600 --timeout 600 >"$out/logs/train-$1.jsonl"
  tail -n 1 "$out/logs/train-$1.jsonl"
}
# done RECORD: fails unless RECORD is a trainer's "done" record.
done_or_fail() {
  [[ $(field "$1" event) == done ]] && return 0
  echo "ctr_big_table: training failed: $1" >&2
  exit 1
}
field() { python3 -c "import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))" "$1" "$2"; }

echo "ctr_big_table: vocab $vocab x 16 float32 over $ps ps, --memory-budget $budget each;" \
  "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start "${tasks[@]}"
watchdog &
watchdog_pid=$!
"$tfctl" wait cluster --target "$target" --timeout 120 >/dev/null
running "${tasks[@]}"
"$graph_tool" --ps-tasks "$ps" --table-shards "$shards" --workers 1 --vocab "$vocab" \
  --batch-size "$batch" \
  --train "$train_file" --eval "$eval_file" --eval-examples "$eval_examples" -o "$out/ctr.capnp"

t0=$(now)
first=$(train "$steps")
first_seconds=$(since "$t0")
echo "  phase 1: $first" >&2
done_or_fail "$first"
mem1=$(memory "after $steps steps")
t0=$(now)
"$tfctl" checkpoint save --target "$target" --timeout 300 >/dev/null
save_seconds=$(since "$t0")
ckpt_bytes=$(find "$out/ckpt" -name "ckpt-$steps.tfdckpt" -printf '%s\n' | paste -sd+ | bc)
on_disk=$(du -sb "$out/ckpt" | cut -f1)

killed=("${tasks[@]}")
[[ $kill == ps ]] && killed=(ps:0)
for t in "${killed[@]}"; do kill -9 "${pid[$t]}"; wait "${pid[$t]}" 2>/dev/null || true; done
t0=$(now)
start "${killed[@]}"
kill "$watchdog_pid" 2>/dev/null || true
watchdog &
watchdog_pid=$!
"$tfctl" wait cluster --target "$target" --timeout 600 >/dev/null
restart_seconds=$(since "$t0")
running "${tasks[@]}"
mem2=$(memory "restarted")
t0=$(now)
second=$(train $(( steps + more )))
second_seconds=$(since "$t0")
echo "  phase 2: $second" >&2
done_or_fail "$second"
mem3=$(memory "after $more more")

result=$(python3 - "$first" "$second" <<EOF
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({
  "vocab": $vocab, "ps": $ps, "budget": "$budget", "killed": "$kill",
  "steps_per_s_before": a["mean_steps_per_second"], "steps_per_s_after": b["mean_steps_per_second"],
  "auc_before": a["auc"], "auc_after": b["auc"], "global_step": b["global_step"],
  "restored": b["restored_checkpoints"], "checkpoints_saved": a["checkpoints"] + b["checkpoints"],
  "phase_seconds": [$first_seconds, $second_seconds],
  "checkpoint_bytes": $ckpt_bytes, "checkpoint_dir_bytes": $on_disk,
  "save_seconds": $save_seconds, "restart_seconds": $restart_seconds,
  "memory": {"trained": $mem1, "restarted": $mem2, "trained_on": $mem3}}))
EOF
)
echo "$result" >>"$out/results.jsonl"
printf 'checkpoint %s GiB (%s GiB kept on disk), save %.1f s, restart with restore %.1f s\n' \
  "$(echo "scale=2; $ckpt_bytes / 2^30" | bc)" "$(echo "scale=2; $on_disk / 2^30" | bc)" \
  "$save_seconds" "$restart_seconds"
printf 'steps/s %.2f before, %.2f after; AUC %.4f before, %.4f after; global step %s\n' \
  "$(field "$first" mean_steps_per_second)" "$(field "$second" mean_steps_per_second)" \
  "$(field "$first" auc)" "$(field "$second" auc)" "$(field "$second" global_step)"
echo "$result"
