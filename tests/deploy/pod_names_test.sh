#!/usr/bin/env bash
# A task whose cluster names do not resolve yet, as in a Kubernetes pod
# before its headless Service publishes it: tfd must come up on its port
# anyway, serve, fail steps that need an unreachable peer with UNAVAILABLE
# naming it (within the deadline), and reach the peer once its name
# resolves — without a restart.
#
# Runs in network and mount namespaces it creates (unshare -rnm): only a
# loopback interface, and a private /etc/hosts the test edits.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

: "${TFD:?TFD must name the tfd binary}" "${TFCTL:?TFCTL must name the tfctl binary}"

if [[ -z "${TFD_IN_NAMESPACE:-}" ]]; then
  if ! unshare -rnm true 2>/dev/null; then
    skip "a pod's names resolving late" "unshare -rnm is not permitted here (user namespaces off)"
    tap_done
  fi
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  printf '127.0.0.1 localhost\n' >"$dir/hosts"
  TFD_IN_NAMESPACE=1 HOSTS="$dir/hosts" WORK="$dir" \
    timeout 120 unshare -rnm bash "${BASH_SOURCE[0]}"
  exit $?
fi

# Inside the namespaces: lo up, our hosts file in place of /etc/hosts.
mount --bind "$HOSTS" /etc/hosts || { fail "bind-mount a private /etc/hosts"; tap_done; }
ip link set lo up || { fail "bring up lo in the namespace"; tap_done; }

ps=ps-0.tfd-pod-test.invalid
worker=worker-0.tfd-pod-test.invalid
spec="{\"ps\": [\"$ps:2222\"], \"worker\": [\"$worker:2223\"]}"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
}
trap cleanup EXIT

# wait_for FILE TEXT: up to 10 s for TEXT to appear in FILE.
wait_for() {
  for _ in $(seq 100); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

check "the names do not resolve yet" bash -c "! getent hosts $ps && ! getent hosts $worker"

"$TFD" --cluster "$spec" --job ps --task 0 --step-timeout 3 2>"$WORK/ps.log" &
pids+=($!)
check "ps:0 listens on every interface of its port though its name does not resolve" \
  wait_for "$WORK/ps.log" "listening on *:2222"
check "it warns that it serves beyond loopback without a token" \
  wait_for "$WORK/ps.log" "beyond loopback without --auth-token-file"
check "ps:0 is still running" kill -0 "${pids[0]}"
# Its table is not TAP: kept out of the output meson reads.
quiet() { "$@" >/dev/null; }
check "tfctl reaches it at 127.0.0.1:2222" \
  quiet "$TFCTL" status --cluster "{\"ps\": [\"127.0.0.1:2222\"]}" --timeout 5

# A step with a node on worker:0, whose name does not resolve yet.
cat >"$WORK/graph.txt" <<'EOF'
( nodes = [
    ( name = "x", op = "Const", device = "/job:ps/task:0",
      attrs = [ (name = "dtype", value = (type = float32)),
                (name = "value", value = (tensor = (dtype = float32, shape = [2],
                                                    floatVal = [1.5, 2.5]))) ] ),
    ( name = "y", op = "Identity", inputs = ["x"], device = "/job:worker/task:0" )
  ] )
EOF
start=$SECONDS
out=$("$TFCTL" submit "$WORK/graph.txt" --target 127.0.0.1:2222 --fetch y --step-timeout 3 \
      --timeout 20 2>&1)
rc=$?
took=$((SECONDS - start))
expect "a step that needs the unresolved worker fails" 1 "$rc"
check "with UNAVAILABLE naming worker:0: $(head -c 160 <<<"$out" | tr '\n' ' ')" \
  grep -q "UNAVAILABLE.*job:worker/replica:0/task:0" <<<"$out"
check "within its step deadline and the client's timeout ($took s)" test "$took" -le 15
check "ps:0 keeps serving after that step" kill -0 "${pids[0]}"

# The names resolve now (the pods became ready); the worker starts.
printf '127.0.0.1 %s\n127.0.0.1 %s\n' "$ps" "$worker" >>/etc/hosts
"$TFD" --cluster "$spec" --job worker --task 0 2>"$WORK/worker.log" &
pids+=($!)
check "worker:0 listens on every interface of its port" \
  wait_for "$WORK/worker.log" "listening on *:2223"
for attempt in 1 2 3; do
  out=$("$TFCTL" submit "$WORK/graph.txt" --target 127.0.0.1:2222 --fetch y --step-timeout 5 \
        --timeout 20 --output json 2>&1) && break
  sleep 1
done
check "the same step now runs across both tasks: $(head -c 160 <<<"$out" | tr '\n' ' ')" \
  grep -q '1.5' <<<"$out"
check "and fetches the worker's copy" grep -q '2.5' <<<"$out"
check "ps:0 logged no exit" bash -c "! grep -q 'cannot listen' '$WORK/ps.log'"

tap_done
