#!/usr/bin/env bash
# The recurrent example (examples/rnn: a GRU unrolled by a while loop on the
# adding problem) on a local cluster: builds tfd, starts 1 ps task and 1
# worker with `tfctl start`, trains on the worker with `tfctl train` (the
# graph draws its own sequences, so there is no data to fetch), prints the
# held-out accuracy and stops the cluster. With --local it trains in this
# process instead (`tfctl run`), no cluster at all.
#
#   ./scripts/train-rnn.sh                              # 1000 steps on 1 ps + 1 worker
#   ./scripts/train-rnn.sh --steps 3000 --time-steps 30 --hidden 64
#   ./scripts/train-rnn.sh --local                      # in one process
#
# Logs, pid files and the graph stay in run/rnn/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

steps=1000 time_steps=12 hidden=32 local=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --time-steps) time_steps="$2"; shift 2 ;;
    --hidden) hidden="$2"; shift 2 ;;
    --local) local=true; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "train-rnn: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

./scripts/install-deps.sh
[[ -f build/build.ninja ]] || meson setup build --buildtype=release
ninja -C build -j "${TFD_JOBS:-2}" cli/tfctl daemon/tfd examples/rnn-graph

tfctl="$root/build/cli/tfctl"
run_dir="$root/run/rnn"
mkdir -p "$run_dir"
ps_tasks=1
$local && ps_tasks=0
./build/examples/rnn-graph --ps-tasks "$ps_tasks" --steps "$steps" --time-steps "$time_steps" \
  --hidden "$hidden" -o "$run_dir/rnn.capnp"

if $local; then
  # Every node in this process; the loss and accuracy after the last step.
  "$tfctl" run "$run_dir/rnn.capnp" --init init --target train --steps "$steps" \
    --fetch loss --fetch eval/accuracy
  exit 0
fi

source scripts/cluster-lib.sh
cluster_spec ps=1 worker=1
stop() { "$tfctl" stop --cluster "$spec" --run-dir "$run_dir" || true; }
trap stop EXIT
echo "cluster: $spec (logs in run/rnn/)"
"$tfctl" start --cluster "$spec" --run-dir "$run_dir" --tfd "$root/build/daemon/tfd"
"$tfctl" train "$run_dir/rnn.capnp" --target "$(address worker 0)"
