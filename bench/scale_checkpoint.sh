#!/usr/bin/env bash
# scale_checkpoint: a cluster checkpoint of the same total bytes held by 1,
# 4 and 16 ps (issue 39's "checkpoint against the number of ps"). For each
# ps count P, P ps and one worker started with tfctl, one float32 variable
# of TOTAL/P bytes on each ps filled with 1.0, then `tfctl checkpoint save`
# and `restore` through the worker ROUNDS times; prints the median wall time
# of each (tfctl's own start and connection included, ~10 ms).
#
#   bench/scale_checkpoint.sh [TOTAL_MIB (default 64)] [ROUNDS (default 5)]
#
# Uses build/cli/tfctl and build/daemon/tfd unless TFCTL and TFD say
# otherwise; checkpoints go to a directory under $TMPDIR (or /tmp), whose
# disk, or page cache, is part of the figure.
set -eu
total_mib=${1:-64}
rounds=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
TFCTL=${TFCTL:-$here/build/cli/tfctl}
TFD=${TFD:-$here/build/daemon/tfd}
source "$here/scripts/cluster-lib.sh"
work=$(mktemp -d)
trap '"$TFCTL" stop --cluster "$spec" --run-dir "$work/run" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# graph P ELEMENTS: a variable of ELEMENTS floats on each of P ps, and `init`.
graph() {
  local p=$1 elements=$2 i deps=""
  echo "( nodes = ["
  for ((i = 0; i < p; i++)); do
    local d="/job:ps/task:$i"
    echo "( name = \"v$i\", op = \"VariableV2\", device = \"$d\", attrs = [(name = \"dtype\", value = (type = float32)), (name = \"shape\", value = (shape = (dims = [$elements])))] ),"
    echo "( name = \"dims$i\", op = \"Const\", device = \"$d\", attrs = [(name = \"dtype\", value = (type = int32)), (name = \"value\", value = (tensor = (dtype = int32, shape = [1], int32Val = [$elements])))] ),"
    echo "( name = \"one$i\", op = \"Const\", device = \"$d\", attrs = [(name = \"dtype\", value = (type = float32)), (name = \"value\", value = (tensor = (dtype = float32, shape = [], floatVal = [1])))] ),"
    echo "( name = \"fill$i\", op = \"Fill\", device = \"$d\", inputs = [\"dims$i\", \"one$i\"] ),"
    echo "( name = \"init$i\", op = \"Assign\", device = \"$d\", inputs = [\"v$i\", \"fill$i\"] ),"
    deps="$deps${deps:+, }\"^init$i\""
  done
  echo "( name = \"init\", op = \"NoOp\", device = \"/job:worker/task:0\", inputs = [$deps] ) ] )"
}

# median of the numbers on stdin
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "checkpoint of ${total_mib} MiB in all, median of $rounds rounds ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for p in 1 4 16; do
  rm -rf "$work/run" "$work/ckpt"
  cluster_spec ps=$p worker=1
  "$TFCTL" start --cluster "$spec" --run-dir "$work/run" --tfd "$TFD" \
    --tfd-flag=--checkpoint-dir="$work/ckpt" --tfd-flag=--log-level=warn >/dev/null
  target=$(address worker 0)
  graph "$p" $((total_mib * 1024 * 1024 / 4 / p)) >"$work/graph.txt"
  "$TFCTL" submit "$work/graph.txt" --target "$target" --run init --timeout 120 >/dev/null
  saves="" restores=""
  for ((r = 0; r < rounds; r++)); do
    start=$(date +%s.%N)
    "$TFCTL" checkpoint save --target "$target" --timeout 120 >/dev/null
    saves="$saves $(echo "$(date +%s.%N) - $start" | bc)"
    start=$(date +%s.%N)
    "$TFCTL" checkpoint restore --target "$target" --timeout 120 >/dev/null
    restores="$restores $(echo "$(date +%s.%N) - $start" | bc)"
  done
  printf '%2d ps: save %.3f s, restore %.3f s\n' "$p" \
    "$(tr ' ' '\n' <<<"$saves" | grep . | median)" "$(tr ' ' '\n' <<<"$restores" | grep . | median)"
  "$TFCTL" stop --cluster "$spec" --run-dir "$work/run" >/dev/null
done
