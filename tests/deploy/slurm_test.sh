#!/usr/bin/env bash
# deploy/slurm with faked SLURM_* variables, no Slurm needed:
# - tfd.sbatch's spec logic (sourced): node lists expanded as Slurm does
#   (here, and through scontrol when there is one), tasks per node, the
#   layout of SlurmClusterResolver (nodes in order, ports from the base,
#   jobs by name take the tasks in turn), and the errors for allocations
#   that do not add up;
# - tfd-slurm-task: the job, task and port of SLURM_PROCID, refused on
#   another node, GPUs per task;
# - the whole script: a stand-in srun that runs the tasks here, the real
#   tfd and tfctl, MNIST-shaped data it writes and the mnist graph: it
#   trains, and leaves no tfd running.
# Output is TAP, for meson.
#
#   SRC_ROOT=. TFD=build/daemon/tfd TFCTL=build/cli/tfctl \
#     MNIST_GRAPH=build/examples/mnist-graph bash tests/deploy/slurm_test.sh
set -u

SRC=$(realpath "${SRC_ROOT:?set SRC_ROOT to the source tree}")
: "${TFD:?}" "${TFCTL:?}" "${MNIST_GRAPH:?}"
SBATCH=$SRC/deploy/slurm/tfd.sbatch

work=$(mktemp -d)
cleanup() {
  # Whatever the stand-in srun started and did not stop (a failed run).
  if [[ -f $work/srun.pids ]]; then
    while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$work/srun.pids"
  fi
  [[ -n ${KEEP_WORK:-} ]] && echo "# kept $work" || rm -rf "$work"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# The functions, with no scontrol on PATH (the fallback expansion).
mkdir -p "$work/nobin"
for tool in awk sed sort tr wc od head cat mkdir; do ln -s "$(command -v $tool)" "$work/nobin/$tool"; done
# shellcheck source=deploy/slurm/tfd.sbatch
source "$SBATCH"
slurm() { (PATH=$work/nobin; "$@"); }
words() { tr '\n' ' ' | sed 's/ $//'; }

for case in \
  "node[01-03,07]|node01 node02 node03 node07" \
  "a[1-2],b5,c[3-4,6]|a1 a2 b5 c3 c4 c6" \
  "n[8-11]|n8 n9 n10 n11" \
  "n[098-101]|n098 n099 n100 n101" \
  "rack[1-2]-n[1-2]|rack1-n1 rack1-n2 rack2-n1 rack2-n2" \
  "node9,node10|node9 node10" \
  "login|login"; do
  list=${case%%|*}
  expect "node list $list expands (no scontrol)" "${case#*|}" "$(slurm tfd_slurm_hostnames "$list" | words)"
done
for bad in "node[1-" "node]1[" "node[3-1]" "node[a-b]" "a,,b" "n[1-2-3]"; do
  err=$(slurm tfd_slurm_hostnames "$bad" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 2 && $err == *"cannot read the node list '$bad'"* ]]; then
    pass "node list '$bad' is refused"
  else
    fail "node list '$bad' is refused (exit $rc, '$err')"
  fi
done
# scontrol, when there is one, does the expansion.
mkdir -p "$work/scontrol"
printf '#!/bin/sh\n[ "$1 $2 $3" = "show hostnames x[1-2]" ] && printf "from-scontrol-1\\nfrom-scontrol-2\\n"\n' \
  >"$work/scontrol/scontrol"
chmod +x "$work/scontrol/scontrol"
expect "scontrol show hostnames expands the list when present" "from-scontrol-1 from-scontrol-2" \
  "$(PATH=$work/scontrol:$work/nobin tfd_slurm_hostnames 'x[1-2]' | words)"

expect "tasks per node 2(x3),1" "2 2 2 1" "$(slurm tfd_slurm_tasks_per_node '2(x3),1' | words)"
expect "tasks per node 4" "4" "$(slurm tfd_slurm_tasks_per_node 4 | words)"

# layout VAR=VALUE...: the layout with only these variables set.
layout() { (unset "${!SLURM_@}" "${!TFD_SLURM_@}"; export "$@"; slurm tfd_slurm_layout); }
spec_of() { (unset "${!SLURM_@}" "${!TFD_SLURM_@}"; export "$@"; slurm tfd_slurm_spec "$(slurm tfd_slurm_layout)"); }

want='{"ps": ["node01:8888"], "worker": ["node01:8889", "node02:8888", "node02:8889"]}'
expect "2 nodes x 2 tasks, default jobs: ps=1, workers the rest, ports from 8888" "$want" \
  "$(spec_of SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4)"
