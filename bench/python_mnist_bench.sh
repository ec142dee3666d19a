#!/bin/bash
# python_mnist_bench.sh: classic MNIST trained by `tfctl train` and by
# examples/python/mnist.py on the same graph, alternated (issue 38's
# "≥ 0.9× tfctl train"). Each run gets a fresh cluster of 1 ps and 2 workers
# on free loopback ports, one trainer per worker; each prints one line per
# worker: the run, the kind (cpp or python), the worker, its steps/s from
# its first step, the test accuracy, and the trainer process's counters
# from /usr/bin/time over its whole life (start and evaluation included):
# context switches per step (voluntary + involuntary) and CPU per step.
#
#   bench/python_mnist_bench.sh [BUILD [DATA [EPOCHS [PAIRS]]]]
#       BUILD   the build directory (default build)
#       DATA    a directory with scripts/get-mnist.sh's files (default data/mnist)
#       EPOCHS  default 20; PAIRS (cpp then python) default 3
#   PYTHON_BASELINE=DIR adds a third run to each round: the Python side on
#   another build's package (a before, against this build's after).
#
# Every daemon it starts, it stops. Exit status 1 when a run failed.
set -u
B=${1:-build}; DATA=${2:-data/mnist}; EPOCHS=${3:-20}; PAIRS=${4:-3}
BASELINE=${PYTHON_BASELINE:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d); PIDS=()
trap 'stop; rm -rf "$OUT"' EXIT

port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() {
  local p w0 w1
  p=$(port); w0=$(port); w1=$(port)
  SPEC="{\"ps\":[\"127.0.0.1:$p\"],\"worker\":[\"127.0.0.1:$w0\",\"127.0.0.1:$w1\"]}"
  WORKERS=("127.0.0.1:$w0" "127.0.0.1:$w1"); PIDS=()
  for jt in ps:0 worker:0 worker:1; do
    "$B/daemon/tfd" --cluster "$SPEC" --job "${jt%:*}" --task "${jt#*:}" --data-dir "$DATA" \
        > "$OUT/${jt/:/}.log" 2>&1 &
    PIDS+=($!)
  done
}
stop() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  PIDS=()
}
# run KIND N: one trainer per worker, in parallel; prints a line per worker.
run() {
  local kind=$1 n=$2 a rc=0
  start
  for i in 0 1; do
    if [ "$kind" = cpp ]; then
      /usr/bin/time -f '%w %c %U %S' -o "$OUT/$kind$i.time" \
      "$B/cli/tfctl" train "$OUT/classic.capnp" --target "${WORKERS[$i]}" --timeout 60 \
          --output json > "$OUT/$kind$i.json" 2> "$OUT/$kind$i.err" &
    else
      local pkg=$B/python
      [ "$kind" = baseline ] && pkg=$BASELINE
      PYTHONPATH=$pkg /usr/bin/time -f '%w %c %U %S' -o "$OUT/$kind$i.time" /usr/bin/python3 "$HERE/examples/python/mnist.py" --target "${WORKERS[$i]}" \
          --worker "$i" --epochs "$EPOCHS" > "$OUT/$kind$i.json" 2> "$OUT/$kind$i.err" &
    fi
    a[$i]=$!
  done
  wait "${a[0]}" || rc=1
  wait "${a[1]}" || rc=1
  stop
  for i in 0 1; do
    /usr/bin/python3 - "$OUT/$kind$i" "$kind" "$i" "$n" <<'EOF' || rc=1
import json, sys
path, kind, worker, n = sys.argv[1:]
r = json.loads([l for l in open(path + ".json") if l.startswith("{")][-1])
rate = r["mean_steps_per_second"] if "mean_steps_per_second" in r else r["steps_per_second"]
steps = r["local_steps"] if "local_steps" in r else r["step"]  # python, tfctl
voluntary, involuntary, user, system = open(path + ".time").read().split()[-4:]
print("run %s %-8s worker %s  %6.1f steps/s  accuracy %.4f  %5.2f switches/step  %4.0f us CPU/step"
      % (n, kind, worker, rate, r["accuracy"], (int(voluntary) + int(involuntary)) / steps,
         (float(user) + float(system)) / steps * 1e6))
EOF
  done
  [ $rc = 0 ] || { echo "run $n $kind failed:"; tail -n 5 "$OUT/$kind"*.err; }
  return $rc
}

"$B/examples/mnist-graph" --model classic --workers 2 --ps-tasks 1 --epochs "$EPOCHS" \
    -o "$OUT/classic.capnp" > /dev/null || exit 1
status=0
for n in $(seq 1 "$PAIRS"); do
  run cpp "$n" || status=1
  run python "$n" || status=1
  if [ -n "$BASELINE" ]; then run baseline "$n" || status=1; fi
done
exit $status
