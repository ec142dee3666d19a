#!/usr/bin/env bash
# tfctl against one real tfd on loopback: `tfctl health` says a serving task
# is up (exit 0) and a dead port is not (exit 1, naming the address and
# why), with the token and --self as a container's probe uses them; and a
# feed too large for one RPC message is refused naming the limit and the
# flag, not an "integer overflow" from inside Cap'n Proto; tfd raises its
# soft open-file limit to the hard one. Output is TAP.
#
#   TFCTL=build/cli/tfctl TFD=build/daemon/tfd SRC_ROOT=. bash tests/cli/live_task_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
TFD=${TFD:?set TFD to the tfd binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
source "$SRC/scripts/cluster-lib.sh"
work=$(mktemp -d)
tfd_pid=""
cleanup() {
  if [[ -n $tfd_pid ]]; then
    kill "$tfd_pid" 2>/dev/null
    wait "$tfd_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

count=0
failures=0
out="" err="" rc=0
pass() { count=$((count + 1)); echo "ok $count - $1"; }
fail() {
  count=$((count + 1)); failures=$((failures + 1))
  echo "not ok $count - $1"
  shift
  local line
  for line in "$@"; do echo "#   ${line//$'\n'/$'\n'#   }"; done
}
# tfctl ARGS...: runs the binary; sets $out, $err and $rc.
tfctl() {
  "$TFCTL" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
  rc=$?
  out=$(cat "$work/stdout")
  err=$(cat "$work/stderr")
}
# expect NAME STATUS ERE: the last tfctl exited STATUS and its stdout and
# stderr together match the extended regex ERE.
expect() {
  if [[ $rc -eq $2 ]] && grep -Eq -- "$3" <<<"$out"$'\n'"$err"; then
    pass "$1"
  else
    fail "$1 (exit $rc, expected $2 and /$3/)" "stdout: $out" "stderr: $err"
  fi
}

cluster_spec ps=1
address=$(address ps 0)
port=${address##*:}
# Tokens as tfd and tfctl take them: 128 bits and more, readable by their owner only.
umask 077
echo "4c6976652d7461736b2d746573742d746f6b656e2d3132" >"$work/token"
echo "77726f6e672d746f6b656e2d666f722d746865207465" >"$work/wrong"
# Started with a soft open-file limit below the hard one, as login shells
# start programs: tfd raises it (exec keeps the subshell's pid).
(ulimit -S -n 512 && exec "$TFD" --cluster "$spec" --job ps --task 0 \
  --auth-token-file "$work/token" --threads 1 >"$work/tfd.log" 2>&1 </dev/null) &
tfd_pid=$!

# health waits for the task within --timeout (it retries while the port is
# closed): the first call is also the wait for tfd to come up.
tfctl health --target "$address" --token-file "$work/token" --timeout 30
expect "health of a serving task: exit 0, naming it" 0 \
  "^ok: /job:ps/replica:0/task:0 serving at $address"
read -r soft hard < <(awk '/^Max open files/ {print $4, $5}' "/proc/$tfd_pid/limits")
if [[ $soft == "$hard" && $soft != 512 ]]; then
  pass "tfd raised its soft open-file limit from 512 to the hard one ($hard)"
else
  fail "tfd raises its soft open-file limit from 512 to the hard one" "soft $soft, hard $hard"
fi
tfctl health --target "$address" --token-file "$work/token" --output json
expect "health --output json" 0 \
  "^\\{\"healthy\": true, \"task\": \"/job:ps/replica:0/task:0\", \"address\": \"$address\""
TFD_AUTH_TOKEN_FILE="$work/token" "$TFCTL" health --target "$address" >"$work/stdout" 2>"$work/stderr"
rc=$? out=$(cat "$work/stdout") err=$(cat "$work/stderr")
expect "health takes the token from TFD_AUTH_TOKEN_FILE, as tfd does" 0 "^ok: "
tfctl health --target "$address" --token-file "$work/wrong" --timeout 5
expect "health with a wrong token: exit 1, UNAUTHENTICATED" 1 \
  "error: UNAUTHENTICATED: health of $address: "
# --self: where this host's tfd listens, from the variables tfd reads.
TFD_CLUSTER=$spec TFD_JOB=ps TFD_TASK=0 TFD_AUTH_TOKEN_FILE="$work/token" \
  "$TFCTL" health --self >"$work/stdout" 2>"$work/stderr"
rc=$? out=$(cat "$work/stdout") err=$(cat "$work/stderr")
expect "health --self finds the task from TFD_CLUSTER, TFD_JOB and TFD_TASK" 0 "serving at $address"
TFD_LISTEN="0.0.0.0:$port" TFD_AUTH_TOKEN_FILE="$work/token" \
  "$TFCTL" health --self >"$work/stdout" 2>"$work/stderr"
rc=$? out=$(cat "$work/stdout") err=$(cat "$work/stderr")
expect "health --self dials a wildcard TFD_LISTEN on loopback" 0 "serving at 127.0.0.1:$port"
env -u TF_CONFIG -u TFD_CLUSTER -u TFD_LISTEN "$TFCTL" health --self >"$work/stdout" 2>"$work/stderr"
rc=$? out=$(cat "$work/stdout") err=$(cat "$work/stderr")
expect "health --self without tfd's variables says what it needs" 1 \
  "error: INVALID_ARGUMENT: --self: cannot tell where this host's tfd listens.*TFD_LISTEN"

dead=$(free_port)
tfctl health --target "127.0.0.1:$dead" --timeout 1
expect "health of a dead port: exit 1, UNAVAILABLE naming the address" 1 \
  "^error: UNAVAILABLE: health of 127.0.0.1:$dead: cannot reach 127.0.0.1:$dead within 1 s"
expect_usage() {
  expect "$1" 2 "^error: INVALID_ARGUMENT: $2"
}
tfctl health --target "$address" --self
expect_usage "health with both --target and --self is a usage error" "give --target or --self"

# A .npy one byte over what one Cap'n Proto Data field holds (2^29 - 1
# bytes): float32 [67108864, 2] is 2^29 bytes. The body is a hole in a
# sparse file, so the test writes 128 bytes.
header="{'descr': '<f4', 'fortran_order': False, 'shape': (67108864, 2), }"
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%-117s\n' "$header"; } >"$work/big.npy"
truncate -s $((128 + (1 << 29))) "$work/big.npy"
tfctl submit "$SRC/examples/graphs/placeholder.txt" --target "$address" \
  --token-file "$work/token" --feed "x=@$work/big.npy" --fetch y
expect "a feed over Cap'n Proto's limit is refused naming the limit and the flag" 1 \
  "^error: INVALID_ARGUMENT: .*feed 'x': float32\\[67108864, 2\\] is 536870912 bytes; .* at most 536870911 bytes .*--max-tensor-bytes"
if [[ "$err" != *"integer overflow"* ]]; then pass "and not as an integer overflow"
else fail "and not as an integer overflow" "stderr: $err"; fi
tfctl health --target "$address" --token-file "$work/token" --timeout 5
expect "the task still serves after the refused feed" 0 "^ok: "

# vars list over a cluster with a task down: what the others hold, and the
# one down named, exit 1 (an operator looks at variables mid-incident).
tfctl submit "$SRC/examples/graphs/variables.txt" --target "$address" \
  --token-file "$work/token" --init init --fetch counter
expect "a variable made on the task" 0 "^counter = int32\\[\\] 0"
partly="{\"ps\": [\"$address\"], \"worker\": [\"127.0.0.1:$dead\"]}"
tfctl vars list --cluster "$partly" --token-file "$work/token" --timeout 1
expect "vars list --cluster lists the variables of the tasks that answer" 1 \
  "^counter +int32\\[\\] +initialized +/job:ps/replica:0/task:0/device:CPU:0"
expect "and names each task that did not, exit 1" 1 \
  "^/job:worker/replica:0/task:0 \\(127.0.0.1:$dead\\): UNAVAILABLE: "
tfctl vars list --cluster "$partly" --token-file "$work/token" --timeout 1 --output json
expect "vars list --output json has them under \"unreachable\"" 1 \
  "\"unreachable\": \\[\\{\"task\": \"/job:worker/replica:0/task:0\", \"address\": \"127.0.0.1:$dead\", \"state\": \"down\""

kill "$tfd_pid"
wait "$tfd_pid" 2>/dev/null
tfd_pid=""
tfctl health --target "$address" --token-file "$work/token" --timeout 1
expect "health after the task stopped: exit 1" 1 "^error: UNAVAILABLE: health of $address"

echo "1..$count"
[[ $failures -eq 0 ]]