expect "jobs take the tasks in the order of their names, not as listed" "$want" \
  "$(spec_of SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4 \
     TFD_SLURM_JOBS=worker=3,ps=1)"
expect "ranks: ps 0 on node01, then the workers" \
  "ps 0 node01 8888 0|worker 0 node01 8889 1|worker 1 node02 8888 0|worker 2 node02 8889 1" \
  "$(layout SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4 | tr '\n' '|' | sed 's/|$//')"
expect "uneven nodes (2,1(x2)), a chief job, port base 9000" \
  '{"chief": ["n1:9000"], "ps": ["n1:9001"], "worker": ["n2:9000", "n3:9000"]}' \
  "$(spec_of SLURM_JOB_NODELIST='n[1-3]' SLURM_TASKS_PER_NODE='2,1(x2)' SLURM_NTASKS=4 \
     TFD_SLURM_JOBS=ps=1,worker=2,chief=1 TFD_SLURM_PORT_BASE=9000)"
expect "SLURM_NTASKS_PER_NODE when SLURM_TASKS_PER_NODE is absent" \
  '{"ps": ["a:8888"], "worker": ["a:8889", "b:8888", "b:8889"]}' \
  "$(spec_of SLURM_JOB_NODELIST='a,b' SLURM_NTASKS_PER_NODE=2 SLURM_NTASKS=4)"
expect "nodes keep Slurm's order (node9 before node10), as block distribution places ranks" \
  '{"ps": ["node9:8888"], "worker": ["node10:8888"]}' \
  "$(spec_of SLURM_JOB_NODELIST='node[9-10]' SLURM_TASKS_PER_NODE='1(x2)' SLURM_NTASKS=2)"

refused() {  # refused DESCRIPTION MESSAGE VAR=VALUE...
  local what=$1 message=$2
  shift 2
  local err rc
  err=$(layout "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 2 && $err == *"$message"* ]]; then pass "$what"; else fail "$what (exit $rc, '$err')"; fi
}
refused "jobs asking for more tasks than the allocation has are refused" "asks for 5 tasks, the allocation has 4" \
  SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4 TFD_SLURM_JOBS=ps=2,worker=3
refused "tasks per node for another number of nodes are refused" "gives 3 nodes" \
  SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x3)' SLURM_NTASKS=6
refused "tasks per node that do not add up to SLURM_NTASKS are refused" "hold 4 tasks, SLURM_NTASKS is 5" \
  SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=5
refused "no SLURM_JOB_NODELIST: says what to set" "SLURM_JOB_NODELIST and SLURM_NTASKS must be set" \
  SLURM_NTASKS=4
refused "a malformed TFD_SLURM_JOBS is refused" "must be JOB=N" \
  SLURM_JOB_NODELIST=a SLURM_TASKS_PER_NODE=2 SLURM_NTASKS=2 TFD_SLURM_JOBS='ps:1,worker:1'

# Ending the srun step: SIGTERM, then SIGKILL once TFD_SLURM_STOP_TIMEOUT
# has passed, so a step that does not stop cannot hold the job. The step
# is a new bash that says when it ignores SIGTERM, and is signalled only
# then: a forked subshell signalled before its own trap still ran this
# script's EXIT trap, which removed $work under the tests that follow.
bash -c 'trap "" TERM; : >"$1"; while :; do sleep 0.05; done' stubborn "$work/stubborn.ready" &
stubborn=$!
for _ in $(seq 1 200); do [[ -e $work/stubborn.ready ]] && break; sleep 0.05; done
started=$(date +%s%N)
err=$(TFD_SLURM_STOP_TIMEOUT=1 tfd_slurm_stop "$stubborn" 2>&1)
took_ms=$((($(date +%s%N) - started) / 1000000))
# Killed, though perhaps not reaped yet: this shell is its parent, not the
# command substitution tfd_slurm_stop ran in, so it may still be a zombie.
# SIGKILL is delivered asynchronously too: the process may take a moment to
# die after tfd_slurm_stop returns, so look for up to 2 s.
killed() { ! kill -0 "$1" 2>/dev/null || [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == Z ]]; }
for _ in $(seq 1 40); do killed "$stubborn" && break; sleep 0.05; done
if killed "$stubborn" && ((took_ms < 5000)) && [[ $err == *"did not stop; killing"* ]]; then
  wait "$stubborn" 2>/dev/null
  pass "a step that ignores SIGTERM is killed after TFD_SLURM_STOP_TIMEOUT (${took_ms} ms)"
else
  fail "a step that ignores SIGTERM is killed after TFD_SLURM_STOP_TIMEOUT (${took_ms} ms, '$err')"
  kill -KILL "$stubborn" 2>/dev/null
fi

# tfd-slurm-task, with a stand-in tfd beside it that prints its arguments.
mkdir -p "$work/taskbin"
cp "$SRC/deploy/slurm/tfd-slurm-task" "$work/taskbin/"
printf '#!/bin/sh\necho "$@ gpus=${CUDA_VISIBLE_DEVICES:-none} threads=${TFD_THREADS:-unset}"\n' \
  >"$work/taskbin/tfd"
chmod +x "$work/taskbin/tfd" "$work/taskbin/tfd-slurm-task"
demo_layout=$(layout SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4)
task() {  # task RANK NODE [VAR=VALUE...]: tfd-slurm-task's output and status
  local rank=$1 node=$2
  shift 2
  out=$(env -i PATH=/usr/bin:/bin TFD_CLUSTER='{}' TFD_SLURM_LAYOUT="$demo_layout" \
        SLURM_PROCID="$rank" SLURMD_NODENAME="$node" "$@" "$work/taskbin/tfd-slurm-task" 2>&1)
  rc=$?
}
task 2 node02
expect "rank 2 runs tfd as worker task 1 on its port" \
  "0|--job worker --task 1 --listen 0.0.0.0:8888 gpus=none threads=unset" "$rc|$out"
task 3 node02 TFD_SLURM_GPUS_PER_TASK=2 TFD_SLURM_LISTEN_HOST=10.0.0.5
expect "rank 3, 2 GPUs per task: the node's GPUs 2 and 3; the listen host as set" \
  "0|--job worker --task 2 --listen 10.0.0.5:8889 gpus=2,3 threads=unset" "$rc|$out"
# --cpus-per-task: tfd is told its share only where srun did not bind the
# task to that many CPUs (a bound task sizes its pool by its own affinity).
cpus_here=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
first_cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
task 2 node02 SLURM_CPUS_PER_TASK=$((cpus_here + 1))
expect "an unbound task is told its share of the node (TFD_THREADS)" \
  "0|threads=$((cpus_here + 1))" "$rc|${out##* }"
task 2 node02 SLURM_CPUS_PER_TASK=1 taskset -c "$first_cpu"
expect "a task bound to its one CPU is not: tfd sizes by its affinity and runs kernels inline" \
  "0|threads=unset" "$rc|${out##* }"
task 2 node02 SLURM_CPUS_PER_TASK=1 TFD_THREADS=3
expect "a TFD_THREADS of the user's own stays" "0|threads=3" "$rc|${out##* }"
task 1 node02
if [[ $rc -eq 2 && $out == *"runs on node02 but the cluster spec puts it on node01"* ]]; then
  pass "a rank on another node than the spec's is refused (exit 2)"
else
  fail "a rank on another node than the spec's is refused (exit $rc, '$out')"
fi
task 4 node02
if [[ $rc -eq 2 && $out == *"rank 4 is not in the layout of 4 tasks"* ]]; then
  pass "a rank past the layout is refused (exit 2)"
else
  fail "a rank past the layout is refused (exit $rc, '$out')"
fi

# The whole script, on this machine: ranks on 127.0.0.1, a stand-in srun.
bin=$work/bin
mkdir -p "$bin" "$work/data"
ln -s "$(realpath "$TFD")" "$bin/tfd"
ln -s "$(realpath "$TFCTL")" "$bin/tfctl"
cp "$SRC/deploy/slurm/tfd-slurm-task" "$bin/"
cat >"$work/srun" <<SRUN
#!/usr/bin/env bash
# Stands in for srun: runs SLURM_NTASKS copies of the command here, each with
# its SLURM_PROCID, output to --output's pattern (%t: the rank); passes
# SIGTERM on and waits for them.
output=/dev/null
while [[ \$1 == --* ]]; do
  case \$1 in --output=*) output=\${1#--output=} ;; esac
  shift
done
pids=()
for ((rank = 0; rank < SLURM_NTASKS; rank++)); do
  SLURM_PROCID=\$rank SLURMD_NODENAME=127.0.0.1 "\$@" >"\${output//%t/\$rank}" 2>&1 &
  pids+=(\$!)
  echo \$! >>"$work/srun.pids"
done
trap 'kill -TERM "\${pids[@]}" 2>/dev/null' TERM INT
for pid in "\${pids[@]}"; do
  while kill -0 "\$pid" 2>/dev/null; do wait "\$pid"; done
done
SRUN
chmod +x "$work/srun"
ln -s "$work/srun" "$bin/srun"
# MNIST-shaped data (class k lights a band of rows) and the graph for it.
python3 - "$work/data" <<'PY'
import random, struct, sys
def write(prefix, n, seed):
    rng = random.Random(seed)
    images = bytearray(struct.pack(">IIII", 0x803, n, 28, 28))
    labels = bytearray(struct.pack(">II", 0x801, n))
    for _ in range(n):
        k = rng.randrange(10)
        labels.append(k)
        for r in range(28):
            lit = 2 * k + 2 <= r < 2 * k + 6
            images += bytes(200 + rng.randrange(56) if lit else rng.randrange(60) for _ in range(28))
    open("%s/%s-images-idx3-ubyte" % (sys.argv[1], prefix), "wb").write(images)
    open("%s/%s-labels-idx1-ubyte" % (sys.argv[1], prefix), "wb").write(labels)
write("train", 1200, 1)
write("t10k", 200, 2)
PY
"$MNIST_GRAPH" --workers 1 --epochs 1 --batch-size 50 --test-batch 200 -o "$work/mnist.capnp" >/dev/null

# Two consecutive ports on 127.0.0.1 for the base (the tasks take the base
# and the next), reserved as every test's are: held until this script and
# the tasks it starts are gone. A base whose next port is taken stays held
# until then too, unused.
source "$SRC/scripts/port-reservation.sh"
base=
for _ in $(seq 1 50); do
  candidate=$(reserve_port) || break
  if try_reserve_port $((candidate + 1)); then
    base=$candidate
    break
  fi
done
if [[ -z $base ]]; then
  fail "two consecutive loopback ports reserved for the tasks"
  tap_done
fi
run=$work/run
started=$(date +%s)
(
  cd "$work" || exit 1
  env -u TFD_CLUSTER PATH="$bin:$PATH" SLURM_JOB_ID=4242 SLURM_SUBMIT_DIR="$work" \
    SLURM_JOB_NODELIST=127.0.0.1 SLURM_TASKS_PER_NODE=2 SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=1 \
    TFD_SLURM_PORT_BASE="$base" TFD_SLURM_LISTEN_HOST=127.0.0.1 TFD_RUN_DIR="$run" \
    TFD_DATA_DIR="$work/data" TFD_SLURM_START_TIMEOUT=60 \
    timeout 300 bash "$SBATCH" "$work/mnist.capnp" --output json
) >"$work/sbatch.out" 2>"$work/sbatch.err"
rc=$?
if [[ $rc -eq 0 ]] && grep -q '"event": *"done"' "$work/sbatch.out"; then
  pass "tfd.sbatch trains on its own cluster (1 ps, 1 worker) in $(($(date +%s) - started)) s"
else
  fail "tfd.sbatch trains on its own cluster (exit $rc)"
  for f in "$work/sbatch.out" "$work/sbatch.err" "$run"/tfd-*.log "$run"/train-*; do
    [[ -f $f ]] && { echo "# --- $f"; tail -n 20 "$f" | sed 's/^/# /'; }
  done
fi
expect "the cluster it printed" \
  "tfd.sbatch: cluster {\"ps\": [\"127.0.0.1:$base\"], \"worker\": [\"127.0.0.1:$((base + 1))\"]}; logs in $run" \
  "$(head -n1 "$work/sbatch.out")"
if grep -q "\[/job:ps/replica:0/task:0\] listening on 127.0.0.1:$base" "$run/tfd-0.log" 2>/dev/null &&
   grep -q "\[/job:worker/replica:0/task:0\] listening on 127.0.0.1:$((base + 1))" "$run/tfd-1.log" 2>/dev/null; then
  pass "rank 0 served as ps 0, rank 1 as worker 0, each on its port"
else
  fail "rank 0 served as ps 0, rank 1 as worker 0, each on its port"
fi
if grep -q "stopped" "$run/tfd-0.log" 2>/dev/null && grep -q "stopped" "$run/tfd-1.log" 2>/dev/null; then
  pass "both tfd stopped cleanly when the script ended"
else
  fail "both tfd stopped cleanly when the script ended"
fi
left=0
touch "$work/srun.pids"
while read -r pid; do kill -0 "$pid" 2>/dev/null && left=$((left + 1)); done <"$work/srun.pids"
expect "the stand-in srun started 2 tasks" 2 "$(wc -l <"$work/srun.pids")"
expect "no task is left running" 0 "$left"
expect "the token file is the user's alone" 600 "$(stat -c %a "$run/token" 2>/dev/null)"

tap_done
